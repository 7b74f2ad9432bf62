"""ListPartitionReassignments (46), v0.

No reassignment is ever in progress on one broker (AlterPartitionReassignments completes at once),
so the list is always empty, for all topics (null) or named ones, known or not, as Kafka's
controller answers (ReplicationControlManager.listPartitionReassignments skips what is not moving).
"""

from ..errors import ErrorCode
from .registry import api


@api(46, "ListPartitionReassignments", 0, 0)
def handle(ctx, request):
    return ctx.response(error_code=ErrorCode.none, error_message=None, topics=())


def error_response(ctx, request, code):
    return ctx.response(error_code=code, error_message=None, topics=())
