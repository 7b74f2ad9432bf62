"""DeleteAcls (31), v0-3.

Each filter removes the ACLs it matches (the same matching as DescribeAcls) and lists them; an ACL
two filters match is removed once and listed by both, as Kafka's controller does. A filter whose
resource type or pattern type (or operation or permission) is not one Kafka knows gets
INVALID_REQUEST ("Unknown patternFilter." / "Unknown entryFilter."). Needs ALTER on the cluster;
without an authorizer SECURITY_DISABLED. An UNKNOWN (code 0) element closes the connection
(Kafka's DeleteAclsRequest.normalizeAndValidate). v0 (Kafka 3.9 only) matches LITERAL patterns only.
The filters are matched, and the answer built, a slice of the loop at a time; the ACLs they match
are removed in one change, written on a worker thread before it is in force (as CreateAcls).
"""

from ..errors import ErrorCode
from ._acls import SECURITY_DISABLED, check_filter, filter_of
from ._pace import Pacer
from .registry import api

LARGE_ANSWER_ACLS = 1_000  # more ACLs listed: the answer is encoded on a worker thread


def error_response(ctx, request, code, message=None):
    result = ctx.make("DeleteAclsFilterResult", error_code=code, error_message=message, matching_acls=())
    return ctx.response(filter_results=(result,) * len(request.filters))


async def validate(ctx, request):
    # paced, as CreateAcls': 300,000 filters of a 2 MiB request took 0.18 CPU s of one turn
    async for f in Pacer().each(request.filters):
        check_filter(ctx.version, f, "DeleteAclsRequest")


@api(31, "DeleteAcls", 0, 3)
async def handle(ctx, request):
    authorizer = ctx.node.authorizer
    if authorizer is None:
        return error_response(ctx, request, ErrorCode.security_disabled, SECURITY_DISABLED)
    pace = Pacer()  # the filters read and answered paced too: 50,000 of 2 MiB took 0.73 CPU s of one turn
    filters = [filter_of(ctx.version, f) async for f in pace.each(request.filters)]
    results = [await _result(ctx, r, pace) async for r in pace.each(await authorizer.delete(filters, pace))]
    ctx.large_answer = sum(len(r.matching_acls) for r in results) > LARGE_ANSWER_ACLS
    return ctx.response(filter_results=tuple(results))


async def _result(ctx, removed, pace):
    if isinstance(removed, str):
        return ctx.make("DeleteAclsFilterResult", error_code=ErrorCode.invalid_request, error_message=removed,
                        matching_acls=())
    return ctx.make("DeleteAclsFilterResult", error_code=ErrorCode.none, error_message=None, matching_acls=tuple([
        ctx.make("DeleteAclsMatchingAcl", error_code=ErrorCode.none, error_message=None,
                 resource_type=int(b.resource_type),
                 resource_name=b.name, pattern_type=int(b.pattern_type), principal=b.principal, host=b.host,
                 operation=int(b.operation), permission_type=int(b.permission)) async for b in pace.each(removed)]))
