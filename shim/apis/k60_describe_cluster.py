"""DescribeCluster (60), v0-2: the live brokers of the cluster (shim.cluster), the first of them as
controller (Kafka's brokers answer a random live broker as the controller id for admin clients).
v2 (Kafka 4.0, KIP-1073): with IncludeFencedBrokers the fenced ones too (a simulated broker that is
down), each with IsFenced, in broker id order.

The request's EndpointType must be the listener's: a broker answers one asking for controllers
(2) MISMATCHED_ENDPOINT_TYPE and one of no known type UNSUPPORTED_ENDPOINT_TYPE, with Kafka's
messages (AuthHelper.computeDescribeClusterResponse; v0 has no such field and asks for brokers, and
is answered INVALID_REQUEST on a controller listener, shim.apis.controller).

Authorized operations, when asked for: the authorizer's (0 without DESCRIBE on the cluster), every
cluster operation without an authorizer.
"""

from ..errors import ErrorCode
from ..security.acls import CLUSTER_NAME
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R
from ._operations import NOT_REQUESTED
from .registry import api


BROKER, CONTROLLER = 1, 2
_ENDPOINT_TYPES = {BROKER: "BROKER", CONTROLLER: "CONTROLLER"}  # Kafka's EndpointType, by id


def endpoint_refusal(ctx, request, expected: int):
    """The error answer to a request for another kind of endpoint than ``expected``, else None."""
    asked = getattr(request, "endpoint_type", BROKER)
    if asked == expected:
        return None
    if asked not in _ENDPOINT_TYPES:
        code, message = ErrorCode.unsupported_endpoint_type, f"Unsupported endpoint type {asked}"
    else:  # sic: Kafka's message names the listener's type first
        code, message = ErrorCode.mismatched_endpoint_type, (
            f"The request was sent to an endpoint of type {_ENDPOINT_TYPES[expected]}, "
            f"but we wanted an endpoint of type {_ENDPOINT_TYPES[asked]}")
    if ctx.version == 0:  # a v0 request (for brokers) to a controller listener
        code = ErrorCode.invalid_request
    return ctx.response(error_code=code, error_message=message, endpoint_type=BROKER, cluster_id="",
                        controller_id=-1, brokers=(), cluster_authorized_operations=NOT_REQUESTED)


@api(60, "DescribeCluster", 0, 2)
def handle(ctx, request):
    refused = endpoint_refusal(ctx, request, BROKER)
    if refused is not None:
        return refused
    node = ctx.node
    operations = NOT_REQUESTED
    if request.include_cluster_authorized_operations:  # Kafka: AuthHelper.computeDescribeClusterResponse
        operations = ctx.authorized_operations(R.CLUSTER, CLUSTER_NAME) if ctx.authorize_cluster(O.DESCRIBE) else 0
    alive = node.cluster.alive()
    listed = node.cluster.node_ids if getattr(request, "include_fenced_brokers", False) else alive
    brokers = tuple(ctx.make("DescribeClusterBroker", broker_id=n, host=host, port=port, rack=node.racks.get(n),
                             is_fenced=n not in alive)
                    for n in sorted(listed) for host, port in (ctx.endpoint_of(n),))
    return ctx.response(error_code=ErrorCode.none, error_message=None, endpoint_type=BROKER,
                        cluster_id=node.config.cluster_id, controller_id=node.cluster.controller(), brokers=brokers,
                        cluster_authorized_operations=operations)
