"""SaslHandshake (17), v0-1.

On a SASL listener before authentication: the client names its mechanism; an enabled one is
accepted (the answer lists the enabled mechanisms), any other gets UNSUPPORTED_SASL_MECHANISM with
that list and the connection is closed. v0 means the tokens that follow are raw size-prefixed
frames, v1 that they come in SaslAuthenticate requests. After authentication a handshake starts a
re-authentication (KIP-368) when connections.max.reauth.ms is set and the client can; otherwise,
and on listeners without SASL, it gets ILLEGAL_SASL_STATE, as Kafka's KafkaApis answers it.
The per-connection rules live in shim/security/session.py.
"""

from ..errors import ErrorCode
from .registry import api


@api(17, "SaslHandshake", 0, 1)
def handle(ctx, request):
    session = ctx.session
    if session is None or not session.sasl:
        return ctx.response(error_code=ErrorCode.illegal_sasl_state, mechanisms=())
    code = session.handshake(request.mechanism, ctx.version)
    return ctx.response(error_code=code, mechanisms=session.mechanisms)
