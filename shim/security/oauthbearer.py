"""SASL/OAUTHBEARER (RFC 7628, KIP-255, KIP-768), the server side, sans-IO.

The client's one message is ``n,[a=authzid],\\x01auth=Bearer <token>\\x01[key=value\\x01...]\\x01``
(Kafka: OAuthBearerClientInitialResponse). The token is checked by one of two validators:

* :class:`UnsecuredValidator`, Kafka's default (OAuthBearerUnsecuredValidatorCallbackHandler): an
  unsigned JWS (``alg`` none, no signature), a string principal claim (``sub``), a numeric ``exp``
  not past, an optional ``iat`` not in the future, ``exp`` after ``iat``, and the required scope. Its
  options come from the OAuthBearerLoginModule JAAS entry: ``unsecuredValidatorPrincipalClaimName``,
  ``unsecuredValidatorScopeClaimName``, ``unsecuredValidatorRequiredScope``,
  ``unsecuredValidatorAllowableClockSkewMs``.
* :class:`JwksValidator`, Kafka's OAuthBearerValidatorCallbackHandler over a JWKS file
  (``sasl.oauthbearer.jwks.endpoint.url=file:...``): a JWS signed with a key of the set (RS256/384/512,
  PS256/384/512, ES256/384/512, with ``cryptography``), ``exp`` and ``iat`` present, ``exp`` and ``nbf``
  within ``sasl.oauthbearer.clock.skew.seconds``, ``aud`` and ``iss`` as expected (a token with an
  ``aud`` is refused when no audience is expected, as jose4j's default), a non-blank subject.

A token that fails is not an error yet: as Kafka's OAuthBearerSaslServer, the server answers an error
JSON (``{"status":"invalid_token"}``, or ``insufficient_scope`` with the required scope) as a challenge;
the client answers ``\\x01`` and only then the exchange fails, with that JSON as the error message.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from dataclasses import dataclass

from .scram import SaslFailure

MECHANISM = "OAUTHBEARER"
_SASLNAME = r"(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D)+"
_KVPAIRS = r"(?:[A-Za-z]+=[\x21-\x7e \t\r\n]+\x01)*"
_INITIAL = re.compile(rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,\x01(?P<kvpairs>{_KVPAIRS})\x01", re.S)
_AUTH = re.compile(r"(?P<scheme>\w+) +(?P<token>[-_~+/.a-zA-Z0-9]+=*)", re.A)
_JAAS_OPTION = re.compile(r'(\w+)\s*=\s*"([^"]*)"')


class InvalidToken(Exception):
    """The token was refused: ``status`` and ``scope`` are what the error JSON carries."""

    def __init__(self, reason: str, status: str = "invalid_token", scope: str | None = None) -> None:
        super().__init__(reason)
        self.status, self.scope = status, scope

    def json(self) -> str:
        # Kafka: OAuthBearerSaslServer.jsonErrorResponse, byte for byte
        text = f'{{"status":"{self.status}"'
        if self.scope is not None:
            text += f', "scope":"{self.scope}"'
        return text + "}"


@dataclass(frozen=True)
class Token:
    principal: str
    lifetime_ms: int  # when it expires, ms since the epoch
    scope: frozenset[str]


def parse_initial_response(message: bytes) -> tuple[str, str, dict[str, str]]:
    """(authzid, token, extensions) of the client's message; a malformed one fails the exchange."""
    try:
        text = bytes(message).decode("utf-8")
    except UnicodeDecodeError:
        raise SaslFailure("Invalid OAUTHBEARER client first message") from None
    m = _INITIAL.fullmatch(text)
    if m is None:
        raise SaslFailure("Invalid OAUTHBEARER client first message")
    pairs = dict(item.split("=", 1) for item in m["kvpairs"].split("\x01") if item)
    auth = pairs.pop("auth", None)
    if auth is None:
        raise SaslFailure("Invalid OAUTHBEARER client first message: 'auth' not specified")
    a = _AUTH.fullmatch(auth)
    if a is None:
        raise SaslFailure("Invalid OAUTHBEARER client first message: invalid 'auth' format")
    if a["scheme"].lower() != "bearer":
        raise SaslFailure(f"Invalid scheme in OAUTHBEARER client first message: {a['scheme']}")
    return m["authzid"] or "", a["token"], pairs


def jaas_options(jaas: str) -> dict[str, str]:
    """The options of an OAuthBearerLoginModule JAAS entry (``listener.name.<l>.oauthbearer.sasl.jaas.config``)."""
    if jaas.strip() and "OAuthBearerLoginModule" not in jaas:
        raise ValueError("oauthbearer.sasl.jaas.config must configure "
                         "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule")
    return dict(_JAAS_OPTION.findall(jaas))


# -- Kafka's unsecured validation ------------------------------------------------------------------


