"""DescribeCluster (60), v0-1: this one broker is the whole cluster and its controller."""

from ..errors import ErrorCode
from .registry import api

NO_OPERATIONS = -(2**31)


@api(60, "DescribeCluster", 0, 1)
def handle(ctx, request):
    node = ctx.node
    broker = ctx.make("DescribeClusterBroker", broker_id=node.config.node_id, host=ctx.endpoint[0], port=ctx.endpoint[1], rack=None)
    return ctx.response(error_code=ErrorCode.none, error_message=None, endpoint_type=1,
                        cluster_id=node.config.cluster_id, controller_id=node.config.node_id, brokers=(broker,),
                        cluster_authorized_operations=NO_OPERATIONS)
