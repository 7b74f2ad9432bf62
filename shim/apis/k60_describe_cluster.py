"""DescribeCluster (60), v0-1: this one broker is the whole cluster and its controller.

Authorized operations, when asked for: every cluster operation (no authorizer, see _operations).
"""

from ..errors import ErrorCode
from ._operations import CLUSTER, NOT_REQUESTED
from .registry import api


@api(60, "DescribeCluster", 0, 1)
def handle(ctx, request):
    node = ctx.node
    operations = CLUSTER if request.include_cluster_authorized_operations else NOT_REQUESTED
    broker = ctx.make("DescribeClusterBroker", broker_id=node.config.node_id, host=node.host, port=node.port, rack=None)
    return ctx.response(error_code=ErrorCode.none, error_message=None, endpoint_type=1,
                        cluster_id=node.config.cluster_id, controller_id=node.config.node_id, brokers=(broker,),
                        cluster_authorized_operations=operations)
