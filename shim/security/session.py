"""Who a connection is, and (on SASL listeners) the authentication that must come first.

:class:`SaslAuthenticator` is Kafka's SaslServerAuthenticator as a sans-IO state machine. Before
authentication completes only ApiVersions, SaslHandshake and SaslAuthenticate are served; anything
else closes the connection. After a v0 SaslHandshake the tokens are raw size-prefixed frames
(Kafka 0.10 clients), after v1 they come in SaslAuthenticate requests. A failed exchange is answered
(SASL_AUTHENTICATION_FAILED, UNSUPPORTED_SASL_MECHANISM) and then the connection is closed.
With ``connections.max.reauth.ms`` (KIP-368) a session lasts that long, and an OAUTHBEARER session
no longer than its token: the client must re-authenticate (a new SaslHandshake) before then, or
its next request closes the connection (one that cannot re-authenticate, SaslAuthenticate v0, is
closed then, as Kafka does).
"""

from __future__ import annotations

import enum

from ..errors import ErrorCode
from .oauthbearer import MECHANISM as OAUTHBEARER
from .oauthbearer import OAuthBearerServer
from .plain import PlainServer
from .scram import HASHES, SaslFailure, ScramServer

ANONYMOUS = "User:ANONYMOUS"
API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE = 18, 17, 36


class ConnectionSession:
    """A connection on a PLAINTEXT or SSL listener: its principal is known when it connects."""

    sasl = None

    def __init__(self, listener: str, principal: str = ANONYMOUS) -> None:
        self.listener, self.principal = listener, principal
        self.failed = False

    def admits(self, api_key: int, now_ms: int) -> bool:
        return True

    def served(self, api_key: int) -> None:
        pass


class State(enum.Enum):
    HANDSHAKE_OR_VERSIONS_REQUEST = "handshake or versions"
    HANDSHAKE_REQUEST = "handshake"
    AUTHENTICATE = "authenticate"
    COMPLETE = "complete"
    REAUTHENTICATE = "reauthenticate"
    FAILED = "failed"


# The requests each state serves (Kafka: SaslServerAuthenticator.handleKafkaRequest/handleSaslToken).
# COMPLETE serves everything; a SaslHandshake there starts a re-authentication when it is allowed.
_SERVES = {
    State.HANDSHAKE_OR_VERSIONS_REQUEST: {API_VERSIONS, SASL_HANDSHAKE},
    State.HANDSHAKE_REQUEST: {SASL_HANDSHAKE},
    State.AUTHENTICATE: {SASL_AUTHENTICATE, SASL_HANDSHAKE},
    State.REAUTHENTICATE: {SASL_AUTHENTICATE},
    State.FAILED: set(),
}


