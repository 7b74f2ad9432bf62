"""ExpireDelegationToken (40), v0-2 (v0 is v1 on the wire).

Delegation tokens are never enabled (see _tokens): DELEGATION_TOKEN_REQUEST_NOT_ALLOWED with expiry
-1 where tokens may not be used, else DELEGATION_TOKEN_AUTH_DISABLED with expiry 0, as a Kafka 3.9
KRaft cluster without ``delegation.token.secret.key`` answers whatever the HMAC.
"""

from ._tokens import expiry_answer
from .registry import api


@api(40, "ExpireDelegationToken", 0, 2)
def handle(ctx, request):
    return expiry_answer(ctx)
