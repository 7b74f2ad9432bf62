"""DescribeAcls (29), v0-3.

The ACLs a filter matches (shim.security.acls.AclFilter: ANY and MATCH pattern filters, null
name, principal and host matching any), grouped by resource pattern. Needs DESCRIBE on the
cluster (CLUSTER_AUTHORIZATION_FAILED); without an authorizer SECURITY_DISABLED. A filter with an
UNKNOWN element closes the connection, as Kafka's request parsing does. v0 (Kafka 3.9 only) knows
LITERAL patterns only. The ACLs are matched, and the answer built, a slice of the loop at a time.
"""

from ..errors import ErrorCode
from ._acls import check_filter, filter_of
from ._pace import Pacer
from .registry import api

LARGE_ANSWER_ACLS = 1_000  # more ACLs described: the answer is encoded on a worker thread


def error_response(ctx, request, code):
    return ctx.response(error_code=code, error_message=None, resources=())


def validate(ctx, r):
    check_filter(ctx.version, r, "DescribeAclsRequest")


@api(29, "DescribeAcls", 0, 3)
async def handle(ctx, request):
    r = request
    authorizer = ctx.node.authorizer
    if authorizer is None:
        return ctx.response(error_code=ErrorCode.security_disabled,
                            error_message="No Authorizer is configured on the broker", resources=())
    acl_filter = filter_of(ctx.version, r)
    by_pattern: dict[tuple, list] = {}
    pace, matched = Pacer(), 0
    async for b in pace.each(authorizer.store.bindings):  # replaced by a change, never modified in place
        if acl_filter.matches(b):
            matched += 1
            by_pattern.setdefault((b.resource_type, b.name, b.pattern_type), []).append(
                ctx.make("AclDescription", principal=b.principal, host=b.host, operation=int(b.operation),
                         permission_type=int(b.permission)))
    resources = tuple([ctx.make("DescribeAclsResource", resource_type=int(t), resource_name=n, pattern_type=int(p),
                                acls=tuple(acls)) async for (t, n, p), acls in pace.each(by_pattern.items())])
    ctx.large_answer = matched > LARGE_ANSWER_ACLS
    return ctx.response(error_code=ErrorCode.none, error_message=None, resources=resources)