def _java_base64(text: str) -> bytes:
    """java.util.Base64.getDecoder(), which OAuthBearerUnsecuredJws uses: the standard alphabet,
    padding optional but correct when present."""
    body = text.rstrip("=")
    if (not re.fullmatch(r"[A-Za-z0-9+/]*", body) or len(body) % 4 == 1
            or (body != text and (len(text) % 4 or len(text) - len(body) > 2))):
        raise InvalidToken("malformed Base64 URL encoded value")
    return base64.b64decode(body + "=" * (-len(body) % 4))


def _jackson_map(split: str) -> dict:
    """A header or claims part as OAuthBearerUnsecuredJws.toMap reads it: arrays become lists of
    text, numbers stay numbers, anything else becomes its text."""
    raw = _java_base64(split)
    try:
        node = json.loads(raw, parse_constant=_no_constant)
    except ValueError:
        raise InvalidToken("malformed JSON") from None
    if not isinstance(node, dict):
        return {}
    return {k: _jackson_value(v) for k, v in node.items()}


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")  # Jackson and jose4j refuse NaN and Infinity


def java_round_ms(seconds: float) -> int:
    """Math.round(seconds * 1000) as Java computes it: clamped to a long (1e300 or 1e999 seconds
    is Long.MAX_VALUE ms, not a number no response field can carry)."""
    ms = seconds * 1000
    if ms >= 2**63 - 1:
        return 2**63 - 1
    if ms <= -(2**63):
        return -(2**63)
    return math.floor(ms + 0.5)


