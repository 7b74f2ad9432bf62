"""CreateAcls (30), v0-3.

Each creation is validated as Kafka does (INVALID_REQUEST, Kafka's message: a CLUSTER resource
not named kafka-cluster, an empty name, resource type ANY, a pattern type other than LITERAL or
PREFIXED, operation ANY, permission ANY; and, unlike Kafka, a principal without a type) and the
rest are stored durably in one write; an ACL that exists already succeeds again. Needs ALTER on
the cluster; without an authorizer every creation gets SECURITY_DISABLED. An UNKNOWN element closes
the connection (Kafka's CreateAclsRequest.validate). v0 (Kafka 3.9 only) creates LITERAL patterns.
The creations are checked a slice of the loop at a time (their codes too, before the
authorization), then stored in one change, the new ones found a slice at a time and the whole
encoded and written on a worker thread (shim.security.acls.AclStore.change_async), as Kafka's
controller writes one request's ACL records in one batch.
"""

from ..errors import ErrorCode
from ..security.acls import creation_error
from ._acls import SECURITY_DISABLED, check_codes, pattern_of, to_binding
from ._pace import Pacer
from .registry import api


def error_response(ctx, request, code, message=None):
    result = ctx.make("AclCreationResult", error_code=code, error_message=message)
    return ctx.response(results=tuple(result for _ in request.creations))


async def validate(ctx, request):
    pace = Pacer()
    async for c in pace.each(request.creations):
        check_codes(ctx.version, c.resource_type, pattern_of(c, "resource_pattern_type"), c.operation,
                    c.permission_type, "CreateAclsRequest", any_pattern_allowed=False)


@api(30, "CreateAcls", 0, 3)
async def handle(ctx, request):
    authorizer = ctx.node.authorizer
    if authorizer is None:
        return error_response(ctx, request, ErrorCode.security_disabled, SECURITY_DISABLED)
    valid, errors, pace = [], [], Pacer()
    async for c in pace.each(request.creations):
        binding = to_binding(ctx.version, c)
        errors.append(creation_error(binding))
        if errors[-1] is None:
            valid.append(binding)
    await authorizer.create(valid, pace)
    created = ctx.make("AclCreationResult", error_code=ErrorCode.none, error_message=None)  # one for all
    ctx.large_answer = True
    return ctx.response(results=tuple(
        [created if e is None else ctx.make("AclCreationResult", error_code=ErrorCode.invalid_request, error_message=e)
         async for e in pace.each(errors)]))
