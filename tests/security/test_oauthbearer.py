"""SASL/OAUTHBEARER, sans-IO: the client message, Kafka's unsecured validation, JWKS-signed tokens,
the error-then-%x01 exchange and the session lifetime a token gives."""

from __future__ import annotations

import base64
import json

import pytest

from shim.errors import ErrorCode
from shim.security.oauthbearer import (InvalidToken, JwksValidator, OAuthBearerServer, UnsecuredValidator,
                                       parse_initial_response)
from shim.security.scram import SaslFailure
from shim.security.session import SaslAuthenticator

NOW_MS = 1_700_000_000_000
NOW = NOW_MS // 1000


def b64(obj, urlsafe: bool = False) -> str:
    raw = json.dumps(obj).encode()
    return (base64.urlsafe_b64encode(raw) if urlsafe else base64.b64encode(raw)).decode().rstrip("=")


def unsecured(claims: dict, header: dict | None = None) -> str:
    return f"{b64(header or {'alg': 'none'})}.{b64(claims)}."


def message(token: str, authzid: str = "", extensions: str = "") -> bytes:
    a = f"a={authzid}" if authzid else ""
    return f"n,{a},\x01auth=Bearer {token}\x01{extensions}\x01".encode()


GOOD = {"sub": "alice", "iat": NOW - 10, "exp": NOW + 3600, "scope": "read write"}


def test_the_client_message_as_kafkas_oauthbearer_client_initial_response():
    assert parse_initial_response(message("abc.def.", "alice", "traceId=42\x01")) == \
        ("alice", "abc.def.", {"traceId": "42"})
    for bad in (b"", b"y,,\x01auth=Bearer x\x01\x01", b"n,,\x01auth=Basic x\x01\x01", b"n,,\x01auth=Bearer\x01\x01",
                b"n,,\x01foo=bar\x01\x01", b"\xff"):
        with pytest.raises(SaslFailure):
            parse_initial_response(bad)


@pytest.mark.parametrize("claims, header", [
    ({**GOOD, "exp": NOW}, None),                          # now >= exp
    ({**GOOD, "iat": NOW + 1}, None),                      # issued in the future
    ({**GOOD, "iat": NOW + 7200}, None),                   # exp not after iat (and iat in the future)
    ({k: v for k, v in GOOD.items() if k != "exp"}, None),
    ({k: v for k, v in GOOD.items() if k != "sub"}, None),
    ({**GOOD, "sub": "  "}, None),
    ({**GOOD, "sub": 7}, None),
    ({**GOOD, "exp": "tomorrow"}, None),
    ({**GOOD, "scope": 5}, None),
    (GOOD, {"alg": "HS256"}),
])
def test_unsecured_validation_refuses_as_kafka_with_invalid_token(claims, header):
    with pytest.raises(InvalidToken) as refused:
        UnsecuredValidator({}).validate(unsecured(claims, header), NOW_MS)
    assert refused.value.json() == '{"status":"invalid_token"}'


def test_unsecured_token_shapes_kafka_refuses():
    v = UnsecuredValidator({})
    good = unsecured(GOOD)
    for token in (good + "sig", good.replace(".", "..", 1), good[:-1], "a.b.c.d",
                  f"{b64({'alg': 'none'})}.{b64(GOOD)[:-1]}!."):
        with pytest.raises(InvalidToken):
            v.validate(token, NOW_MS)


def test_unsecured_claims_are_read_with_javas_basic_base64_decoder():
    # OAuthBearerUnsecuredJws uses java.util.Base64.getDecoder(): '-' and '_' are not in its alphabet
    claims = {**GOOD, "note": "\u00fe\u00ff>>?"}
    assert "_" in b64(claims, urlsafe=True) or "-" in b64(claims, urlsafe=True)
    assert UnsecuredValidator({}).validate(unsecured(claims), NOW_MS).principal == "alice"
    with pytest.raises(InvalidToken):
        UnsecuredValidator({}).validate(f"{b64({'alg': 'none'})}.{b64(claims, urlsafe=True)}.", NOW_MS)


def test_extreme_times_are_clamped_as_java_and_non_json_numbers_refused():
    far = UnsecuredValidator({}).validate(unsecured({**GOOD, "exp": 1e300}), NOW_MS)
    assert far.lifetime_ms == 2**63 - 1  # Math.round: Long.MAX_VALUE
    auth = authenticator()
    assert auth.authenticate(message(unsecured({**GOOD, "exp": 1e300})), 1, NOW_MS)[3] == 2**63 - 1 - NOW_MS
    claims = base64.b64encode(b'{"sub": "alice", "exp": NaN}').decode()
    with pytest.raises(InvalidToken):
        UnsecuredValidator({}).validate(f"{b64({'alg': 'none'})}.{claims}.", NOW_MS)