def _jackson_value(value):
    if isinstance(value, list):
        return [_as_text(v) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return _as_text(value)


def _as_text(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    return ""  # an object or array node's asText()


def _typed(claims: dict, name: str, kind: type, kind_name: str):
    value = claims.get(name)
    if value is not None and not isinstance(value, kind):
        raise InvalidToken(f"The '{name}' claim was not of type {kind_name}")
    return value


class UnsecuredValidator:
    def __init__(self, options: dict[str, str]) -> None:
        self.principal_claim = options.get("unsecuredValidatorPrincipalClaimName", "").strip() or "sub"
        self.scope_claim = options.get("unsecuredValidatorScopeClaimName", "").strip() or "scope"
        self.required_scope = options.get("unsecuredValidatorRequiredScope", "").split()
        skew = options.get("unsecuredValidatorAllowableClockSkewMs", "").strip() or "0"
        self.skew_ms = int(skew)
        if self.skew_ms < 0:
            raise ValueError(f"Allowable clock skew millis must not be negative: {skew}")

    def validate(self, token: str, now_ms: int) -> Token:
        claims = self._parse(token)
        scope = self._scope(claims)
        exp = _typed(claims, "exp", (int, float), "Number")
        if exp is None:
            raise InvalidToken("No expiration time in JWT")
        principal = _typed(claims, self.principal_claim, str, "String")
        if not principal or not principal.strip():
            raise InvalidToken(f"No principal name in JWT claim: {self.principal_claim}")
        iat = _typed(claims, "iat", (int, float), "Number")
        # Kafka: OAuthBearerValidationUtils, in OAuthBearerUnsecuredValidatorCallbackHandler's order
        if iat is not None and 1000 * iat > now_ms + self.skew_ms:
            raise InvalidToken("The Issued At value was after the indicated time plus allowable clock skew")
        if now_ms - self.skew_ms >= 1000 * exp:
            raise InvalidToken("The indicated time minus allowable clock skew was on or after the Expiration Time")
        if iat is not None and exp <= iat:
            raise InvalidToken("The Expiration Time time was not after the Issued At time")
        missing = [s for s in self.required_scope if s not in scope]
        if missing:
            # the scope is the required list as Java's List.toString writes it
            raise InvalidToken(f"missing a required scope ({missing[0]})", "insufficient_scope",
                               "[" + ", ".join(self.required_scope) + "]")
        return Token(principal, java_round_ms(exp), scope)

    @staticmethod
    def _parse(token: str) -> dict:
        if ".." in token:
            raise InvalidToken("Malformed compact serialization contains '..'")
        splits = token.split(".")
        if len(splits) != 3:
            raise InvalidToken("Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded values")
        header, claims = _jackson_map(splits[0]), _jackson_map(splits[1])
        if header.get("alg") != "none":
            raise InvalidToken("Unsecured JWS must have 'none' for an algorithm")
        if splits[2]:
            raise InvalidToken("Unsecured JWS must not contain a digital signature")
        return claims

    def _scope(self, claims: dict) -> frozenset[str]:
        value = claims.get(self.scope_claim)
        if isinstance(value, str):
            return frozenset([value.strip()]) if value.strip() else frozenset()
        value = _typed(claims, self.scope_claim, list, "List")
        return frozenset(s.strip() for s in value or () if s.strip())


# -- validation against a JWKS file ---------------------------------------------------------------


def _b64url(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise InvalidToken("malformed base64url") from None


class JwksValidator:
    def __init__(self, jwks_path: str, audience: str = "", issuer: str = "", sub_claim: str = "sub",
                 scope_claim: str = "scope", clock_skew_s: int = 30) -> None:
        from .jwks import load_jwks

        self.keys = load_jwks(jwks_path)
        self.audience = {a.strip() for a in audience.split(",") if a.strip()}
        self.issuer, self.sub_claim, self.scope_claim = issuer, sub_claim, scope_claim
        self.skew_ms = clock_skew_s * 1000

    def validate(self, token: str, now_ms: int) -> Token:
        from .jwks import verify

        parts = token.strip().split(".")
        if len(parts) != 3 or not all(parts):
            raise InvalidToken("Malformed JWT provided; expected three sections (header, payload, and signature)")
        try:
            header = json.loads(_b64url(parts[0]), parse_constant=_no_constant)
            claims = json.loads(_b64url(parts[1]), parse_constant=_no_constant)
        except ValueError:
            raise InvalidToken("malformed JSON") from None
        if not isinstance(header, dict) or not isinstance(claims, dict):
            raise InvalidToken("not a JSON object")
        if not verify(self.keys, header, f"{parts[0]}.{parts[1]}".encode(), _b64url(parts[2])):
            raise InvalidToken("no key of the JWKS verifies the signature")
        self._check_times(claims, now_ms)
        self._check_audience_issuer(claims)
        sub = claims.get(self.sub_claim)
        if not isinstance(sub, str) or not sub.strip():
            raise InvalidToken(f"the {self.sub_claim} claim is missing or blank")
        raw = claims.get(self.scope_claim)
        scope = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
        if any(not isinstance(s, str) or not s.strip() for s in scope):
            raise InvalidToken(f"a {self.scope_claim} value is blank")
        return Token(sub.strip(), java_round_ms(claims["exp"]), frozenset(s.strip() for s in scope))

    def _check_times(self, claims: dict, now_ms: int) -> None:
        # jose4j's JwtConsumer as ValidatorAccessTokenValidator builds it: exp and iat required
        for name in ("exp", "iat"):
            if not isinstance(claims.get(name), (int, float)) or isinstance(claims.get(name), bool):
                raise InvalidToken(f"No {name} claim")
        if now_ms >= claims["exp"] * 1000 + self.skew_ms:
            raise InvalidToken("The JWT is no longer valid")
        nbf = claims.get("nbf")
        if isinstance(nbf, (int, float)) and now_ms + self.skew_ms < nbf * 1000:
            raise InvalidToken("The JWT is not yet valid")

    def _check_audience_issuer(self, claims: dict) -> None:
        aud = claims.get("aud")
        auds = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else None
        if self.audience and not auds:
            raise InvalidToken("No Audience (aud) claim present")
        if auds is not None and not self.audience & set(auds):
            raise InvalidToken("Audience (aud) claim doesn't contain an acceptable identifier")
        if self.issuer and claims.get("iss") != self.issuer:
            raise InvalidToken("Issuer (iss) claim value is not the expected one")


def validator_from_config(config):
    """JwksValidator when sasl.oauthbearer.jwks.endpoint.url is set, else Kafka's unsecured default."""
    if config.sasl_oauthbearer_jwks_endpoint_url:
        return JwksValidator(config.sasl_oauthbearer_jwks_endpoint_url, config.sasl_oauthbearer_expected_audience,
                             config.sasl_oauthbearer_expected_issuer, config.sasl_oauthbearer_sub_claim_name,
                             config.sasl_oauthbearer_scope_claim_name, config.sasl_oauthbearer_clock_skew_seconds)
    return UnsecuredValidator(jaas_options(config.oauthbearer_sasl_jaas_config))


# -- the SASL server ------------------------------------------------------------------------------


class OAuthBearerServer:
    mechanism = MECHANISM

    def __init__(self, validator, clock) -> None:
        self.validator, self.clock = validator, clock  # clock() -> now in ms, given by the authenticator
        self.complete = False
        self.authorization_id: str | None = None
        self.lifetime_ms: int | None = None
        self._error: str | None = None

    def evaluate(self, message: bytes) -> bytes:
        if bytes(message) == b"\x01" and self._error is not None:
            raise SaslFailure("the client acknowledged the error", self._error)
        self._error = None
        authzid, token, _extensions = parse_initial_response(message)  # every extension is valid, as in Kafka
        try:
            valid = self.validator.validate(token, self.clock())
        except InvalidToken as refused:
            self._error = refused.json()
            return self._error.encode()
        if authzid and authzid != valid.principal:
            raise SaslFailure("authzid", f"Authentication failed: Client requested an authorization id ({authzid}) "
                              f"that is different from the token's principal name ({valid.principal})")
        self.authorization_id, self.lifetime_ms, self.complete = valid.principal, valid.lifetime_ms, True
        return b""
