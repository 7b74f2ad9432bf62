"""The controller listener: what Kafka's ControllerServer serves on the listeners named in
``controller.listener.names`` (shim.security.kraft_roles), with its SocketServer of
ListenerType.CONTROLLER and ControllerApis.

* ApiVersions lists the controller's APIs at the emulated release's versions
  (shim.protocol.controller_releases), limited to what kafka-shim reads; any other API key closes
  the connection (SocketServer.parseRequestHeader: "... which is not enabled").
* DescribeCluster needs ALTER on the cluster and answers EndpointType CONTROLLER: the quorum's
  voters at their address on the listener the request came in on, and the active controller
  (ControllerApis.handleDescribeCluster, AuthHelper.computeDescribeClusterResponse,
  ControllerRegistrationsPublisher.describeClusterControllers). A request for BROKER endpoints gets
  MISMATCHED_ENDPOINT_TYPE (INVALID_REQUEST at v0, whose requests ask for BROKER).
* The APIs a KRaft broker forwards to the controller (CreateTopics, DeleteTopics, CreatePartitions,
  the config, ACL, quota, SCRAM and delegation-token APIs, ElectLeaders, reassignments,
  UpdateFeatures, DescribeQuorum, UnregisterBroker, Add/RemoveRaftVoter) have the controller's
  semantics already: their handlers are the broker's (shim.apis.kNN_*).
* Raft's own APIs (Fetch of ``__cluster_metadata``, Vote, Begin/EndQuorumEpoch, FetchSnapshot) and
  the nodes' (AlterPartition, Envelope, Broker/ControllerRegistration, BrokerHeartbeat,
  AllocateProducerIds, AssignReplicasToDirs, UpdateRaftVoter) need CLUSTER_ACTION on the cluster
  (CLUSTER_AUTHORIZATION_FAILED). A raft request then gets KafkaRaftClient's first checks:
  INCONSISTENT_CLUSTER_ID for another cluster id, INVALID_REQUEST unless it names exactly
  ``__cluster_metadata``-0. kafka-shim keeps no metadata log and registers no nodes: what passes
  those checks is answered UNKNOWN_SERVER_ERROR, nothing is changed (NOT_IMPLEMENTED.md).
* ControlledShutdown (3.x), DescribeDelegationToken and DescribeUserScramCredentials are advertised
  but not handled by ControllerApis ("Unsupported ApiKey"): UNKNOWN_SERVER_ERROR.
"""

from __future__ import annotations

import struct
import uuid

from ..control.mirror import error_response as built_error
from ..errors import ErrorCode
from ..protocol.controller_releases import CONTROLLER_API_VERSIONS, NODE_APIS, RAFT_APIS, UNHANDLED_APIS
from ..protocol.kafka_releases import METADATA_VERSION
from ..security.acls import CLUSTER_NAME
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R
from ._operations import NOT_REQUESTED
from .k60_describe_cluster import BROKER as BROKER_ENDPOINT
from .k60_describe_cluster import CONTROLLER as CONTROLLER_ENDPOINT
from .k60_describe_cluster import endpoint_refusal
from .registry import REGISTRY

METADATA_TOPIC = "__cluster_metadata"
METADATA_TOPIC_ID = uuid.UUID(int=1)  # Kafka: Uuid.METADATA_TOPIC_ID
CONTROLLER_REGISTRATION_LEVEL = 15  # Kafka: MetadataVersion.IBP_3_7_IV0.isControllerRegistrationSupported
CONTROLLED_SHUTDOWN = 7
DESCRIBE_CLUSTER = 60


def versions(key: int, kafka_version: str) -> tuple[int, int] | None:
    """The versions of ``key`` the controller listener serves under the emulated release."""
    theirs = CONTROLLER_API_VERSIONS[kafka_version].get(key)
    if theirs is None:
        return None
    if key in HANDLERS or key == CONTROLLED_SHUTDOWN:
        return theirs
    spec = REGISTRY.get(key)
    if spec is None:
        return None
    low, high = max(spec.min_version, theirs[0]), min(spec.max_version, theirs[1])
    return (low, high) if low <= high else None


def advertised(kafka_version: str) -> list[tuple[int, int, int]]:
    """(key, min, max) of every API the controller's ApiVersions lists, by key."""
    return [(key, *v) for key in sorted(CONTROLLER_API_VERSIONS[kafka_version])
            if (v := versions(key, kafka_version)) is not None]


def is_controller(ctx) -> bool:
    return ctx.listener is not None and ctx.listener in ctx.node.controller_listeners


# -- DescribeCluster --------------------------------------------------------------------------