def test_clock_skew_scope_and_principal_claim_options():
    v = UnsecuredValidator({"unsecuredValidatorAllowableClockSkewMs": "2000",
                            "unsecuredValidatorPrincipalClaimName": "client_id",
                            "unsecuredValidatorScopeClaimName": "scp",
                            "unsecuredValidatorRequiredScope": "read write"})
    token = v.validate(unsecured({"client_id": "svc", "iat": NOW + 1, "exp": NOW + 60, "scp": ["read", "write", " "]}),
                       NOW_MS)
    assert (token.principal, token.lifetime_ms, token.scope) == ("svc", (NOW + 60) * 1000, {"read", "write"})
    assert v.validate(unsecured({"client_id": "svc", "exp": NOW - 1, "scp": ["read", "write"]}), NOW_MS)
    with pytest.raises(InvalidToken) as refused:
        v.validate(unsecured({"client_id": "svc", "exp": NOW + 60, "scp": "read"}), NOW_MS)
    # Kafka: the failure scope is the required list as Java's List.toString writes it
    assert refused.value.json() == '{"status":"insufficient_scope", "scope":"[read, write]"}'
    with pytest.raises(ValueError):
        UnsecuredValidator({"unsecuredValidatorAllowableClockSkewMs": "-1"})


def test_a_refused_token_is_a_challenge_then_fails_on_the_clients_control_a():
    server = OAuthBearerServer(UnsecuredValidator({}), lambda: NOW_MS)
    assert server.evaluate(message(unsecured({**GOOD, "exp": NOW - 5}))) == b'{"status":"invalid_token"}'
    assert not server.complete
    with pytest.raises(SaslFailure) as failed:
        server.evaluate(b"\x01")
    assert failed.value.client_message == '{"status":"invalid_token"}'


def test_an_authorization_id_must_be_the_tokens_principal():
    server = OAuthBearerServer(UnsecuredValidator({}), lambda: NOW_MS)
    with pytest.raises(SaslFailure) as failed:
        server.evaluate(message(unsecured(GOOD), authzid="mallory"))
    assert failed.value.client_message == ("Authentication failed: Client requested an authorization id (mallory) "
                                           "that is different from the token's principal name (alice)")
    ok = OAuthBearerServer(UnsecuredValidator({}), lambda: NOW_MS)
    assert ok.evaluate(message(unsecured(GOOD), authzid="alice")) == b"" and ok.authorization_id == "alice"


def authenticator(max_reauth_ms: int = 0, validator=None) -> SaslAuthenticator:
    auth = SaslAuthenticator("SASL_PLAINTEXT", ("OAUTHBEARER",), None, max_reauth_ms,
                             oauth_validator=validator or UnsecuredValidator({}))
    assert auth.handshake("OAUTHBEARER", 1) == ErrorCode.none
    return auth


def test_saslauthenticate_answers_the_error_json_then_sasl_authentication_failed():
    auth = authenticator()
    code, msg, token, lifetime = auth.authenticate(message(unsecured({**GOOD, "sub": ""})), 1, NOW_MS)
    assert (code, msg, token, lifetime) == (ErrorCode.none, None, b'{"status":"invalid_token"}', 0)
    code, msg, token, _ = auth.authenticate(b"\x01", 1, NOW_MS)
    assert (code, msg, token) == (ErrorCode.sasl_authentication_failed, '{"status":"invalid_token"}', b"")
    assert auth.failed


@pytest.mark.parametrize("max_reauth_ms, lifetime", [(0, 3_600_000), (60_000, 60_000), (7_200_000, 3_600_000)])
def test_the_session_ends_with_the_token_or_connections_max_reauth_ms(max_reauth_ms, lifetime):
    auth = authenticator(max_reauth_ms)
    code, _, _, got = auth.authenticate(message(unsecured(GOOD)), 1, NOW_MS)
    assert (code, got, auth.principal) == (ErrorCode.none, lifetime, "User:alice")
    assert auth.admits(3, NOW_MS + lifetime - 1)
    assert auth.handshake("OAUTHBEARER", 1) == ErrorCode.none  # a session that ends may re-authenticate
    assert auth.authenticate(message(unsecured({**GOOD, "exp": NOW + 7200})), 1, NOW_MS + 1000)[0] == ErrorCode.none
    assert auth.reauthentications == 1
    expired = authenticator(max_reauth_ms)
    expired.authenticate(message(unsecured(GOOD)), 1, NOW_MS)
    assert not expired.admits(3, NOW_MS + lifetime) and expired.failed


# -- JWKS ------------------------------------------------------------------------------------------


