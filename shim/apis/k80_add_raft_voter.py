"""AddRaftVoter (80), v0 (KIP-853): add a controller to the metadata quorum.

Kafka's broker forwards it to the controller's KafkaRaftClient. Its checks, in order: the cluster
id (INCONSISTENT_CLUSTER_ID), a voter id and directory id (INVALID_REQUEST), an endpoint for the
quorum's listener (INVALID_REQUEST), kraft.version 1 (UNSUPPORTED_VERSION), a voter id that is not
already a voter (DUPLICATE_VOTER: this node is the only voter). Kafka then asks the new voter for
its ApiVersions and waits for it to catch up with the metadata log as an observer; no other node
can replicate a kafka-shim quorum, so such a request is answered REQUEST_TIMED_OUT at once, where
Kafka answers it so when the new voter fails to catch up (see NOT_IMPLEMENTED.md). With an authorizer it needs ALTER on the cluster.
"""

from ..errors import ErrorCode, KafkaError
from ._raft_voters import answer, check_reconfiguration, check_request, replica_key, voter_keys
from .registry import api


@api(80, "AddRaftVoter", 0, 0)
def handle(ctx, request):
    try:
        check_request(ctx, request, "add")
        listener = ctx.node.quorum_listeners[0]  # the quorum's listener (Kafka: the first controller listener)
        if not any(l.name == listener for l in request.listeners):
            raise KafkaError(ErrorCode.invalid_request, f"Add voter request didn't include the endpoint for the "
                                                        f"default listener {listener}")
        check_reconfiguration(ctx, "adding")
    except KafkaError as e:
        return answer(ctx, e)
    key = replica_key(request.voter_id, request.voter_directory_id)
    if request.voter_id == ctx.node.config.node_id:
        return answer(ctx, KafkaError(ErrorCode.duplicate_voter, f"The voter id for {key} is already part of the "
                                                                 f"set of voters {voter_keys(ctx)}."))
    return answer(ctx, KafkaError(ErrorCode.request_timed_out, f"Aborted add voter operation for {key} since it is "
                                                               f"lagging behind: a kafka-shim quorum has one voter "
                                                               f"and no observers"))


def error_response(ctx, request, code):
    return ctx.response(error_code=code, error_message=None)
