"""CreateDelegationToken (38), v0-3 (v0 is v1 on the wire).

Delegation tokens are never enabled (see _tokens): on a PLAINTEXT listener, or over SSL without a
client certificate, DELEGATION_TOKEN_REQUEST_NOT_ALLOWED; a renewer whose principal type is not
``User`` INVALID_PRINCIPAL_TYPE; otherwise DELEGATION_TOKEN_AUTH_DISABLED, as a Kafka 3.9 KRaft
controller without ``delegation.token.secret.key`` answers. The owner is the request's owner
principal when one is given, else the requester; v3 also names the requester. A token for another
owner needs CREATE_TOKENS on that user (DELEGATION_TOKEN_AUTHORIZATION_FAILED).
"""

from ..errors import ErrorCode
from ..security.acls import AclOperation, ResourceType
from ._tokens import ERROR_TIMESTAMP, allow_token_requests, split
from .registry import api

USER_TYPE = "User"  # Kafka: KafkaPrincipal.USER_TYPE


@api(38, "CreateDelegationToken", 0, 3)
def handle(ctx, request):
    requester = split(ctx.principal)
    owner_name = getattr(request, "owner_principal_name", None)
    owner = (request.owner_principal_type, owner_name) if owner_name else requester
    if not allow_token_requests(ctx):
        return _answer(ctx, ErrorCode.delegation_token_request_not_allowed, owner, requester, ERROR_TIMESTAMP)
    if owner != requester and not ctx.authorize(AclOperation.CREATE_TOKENS, ResourceType.USER, ":".join(owner)):
        return _answer(ctx, ErrorCode.delegation_token_authorization_failed, owner, requester, ERROR_TIMESTAMP)
    if any(r.principal_type != USER_TYPE for r in request.renewers):
        return _answer(ctx, ErrorCode.invalid_principal_type, owner, requester, ERROR_TIMESTAMP)
    # Forwarded to the controller, which has no token secret (DelegationTokenControlManager)
    return _answer(ctx, ErrorCode.delegation_token_auth_disabled, owner, requester, 0)


def _answer(ctx, code, owner, requester, timestamp):
    return ctx.response(
        error_code=code, principal_type=owner[0], principal_name=owner[1],
        token_requester_principal_type=requester[0], token_requester_principal_name=requester[1],
        issue_timestamp=timestamp, expiry_timestamp=timestamp, max_timestamp=timestamp, token_id="", hmac=b"")
