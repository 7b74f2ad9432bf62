"""What the delegation-token APIs (38-41) share: who may ask, and who the principals are.

kafka-shim never enables delegation tokens (Kafka enables them with ``delegation.token.secret.key``;
kafka-shim stores that setting and ignores it, see NOT_IMPLEMENTED.md), so every request is
answered as a Kafka 3.9 KRaft cluster without a secret answers it. The broker first refuses
connections that may not use tokens at all (Kafka: KafkaApis.allowTokenRequests): PLAINTEXT
listeners, and SSL connections without a client certificate (principal ANONYMOUS), with
DELEGATION_TOKEN_REQUEST_NOT_ALLOWED and -1 timestamps; a token-authenticated connection would be
refused too, but SCRAM token authentication is not served. Others reach the controller, which
answers DELEGATION_TOKEN_AUTH_DISABLED (DelegationTokenControlManager: ``!isEnabled()``) with the
response's defaults (timestamps 0).
"""

from __future__ import annotations

from ..errors import ErrorCode
from ..security.session import ANONYMOUS

ERROR_TIMESTAMP = -1  # Kafka: DelegationTokenManager.ErrorTimestamp


def allow_token_requests(ctx) -> bool:
    """Kafka: KafkaApis.allowTokenRequests."""
    protocol = listener_protocol(ctx)
    if protocol == "PLAINTEXT":
        return False
    return not (protocol == "SSL" and ctx.principal == ANONYMOUS)


def expiry_answer(ctx):
    """The answer of RenewDelegationToken and ExpireDelegationToken, which carry only an error and
    an expiry timestamp."""
    if not allow_token_requests(ctx):
        return ctx.response(error_code=ErrorCode.delegation_token_request_not_allowed,
                            expiry_timestamp=ERROR_TIMESTAMP)
    return ctx.response(error_code=ErrorCode.delegation_token_auth_disabled, expiry_timestamp=0)


def listener_protocol(ctx) -> str:
    """The security protocol of the listener the request came in on (the first listener when the
    request did not come through a socket)."""
    listeners = ctx.node.listeners
    name = ctx.session.listener if ctx.session is not None else listeners[0].name
    return next((l.protocol for l in listeners if l.name == name), listeners[0].protocol)


def split(principal_text: str) -> tuple[str, str]:
    """(principal type, name): Kafka: SecurityUtils.parseKafkaPrincipal."""
    kind, _, name = principal_text.partition(":")
    return kind, name
