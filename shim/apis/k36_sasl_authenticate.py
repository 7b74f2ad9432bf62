"""SaslAuthenticate (36), v0-2.

One token of the exchange the SaslHandshake chose (PLAIN: one round, SCRAM: two, OAUTHBEARER: one,
or two when the token is refused: the error JSON, then the client's %x01). A failure answers
SASL_AUTHENTICATION_FAILED with Kafka's message (its generic 'invalid credentials' text unless the
mechanism words a reason for the client) and closes the connection. When the exchange completes,
session_lifetime_ms (v1+) is connections.max.reauth.ms, or an OAUTHBEARER token's remaining life when
shorter (0: no re-authentication). Outside an
exchange: ILLEGAL_SASL_STATE, as Kafka's KafkaApis answers it. Rules: shim/security/session.py.
"""

from ..errors import ErrorCode
from ..node import now_ms
from .registry import api


@api(36, "SaslAuthenticate", 0, 2)
def handle(ctx, request):
    session = ctx.session
    if session is None or not session.sasl:
        return ctx.response(error_code=ErrorCode.illegal_sasl_state,
                            error_message="SaslAuthenticate request received after successful authentication",
                            auth_bytes=b"", session_lifetime=0)
    code, message, token, lifetime_ms = session.authenticate(request.auth_bytes, ctx.version, now_ms())
    return ctx.response(error_code=code, error_message=message, auth_bytes=token, session_lifetime=lifetime_ms)