class SaslAuthenticator:
    sasl = True

    def __init__(self, listener: str, mechanisms: tuple[str, ...], credentials, max_reauth_ms: int = 0,
                 scram_nonce_check: str = "exact", oauth_validator=None) -> None:
        self.listener, self.mechanisms, self.credentials = listener, mechanisms, credentials
        self.max_reauth_ms = max_reauth_ms
        self.scram_nonce_check = scram_nonce_check
        self.oauth_validator = oauth_validator  # shim/security/oauthbearer.py: the token validator
        self._now_ms = 0  # the time of the token being evaluated (OAUTHBEARER checks exp against it)
        self.state = State.HANDSHAKE_OR_VERSIONS_REQUEST
        self.principal: str | None = None
        self.mechanism: str | None = None
        self.raw_tokens = False  # after a v0 SaslHandshake
        self.supports_reauth = False  # the client sent SaslAuthenticate v1+
        self.session_expires_ms: int | None = None
        self.reauthentications = 0  # completed KIP-368 re-authentications
        self._server = None

    @property
    def failed(self) -> bool:
        return self.state is State.FAILED

    @property
    def complete(self) -> bool:
        return self.state is State.COMPLETE

    def admits(self, api_key: int, now_ms: int) -> bool:
        """May this request be dispatched now? False: close the connection without an answer."""
        if self.state is State.COMPLETE:
            if self.session_expires_ms is not None and now_ms >= self.session_expires_ms:
                if api_key == SASL_HANDSHAKE:
                    return True  # KIP-368: re-authentication may begin after the expiry too
                self.state = State.FAILED
                return False
            return True
        if api_key not in _SERVES[self.state]:
            self.state = State.FAILED
            return False
        return True

    def served(self, api_key: int) -> None:
        """A request was answered without error (ApiVersions: Kafka's handleApiVersionsRequest)."""
        if api_key == API_VERSIONS and self.state is State.HANDSHAKE_OR_VERSIONS_REQUEST:
            self.state = State.HANDSHAKE_REQUEST

    # -- SaslHandshake ------------------------------------------------------------------------

    def handshake(self, mechanism: str, version: int) -> ErrorCode:
        if self.state is State.AUTHENTICATE:
            self.state = State.FAILED  # the exchange already began: answered, then closed, as Kafka
            return ErrorCode.illegal_sasl_state
        if self.state is State.COMPLETE:
            if self.session_expires_ms is None or version < 1:
                # Kafka: KafkaChannel.maybeBeginServerReauthentication needs a session that expires,
                # else KafkaApis answers the handshake
                return ErrorCode.illegal_sasl_state
            if mechanism != self.mechanism:
                self.state = State.FAILED
                return ErrorCode.unsupported_sasl_mechanism
            self._start(mechanism)
            self.state = State.REAUTHENTICATE
            return ErrorCode.none
        if mechanism not in self.mechanisms:
            self.state = State.FAILED
            return ErrorCode.unsupported_sasl_mechanism
        self.raw_tokens = version == 0
        self._start(mechanism)
        self.state = State.AUTHENTICATE
        return ErrorCode.none

    def _start(self, mechanism: str) -> None:
        self.mechanism = mechanism
        if mechanism == "PLAIN":
            self._server = PlainServer(self.credentials.verify_plain)
        elif mechanism == OAUTHBEARER:
            self._server = OAuthBearerServer(self.oauth_validator, lambda: self._now_ms)
        else:
            self._server = ScramServer(mechanism, lambda user: self.credentials.scram(mechanism, user),
                                       nonce_check=self.scram_nonce_check)

    # -- the tokens -----------------------------------------------------------------------------

    def authenticate(self, token: bytes, version: int, now_ms: int) -> tuple[ErrorCode, str | None, bytes, int]:
        """SaslAuthenticate: (error_code, error_message, auth_bytes, session_lifetime_ms)."""
        if self.state not in (State.AUTHENTICATE, State.REAUTHENTICATE) or self.raw_tokens:
            return ErrorCode.illegal_sasl_state, "SaslAuthenticate request received after successful authentication", b"", 0
        self.supports_reauth = self.supports_reauth or version > 0
        self._now_ms = now_ms
        try:
            answer = self._evaluate(token)
        except SaslFailure as e:
            self.state = State.FAILED
            return ErrorCode.sasl_authentication_failed, e.client_message or self._generic(), b"", 0
        return ErrorCode.none, None, answer, self._lifetime(now_ms)

    def raw_token(self, token: bytes, now_ms: int) -> bytes:
        """A token after a v0 SaslHandshake; a failure raises :class:`SaslFailure` (close, no answer)."""
        self._now_ms = now_ms
        try:
            answer = self._evaluate(token)
        except SaslFailure:
            self.state = State.FAILED
            raise
        if self.complete:
            self.raw_tokens = False
        return answer

    def _evaluate(self, token: bytes) -> bytes:
        reauth = self.state is State.REAUTHENTICATE
        answer = self._server.evaluate(token)
        if self._server.complete:
            principal = f"User:{self._server.authorization_id}"
            if reauth and principal != self.principal:
                raise SaslFailure("principal changed", f"Cannot change principals during re-authentication from "
                                  f"{self.principal}: {principal}")
            self.principal, self.state = principal, State.COMPLETE
            self.reauthentications += reauth
        return answer

    def _lifetime(self, now_ms: int) -> int:
        """Kafka: SaslServerAuthenticator.ReauthInfo.calcCompletionTimesAndReturnSessionLifetimeMs. The
        session ends at connections.max.reauth.ms or when the credential (an OAUTHBEARER token)
        expires, whichever is first, for every client: one that cannot re-authenticate is closed then."""
        if not self.complete:
            return 0
        credential_ms = getattr(self._server, "lifetime_ms", None)
        if credential_ms is None and self.max_reauth_ms <= 0:
            return 0
        if credential_ms is None:
            lifetime = self.max_reauth_ms
        elif self.max_reauth_ms <= 0:
            lifetime = max(0, credential_ms - now_ms)
        else:
            lifetime = max(0, min(credential_ms - now_ms, self.max_reauth_ms))
        self.session_expires_ms = now_ms + lifetime
        return lifetime

    def _generic(self) -> str:
        # Kafka: SaslServerAuthenticator.handleSaslToken, the text that reveals nothing of the reason
        which = "re-authentication" if self.principal is not None else "authentication"
        return f"Authentication failed during {which} due to invalid credentials with SASL mechanism {self.mechanism}"


def enabled_mechanisms(spec: str) -> tuple[str, ...]:
    names = tuple(m.strip() for m in spec.split(",") if m.strip())
    unknown = [m for m in names if m not in ("PLAIN", OAUTHBEARER) and m not in HASHES]
    if unknown:
        raise ValueError(f"unsupported sasl.enabled.mechanisms {unknown}: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 "
                         f"and OAUTHBEARER are")
    return names