def describe_cluster(ctx, request):
    node = ctx.node
    if node.quorum.level(METADATA_VERSION) < CONTROLLER_REGISTRATION_LEVEL:
        return _describe_cluster_error(ctx, ErrorCode.unsupported_version, "Direct-to-controller communication is "
                                       "not supported with the current MetadataVersion.")
    if not ctx.authorize_cluster(O.ALTER):  # unlike the broker's, the controller's needs ALTER on the cluster
        return _describe_cluster_error(ctx, ErrorCode.cluster_authorization_failed, None)
    refused = endpoint_refusal(ctx, request, CONTROLLER_ENDPOINT)
    if refused is not None:
        return refused
    operations = NOT_REQUESTED
    if request.include_cluster_authorized_operations:
        operations = ctx.authorized_operations(R.CLUSTER, CLUSTER_NAME) if ctx.authorize_cluster(O.DESCRIBE) else 0
    voter = node.config.node_id  # the quorum's only voter and its leader (shim.apis.k55_describe_quorum)
    host, port = node.endpoints[ctx.listener]
    controllers = (ctx.make("DescribeClusterBroker", broker_id=voter, host=host, port=port, rack=None,
                            is_fenced=False),)
    return ctx.response(error_code=ErrorCode.none, error_message=None, endpoint_type=CONTROLLER_ENDPOINT,
                        cluster_id=node.config.cluster_id, controller_id=voter, brokers=controllers,
                        cluster_authorized_operations=operations)


def _describe_cluster_error(ctx, code, message):
    """Kafka: DescribeClusterResponseData with the error alone (its defaults elsewhere)."""
    return ctx.response(error_code=code, error_message=message, endpoint_type=BROKER_ENDPOINT, cluster_id="",
                        controller_id=-1, brokers=(), cluster_authorized_operations=NOT_REQUESTED)


# -- the quorum's and the nodes' own APIs -------------------------------------------------------

def raft_request(ctx, request):
    """Vote, BeginQuorumEpoch, EndQuorumEpoch, FetchSnapshot and Fetch on the controller listener."""
    if not ctx.authorize_cluster(O.CLUSTER_ACTION):
        return _top_level(ctx, ErrorCode.cluster_authorization_failed)
    cluster_id = getattr(request, "cluster_id", None)
    if cluster_id is not None and cluster_id != ctx.node.config.cluster_id:  # KafkaRaftClient.hasValidClusterId
        return _top_level(ctx, ErrorCode.inconsistent_cluster_id)
    if not _names_metadata_partition(ctx, request):
        return _top_level(ctx, ErrorCode.invalid_request)
    return _top_level(ctx, ErrorCode.unknown_server_error)  # no metadata log here


def _names_metadata_partition(ctx, request) -> bool:
    """Kafka: RaftUtil.hasValidTopicPartition -- exactly one topic, ``__cluster_metadata``, partition 0
    (Fetch from v13 by topic id)."""
    topics = request.topics
    if len(topics) != 1 or len(topics[0].partitions) != 1:
        return False
    topic, partition = topics[0], topics[0].partitions[0]
    if ctx.header.api_key == 1 and ctx.version >= 13:
        named = topic.topic_id == METADATA_TOPIC_ID
    else:  # Fetch's "topic", FetchSnapshot's "name", the quorum epochs' and Vote's "topic_name"
        named = next(getattr(topic, f) for f in ("topic", "name", "topic_name") if hasattr(topic, f)) == METADATA_TOPIC
    index = partition.partition if hasattr(partition, "partition") else partition.partition_index
    return named and index == 0


def node_request(ctx, request):
    """The brokers' and controllers' own requests to the active controller."""
    if not ctx.authorize_cluster(O.CLUSTER_ACTION):
        return _top_level(ctx, ErrorCode.cluster_authorization_failed)
    return _top_level(ctx, ErrorCode.unknown_server_error)  # no registrations, no partitions led by a controller


def unhandled(ctx, request):
    """Advertised, but ControllerApis.handle has no case for it: "Unsupported ApiKey"."""
    return _top_level(ctx, ErrorCode.unknown_server_error)


def _top_level(ctx, code):
    key = ctx.header.api_key
    if key == 1:  # Fetch: the raft answer carries its error at the top (FetchResponse.of an error)
        return ctx.response(error_code=code, session_id=0, responses=(), node_endpoints=())
    return built_error(key, ctx.version, None, code)


def controlled_shutdown(correlation_id: int, version: int) -> bytes:
    """ControlledShutdown (3.x only; kio has no schema of it), answered UNKNOWN_SERVER_ERROR with no
    remaining partitions: v0-2 a classic body, v3 a flexible one with its response header v1."""
    code = struct.pack(">h", ErrorCode.unknown_server_error.value)
    if version >= 3:
        return struct.pack(">i", correlation_id) + b"\x00" + code + b"\x01" + b"\x00"
    return struct.pack(">i", correlation_id) + code + struct.pack(">i", 0)


HANDLERS = {
    DESCRIBE_CLUSTER: describe_cluster,
    **dict.fromkeys(RAFT_APIS, raft_request),
    **dict.fromkeys(NODE_APIS, node_request),
    **dict.fromkeys(UNHANDLED_APIS - {CONTROLLED_SHUTDOWN}, unhandled),
}
NAMES = {1: "Fetch", 41: "DescribeDelegationToken", 50: "DescribeUserScramCredentials", 52: "Vote",
         53: "BeginQuorumEpoch", 54: "EndQuorumEpoch", 56: "AlterPartition", 58: "Envelope", 59: "FetchSnapshot",
         60: "DescribeCluster", 62: "BrokerRegistration", 63: "BrokerHeartbeat", 67: "AllocateProducerIds",
         70: "ControllerRegistration", 73: "AssignReplicasToDirs", 82: "UpdateRaftVoter"}
