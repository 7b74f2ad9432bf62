"""DescribeCluster (60), v0-2: the live brokers of the cluster (shim.cluster), the first of them as
controller (Kafka's brokers answer a random live broker as the controller id for admin clients).
v2 (Kafka 4.0, KIP-1073): with IncludeFencedBrokers the fenced ones too (a simulated broker that is
down), each with IsFenced, in broker id order.

Authorized operations, when asked for: the authorizer's (0 without DESCRIBE on the cluster), every
cluster operation without an authorizer.
"""

from ..errors import ErrorCode
from ..security.acls import CLUSTER_NAME
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R
from ._operations import NOT_REQUESTED
from .registry import api


@api(60, "DescribeCluster", 0, 2)
def handle(ctx, request):
    node = ctx.node
    operations = NOT_REQUESTED
    if request.include_cluster_authorized_operations:  # Kafka: AuthHelper.computeDescribeClusterResponse
        operations = ctx.authorized_operations(R.CLUSTER, CLUSTER_NAME) if ctx.authorize_cluster(O.DESCRIBE) else 0
    alive = node.cluster.alive()
    listed = node.cluster.node_ids if getattr(request, "include_fenced_brokers", False) else alive
    brokers = tuple(ctx.make("DescribeClusterBroker", broker_id=n, host=host, port=port, rack=node.racks.get(n),
                             is_fenced=n not in alive)
                    for n in sorted(listed) for host, port in (ctx.endpoint_of(n),))
    return ctx.response(error_code=ErrorCode.none, error_message=None, endpoint_type=1,
                        cluster_id=node.config.cluster_id, controller_id=node.cluster.controller(), brokers=brokers,
                        cluster_authorized_operations=operations)