def _int_b64(n: int) -> str:
    return base64.urlsafe_b64encode(n.to_bytes((n.bit_length() + 7) // 8, "big")).decode().rstrip("=")


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    from cryptography.hazmat.primitives.asymmetric import ec, rsa

    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ec_key = ec.generate_private_key(ec.SECP256R1())
    other = ec.generate_private_key(ec.SECP256R1())
    rn, en = rsa_key.public_key().public_numbers(), ec_key.public_key().public_numbers()
    jwks = {"keys": [{"kty": "RSA", "kid": "r1", "use": "sig", "n": _int_b64(rn.n), "e": _int_b64(rn.e)},
                     {"kty": "EC", "kid": "e1", "crv": "P-256", "x": _int_b64(en.x), "y": _int_b64(en.y)}]}
    path = tmp_path_factory.mktemp("jwks") / "jwks.json"
    path.write_text(json.dumps(jwks))
    return {"RS256": rsa_key, "ES256": ec_key, "other": other, "url": path.as_uri()}


def signed(key, alg: str, claims: dict, kid: str | None = None) -> str:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, padding
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

    header = {"alg": alg, "typ": "JWT", **({"kid": kid} if kid else {})}
    signing_input = f"{b64(header, True)}.{b64(claims, True)}".encode()
    if alg.startswith("ES"):
        r, s = decode_dss_signature(key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
        sig = r.to_bytes(32, "big") + s.to_bytes(32, "big")
    else:
        sig = key.sign(signing_input, padding.PKCS1v15(), hashes.SHA256())
    return signing_input.decode() + "." + base64.urlsafe_b64encode(sig).decode().rstrip("=")


def test_jwks_signed_tokens_rs256_and_es256(keys):
    v = JwksValidator(keys["url"])
    assert v.validate(signed(keys["RS256"], "RS256", GOOD, "r1"), NOW_MS).principal == "alice"
    token = v.validate(signed(keys["ES256"], "ES256", GOOD), NOW_MS)  # no kid: any fitting key
    assert (token.principal, token.scope, token.lifetime_ms) == ("alice", {"read write"}, (NOW + 3600) * 1000)


@pytest.mark.parametrize("case", ["other key", "wrong kid", "alg none", "no iat", "expired past skew", "not yet",
                                  "aud without expected", "tampered"])
def test_jwks_refusals_are_invalid_token(keys, case):
    v = JwksValidator(keys["url"])
    token = {
        "other key": lambda: signed(keys["other"], "ES256", GOOD),
        "wrong kid": lambda: signed(keys["ES256"], "ES256", GOOD, "r1"),
        "alg none": lambda: unsecured(GOOD) + "x",
        "no iat": lambda: signed(keys["ES256"], "ES256", {k: v for k, v in GOOD.items() if k != "iat"}),
        "expired past skew": lambda: signed(keys["ES256"], "ES256", {**GOOD, "exp": NOW - 30}),
        "not yet": lambda: signed(keys["ES256"], "ES256", {**GOOD, "nbf": NOW + 31}),
        "aud without expected": lambda: signed(keys["ES256"], "ES256", {**GOOD, "aud": "kafka"}),
        "tampered": lambda: signed(keys["ES256"], "ES256", GOOD).replace(b64(GOOD, True), b64({**GOOD, "sub": "root"},
                                                                                              True)),
    }[case]()
    with pytest.raises(InvalidToken) as refused:
        v.validate(token, NOW_MS)
    assert refused.value.json() == '{"status":"invalid_token"}'


def test_jwks_clock_skew_audience_and_issuer(keys):
    v = JwksValidator(keys["url"], audience="kafka,other", issuer="https://idp", clock_skew_s=30)
    claims = {**GOOD, "aud": ["kafka"], "iss": "https://idp", "exp": NOW - 29}
    assert v.validate(signed(keys["RS256"], "RS256", claims), NOW_MS).principal == "alice"
    for bad in ({**claims, "aud": "nobody"}, {**claims, "iss": "https://evil"}, {k: v for k, v in claims.items()
                                                                               if k != "aud"}):
        with pytest.raises(InvalidToken):
            v.validate(signed(keys["RS256"], "RS256", bad), NOW_MS)


async def test_a_token_living_past_what_a_timedelta_holds_answers_the_longest_lifetime(node):
    """A token whose exp lies 10**15 s ahead has a remaining life of about 2**60 ms, which Kafka
    answers as SessionLifetimeMs; making the answer's timedelta raised OverflowError and closed the
    connection as an internal error. It is answered as the longest duration a timedelta holds."""
    import struct

    from shim.apis.dispatch import dispatch_request
    from shim.protocol.messages import RequestHeader, encode_request, request_module

    auth = authenticator()
    m = request_module(36, 1)
    frame = encode_request(RequestHeader(36, 1, 7, "c"),
                           m.SaslAuthenticateRequest(auth_bytes=message(unsecured({**GOOD, "exp": 10**15}))))
    answer = b"".join((await dispatch_request(node, frame, "", auth)).parts)
    # v1: correlation id, error code (int16), error message, auth bytes, then SessionLifetimeMs (int64),
    # read here by hand: kio's reader refuses a duration this long
    assert answer[4:6] == b"\x00\x00" and auth.principal == "User:alice"
    assert struct.unpack(">q", answer[-8:])[0] == 999_999_999 * 86_400_000
