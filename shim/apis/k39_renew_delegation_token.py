"""RenewDelegationToken (39), v0-2 (v0 is v1 on the wire).

Delegation tokens are never enabled (see _tokens): DELEGATION_TOKEN_REQUEST_NOT_ALLOWED with expiry
-1 where tokens may not be used, else DELEGATION_TOKEN_AUTH_DISABLED with expiry 0, as a Kafka 3.9
KRaft cluster without ``delegation.token.secret.key`` answers whatever the HMAC.
"""

from ..errors import ErrorCode
from ._tokens import ERROR_TIMESTAMP, allow_token_requests
from .registry import api


@api(39, "RenewDelegationToken", 0, 2)
def handle(ctx, request):
    if not allow_token_requests(ctx):
        return ctx.response(error_code=ErrorCode.delegation_token_request_not_allowed,
                            expiry_timestamp=ERROR_TIMESTAMP)
    return ctx.response(error_code=ErrorCode.delegation_token_auth_disabled, expiry_timestamp=0)
