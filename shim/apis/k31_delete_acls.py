"""DeleteAcls (31), v0-3.

Each filter removes the ACLs it matches (the same matching as DescribeAcls) and lists them; an ACL
two filters match is removed once and listed by both, as Kafka's controller does. A filter whose
resource type or pattern type (or operation or permission) is not one Kafka knows gets
INVALID_REQUEST ("Unknown patternFilter." / "Unknown entryFilter."). Needs ALTER on the cluster;
without an authorizer SECURITY_DISABLED. An UNKNOWN (code 0) element closes the connection
(Kafka's DeleteAclsRequest.normalizeAndValidate). v0 (Kafka 3.9 only) matches LITERAL patterns only.
"""

from ..errors import ErrorCode
from ._acls import SECURITY_DISABLED, check_filter, filter_of
from .registry import api


def error_response(ctx, request, code, message=None):
    result = ctx.make("DeleteAclsFilterResult", error_code=code, error_message=message, matching_acls=())
    return ctx.response(filter_results=tuple(result for _ in request.filters))


def validate(ctx, request):
    for f in request.filters:
        check_filter(ctx.version, f, "DeleteAclsRequest")


@api(31, "DeleteAcls", 0, 3)
def handle(ctx, request):
    authorizer = ctx.node.authorizer
    if authorizer is None:
        return error_response(ctx, request, ErrorCode.security_disabled, SECURITY_DISABLED)
    filters = [filter_of(ctx.version, f) for f in request.filters]
    return ctx.response(filter_results=tuple(_result(ctx, r) for r in authorizer.delete(filters)))


def _result(ctx, removed):
    if isinstance(removed, str):
        return ctx.make("DeleteAclsFilterResult", error_code=ErrorCode.invalid_request, error_message=removed,
                        matching_acls=())
    return ctx.make("DeleteAclsFilterResult", error_code=ErrorCode.none, error_message=None, matching_acls=tuple(
        ctx.make("DeleteAclsMatchingAcl", error_code=ErrorCode.none, error_message=None,
                 resource_type=int(b.resource_type),
                 resource_name=b.name, pattern_type=int(b.pattern_type), principal=b.principal, host=b.host,
                 operation=int(b.operation), permission_type=int(b.permission)) for b in removed))
