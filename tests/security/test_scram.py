"""SCRAM and PLAIN servers and the per-connection authenticator, sans-IO (no sockets)."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest

from shim.apis._pace import Pacer
from shim.errors import ErrorCode
from shim.security.credentials import CredentialStore
from shim.security.plain import PlainServer
from shim.security.scram import SaslFailure, ScramServer, make_credential
from shim.security.session import SaslAuthenticator, State

# RFC 7677, section 3: user "user", password "pencil"
RFC7677_SALT = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
RFC7677_CLIENT_FIRST = b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
RFC7677_SERVER_NONCE = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
RFC7677_SERVER_FIRST = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
RFC7677_CLIENT_FINAL = (b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                        b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
RFC7677_SERVER_FINAL = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def rfc_server(password: str = "pencil") -> ScramServer:
    credential = make_credential("SCRAM-SHA-256", password, 4096, RFC7677_SALT)
    return ScramServer("SCRAM-SHA-256", {"user": credential}.get, nonce=RFC7677_SERVER_NONCE)


def test_rfc7677_exchange():
    server = rfc_server()
    assert server.evaluate(RFC7677_CLIENT_FIRST) == RFC7677_SERVER_FIRST
    assert not server.complete
    assert server.evaluate(RFC7677_CLIENT_FINAL) == RFC7677_SERVER_FINAL
    assert server.complete and server.authorization_id == "user"


def test_rfc7677_proof_of_another_password_fails():
    server = rfc_server("not-pencil")
    server.evaluate(RFC7677_CLIENT_FIRST)
    with pytest.raises(SaslFailure) as failure:
        server.evaluate(RFC7677_CLIENT_FINAL)
    assert failure.value.client_message is None  # the client gets Kafka's generic text
    assert not server.complete


def scram_client(mechanism: str, user: str, password: str, server: ScramServer, nonce: str = "clientnonce",
                 final_nonce=lambda client, server_first: server_first) -> bytes:
    """A client per RFC 5802; returns the server's final message. ``final_nonce`` makes the nonce
    of its final message from its own and the server-first one (librdkafka < 2.6.1: both joined)."""
    digest = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}[mechanism]
    bare = f"n={user},r={nonce}"
    server_first = server.evaluate(f"n,,{bare}".encode()).decode()
    fields = dict(item.split("=", 1) for item in server_first.split(","))
    salted = hashlib.pbkdf2_hmac(digest, password.encode(), base64.b64decode(fields["s"]), int(fields["i"]))
    client_key = hmac.new(salted, b"Client Key", digest).digest()
    without_proof = f"c=biws,r={final_nonce(nonce, fields['r'])}"
    auth = f"{bare},{server_first},{without_proof}".encode()
    signature = hmac.new(hashlib.new(digest, client_key).digest(), auth, digest).digest()
    proof = base64.b64encode(bytes(a ^ b for a, b in zip(client_key, signature))).decode()
    return server.evaluate(f"{without_proof},p={proof}".encode())


def test_scram_sha512_with_a_stored_credential_and_the_server_signature():
    credential = make_credential("SCRAM-SHA-512", "s3cret", 8192)
    server = ScramServer("SCRAM-SHA-512", {"bob": credential}.get)
    final = scram_client("SCRAM-SHA-512", "bob", "s3cret", server)
    salted = hashlib.pbkdf2_hmac("sha512", b"s3cret", credential.salt, 8192)
    assert hmac.new(salted, b"Server Key", "sha512").digest() == credential.server_key
    assert final.startswith(b"v=") and server.complete


LIBRDKAFKA_BEFORE_2_6_1 = lambda client, server_first: client + server_first  # noqa: E731
CLIENT_ONLY = lambda client, server_first: client  # noqa: E731


@pytest.mark.parametrize("release, doubled, client_only", [
    ("3.7", True, True), ("3.8", True, True), ("3.9", True, False), ("4.0", False, False), ("4.1", False, False)])
def test_client_final_nonce_checked_as_each_kafka_release_checks_it(release, doubled, client_only):
    """CVE-2024-56128: 3.7.0/3.8.0 do not compare the client-final nonce; 3.8.1 and 3.9 want it to end
    with the server-first nonce (librdkafka < 2.6.1 sends its own nonce again in front); 4.0 wants it equal."""
    from shim.protocol.kafka_releases import RELEASES

    check = RELEASES[release].scram_nonce_check
    credential = make_credential("SCRAM-SHA-256", "pw")

    def authenticates(final_nonce) -> bool:
        server = ScramServer("SCRAM-SHA-256", {"u": credential}.get, nonce_check=check)
        try:
            return scram_client("SCRAM-SHA-256", "u", "pw", server, final_nonce=final_nonce).startswith(b"v=")
        except SaslFailure as failure:
            assert str(failure) == "Invalid client nonce in the final client message."
            return False

    assert authenticates(lambda client, server_first: server_first)
    assert authenticates(LIBRDKAFKA_BEFORE_2_6_1) == doubled
    assert authenticates(CLIENT_ONLY) == client_only


@pytest.mark.parametrize("token", [
    b"", b"\xff\xfe", b"garbage", b"y,,n=user,r=abc", b"n,,n=,r=abc", b"n,,n=user", b"\x00" * 100,
])
def test_malformed_client_first_fails(token):
    with pytest.raises(SaslFailure):
        rfc_server().evaluate(token)


@pytest.mark.parametrize("final", [
    b"", b"c=biws", b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=!!",
    b"c=biws,r=other,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
    b"c=eSws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
    b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=AAAA",
])
def test_malformed_or_wrong_client_final_fails(final):
    server = rfc_server()
    server.evaluate(RFC7677_CLIENT_FIRST)
    with pytest.raises(SaslFailure):
        server.evaluate(final)
    with pytest.raises(SaslFailure):  # and the exchange is over
        server.evaluate(RFC7677_CLIENT_FINAL)


def test_unknown_user_and_foreign_authzid():
    with pytest.raises(SaslFailure) as unknown:
        rfc_server().evaluate(b"n,,n=nobody,r=abc")
    assert unknown.value.client_message is None
    with pytest.raises(SaslFailure) as authzid:
        rfc_server().evaluate(b"n,a=admin,n=user,r=abc")
    assert authzid.value.client_message == ("Authentication failed: Client requested an authorization id that is "
                                            "different from username")


@pytest.mark.parametrize("token, message", [
    (b"\x00alice\x00wrong", "Authentication failed: Invalid username or password"),
    (b"\x00nobody\x00pw", "Authentication failed: Invalid username or password"),
    (b"bob\x00alice\x00pw", "Authentication failed: Client requested an authorization id that is different "
                            "from username"),
    (b"\x00\x00pw", None), (b"\x00alice\x00", None), (b"garbage", None), (b"\xff\x00\xfe", None),
])
def test_plain_failures(token, message):
    server = PlainServer(lambda u, p: (u, p) == ("alice", "pw"))
    with pytest.raises(SaslFailure) as failure:
        server.evaluate(token)
    assert failure.value.client_message == message and not server.complete


def test_plain_success():
    server = PlainServer(lambda u, p: (u, p) == ("alice", "pw"))
    assert server.evaluate(b"alice\x00alice\x00pw") == b"" and server.authorization_id == "alice"


# -- the authenticator -----------------------------------------------------------------------------


@pytest.fixture
def store(tmp_path):
    return CredentialStore(tmp_path, ("alice:pw",))


def test_before_authentication_only_versions_and_handshake_are_served(store):
    auth = SaslAuthenticator("SASL_PLAINTEXT", ("PLAIN",), store)
    assert auth.admits(18, 0)
    auth.served(18)
    assert not auth.admits(18, 0) and auth.failed  # a second ApiVersions closes, as Kafka


def test_a_metadata_request_before_authentication_closes(store):
    auth = SaslAuthenticator("SASL_PLAINTEXT", ("PLAIN",), store)
    assert not auth.admits(3, 0) and auth.failed


def test_unsupported_mechanism_is_answered_then_fails(store):
    auth = SaslAuthenticator("SASL_PLAINTEXT", ("PLAIN", "SCRAM-SHA-512"), store)
    assert auth.handshake("GSSAPI", 1) == ErrorCode.unsupported_sasl_mechanism
    assert auth.failed


def test_plain_over_sasl_authenticate_then_everything_is_served(store):
    auth = SaslAuthenticator("SASL_PLAINTEXT", ("PLAIN",), store)
    assert auth.handshake("PLAIN", 1) == ErrorCode.none
    assert not auth.admits(3, 0)  # Metadata mid-exchange closes
    auth = SaslAuthenticator("SASL_PLAINTEXT", ("PLAIN",), store)
    auth.handshake("PLAIN", 1)
    assert auth.authenticate(b"\x00alice\x00pw", 2, 0) == (ErrorCode.none, None, b"", 0)
    assert auth.complete and auth.principal == "User:alice" and auth.admits(3, 0)
    code, message, _, _ = auth.authenticate(b"\x00alice\x00pw", 2, 0)
    assert code == ErrorCode.illegal_sasl_state


def test_wrong_scram_password_answers_kafkas_generic_message(store):
    auth = SaslAuthenticator("SASL_SSL", ("SCRAM-SHA-512",), store)
    auth.handshake("SCRAM-SHA-512", 1)
    code, _, first, _ = auth.authenticate(b"n,,n=alice,r=abc", 1, 0)
    assert code == ErrorCode.none and first.startswith(b"r=abc")
    code, message, _, _ = auth.authenticate(b"c=biws,r=" + first[2:].split(b",")[0] + b",p=AAAA", 1, 0)
    assert code == ErrorCode.sasl_authentication_failed and auth.failed
    assert message == "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"


def test_v0_handshake_takes_raw_tokens(store):
    auth = SaslAuthenticator("SASL_PLAINTEXT", ("PLAIN",), store)
    auth.handshake("PLAIN", 0)
    assert auth.raw_tokens
    assert auth.raw_token(b"\x00alice\x00pw", 0) == b""
    assert auth.complete and not auth.raw_tokens
    bad = SaslAuthenticator("SASL_PLAINTEXT", ("PLAIN",), store)
    bad.handshake("PLAIN", 0)
    with pytest.raises(SaslFailure):
        bad.raw_token(b"\x00alice\x00nope", 0)
    assert bad.failed


def test_reauthentication_kip368(store):
    auth = SaslAuthenticator("SASL_PLAINTEXT", ("PLAIN",), store, max_reauth_ms=1000)
    auth.handshake("PLAIN", 1)
    assert auth.authenticate(b"\x00alice\x00pw", 1, 5000)[3] == 1000
    assert auth.admits(3, 5999)
    assert auth.admits(17, 6000)  # a handshake after expiry starts re-authentication
    assert auth.handshake("PLAIN", 1) == ErrorCode.none and auth.state is State.REAUTHENTICATE
    assert not auth.admits(3, 6000)  # nothing else until it completes
    auth = SaslAuthenticator("SASL_PLAINTEXT", ("PLAIN",), store, max_reauth_ms=1000)
    auth.handshake("PLAIN", 1)
    auth.authenticate(b"\x00alice\x00pw", 1, 5000)
    assert auth.handshake("PLAIN", 1) == ErrorCode.none
    assert auth.authenticate(b"\x00alice\x00pw", 1, 5500)[0] == ErrorCode.none
    assert auth.session_expires_ms == 6500 and auth.admits(3, 6000)
    assert not auth.admits(3, 6500) and auth.failed  # expired without re-authenticating: closed


def test_a_client_without_reauthentication_is_closed_when_its_session_ends(store):
    # Kafka: SocketServer closes an expired channel whatever SaslAuthenticate version it used
    auth = SaslAuthenticator("SASL_PLAINTEXT", ("PLAIN",), store, max_reauth_ms=1000)
    auth.handshake("PLAIN", 1)
    assert auth.authenticate(b"\x00alice\x00pw", 0, 0)[0] == ErrorCode.none  # SaslAuthenticate v0
    assert auth.admits(3, 999)
    assert not auth.admits(3, 1000) and auth.failed


def test_without_connections_max_reauth_ms_a_session_never_ends(store):
    auth = SaslAuthenticator("SASL_PLAINTEXT", ("PLAIN",), store)
    auth.handshake("PLAIN", 1)
    assert auth.authenticate(b"\x00alice\x00pw", 1, 0)[3] == 0
    assert auth.admits(3, 10**12)
    assert auth.handshake("PLAIN", 1) == ErrorCode.illegal_sasl_state  # no re-authentication to begin


async def test_stored_credentials_survive_a_restart(tmp_path):
    store = CredentialStore(tmp_path)
    await store.apply({("SCRAM-SHA-256", "carol"): make_credential("SCRAM-SHA-256", "pw", 4096)}, [], Pacer())
    again = CredentialStore(tmp_path)
    server = ScramServer("SCRAM-SHA-256", lambda u: again.scram("SCRAM-SHA-256", u))
    assert scram_client("SCRAM-SHA-256", "carol", "pw", server).startswith(b"v=")
    assert again.users() == {"carol": [("SCRAM-SHA-256", 4096)]}


async def test_alter_validates_as_kafkas_scram_control_manager(tmp_path):
    store = CredentialStore(tmp_path, ("alice:pw",))
    salted = b"\x01" * 64
    results = await store.alter(
        deletions=[("alice", 1), ("ghost", 2), ("", 1)],
        upsertions=[("alice", 2, 4096, b"s", salted), ("dave", 2, 4096, b"s", salted), ("erin", 3, 4096, b"s", salted),
                    ("frank", 1, 4095, b"s", salted), ("gina", 1, 16385, b"s", salted)],
        pace=Pacer())
    assert {u: (code, message) for u, code, message in results} == {
        "alice": (ErrorCode.duplicate_resource, "A user credential cannot be altered twice in the same request"),
        "ghost": (ErrorCode.resource_not_found, "Attempt to delete a user credential that does not exist"),
        "": (ErrorCode.unacceptable_credential, "Username must not be empty"),
        "dave": (ErrorCode.none, None),
        "erin": (ErrorCode.unsupported_sasl_mechanism, "Unknown SCRAM mechanism"),
        "frank": (ErrorCode.unacceptable_credential, "Too few iterations"),
        "gina": (ErrorCode.unacceptable_credential, "Too many iterations"),
    }
    assert CredentialStore(tmp_path).users() == {"dave": [("SCRAM-SHA-512", 4096)]}  # alice untouched, dave durable


async def test_describe_as_kafkas_scram_image(tmp_path):
    store = CredentialStore(tmp_path, ("alice:pw",))
    assert await store.describe(None, Pacer()) == [("alice", ErrorCode.none, None, [(1, 4096), (2, 4096)])]
    assert await store.describe(["bob", "alice", "alice"], Pacer()) == [
        ("bob", ErrorCode.resource_not_found, "Attempt to describe a user credential that does not exist: bob", []),
        ("alice", ErrorCode.duplicate_resource,
         "Cannot describe SCRAM credentials for the same user twice in a single request: alice", []),
    ]


def test_plain_users_from_kafkas_jaas_config(tmp_path):
    jaas = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
            'password="admin-secret" user_admin="admin-secret" user_bob="bob pw";')
    store = CredentialStore(tmp_path, ("carol:c",), plain_jaas=jaas)
    assert store.verify_plain("bob", "bob pw") and store.verify_plain("admin", "admin-secret")
    assert store.verify_plain("carol", "c") and not store.verify_plain("bob", "admin-secret")
    assert store.scram("SCRAM-SHA-256", "bob") is None  # JAAS PLAIN users are PLAIN's only, as in Kafka
    with pytest.raises(ValueError, match="PlainLoginModule"):
        CredentialStore(tmp_path, plain_jaas='org.apache.kafka.common.security.scram.ScramLoginModule required;')


def test_principal_of_a_certificate_as_x500principal_names_it():
    from shim.security.tls import principal_of

    subject = ((("countryName", "US"),), (("organizationName", "Acme, Inc."),),
               (("organizationalUnitName", "eng"), ("userId", "u1")), (("commonName", " #lead "),),
               (("emailAddress", "a@b.c"),))
    assert principal_of({"subject": subject}) == (
        "User:1.2.840.113549.1.9.1=#16056140622e63,CN=\\ \\#lead\\ ,OU=eng+UID=u1,O=Acme\\, Inc.,C=US")
    assert principal_of({}) == principal_of(None) == "User:ANONYMOUS"
