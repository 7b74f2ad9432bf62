"""RemoveRaftVoter (81), v0 (KIP-853): remove a controller from the metadata quorum.

Kafka's broker forwards it to the controller's KafkaRaftClient: after the cluster id
(INCONSISTENT_CLUSTER_ID), a voter key with a directory id (INVALID_REQUEST) and kraft.version 1
(UNSUPPORTED_VERSION), RemoveVoterHandler removes the voter only when the key matches a voter and
others remain (VoterSet.removeVoter). This node is the only voter, so every valid request is
VOTER_NOT_FOUND, as Kafka answers a single-voter quorum. With an authorizer it needs ALTER on the cluster.
"""

from ..errors import ErrorCode, KafkaError
from ._raft_voters import answer, check_reconfiguration, check_request, replica_key, voter_keys
from .registry import api


@api(81, "RemoveRaftVoter", 0, 0)
def handle(ctx, request):
    try:
        check_request(ctx, request, "remove")
        check_reconfiguration(ctx, "removing")
    except KafkaError as e:
        return answer(ctx, e)
    key = replica_key(request.voter_id, request.voter_directory_id)
    return answer(ctx, KafkaError(ErrorCode.voter_not_found,
                                  f"Cannot remove voter {key} from the set of voters {voter_keys(ctx)}"))


def error_response(ctx, request, code):
    return ctx.response(error_code=code, error_message=None)
