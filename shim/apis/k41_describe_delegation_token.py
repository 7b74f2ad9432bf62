"""DescribeDelegationToken (41), v0-3 (v0 is v1 on the wire).

Answered by the broker itself (Kafka: KafkaApis.handleDescribeTokensRequest): no tokens, with
DELEGATION_TOKEN_REQUEST_NOT_ALLOWED where tokens may not be used (see _tokens), else
DELEGATION_TOKEN_AUTH_DISABLED, since delegation tokens are never enabled.
"""

from ..errors import ErrorCode
from ._tokens import allow_token_requests
from .registry import api


@api(41, "DescribeDelegationToken", 0, 3)
def handle(ctx, request):
    code = (ErrorCode.delegation_token_auth_disabled if allow_token_requests(ctx)
            else ErrorCode.delegation_token_request_not_allowed)
    return ctx.response(error_code=code, tokens=())
