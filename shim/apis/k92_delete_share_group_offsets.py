"""DeleteShareGroupOffsets (92), v0: remove an empty share group's share state of whole topics
(KIP-932), as Kafka 4.1 does (KafkaApis.handleDeleteShareGroupOffsetsRequest,
GroupCoordinatorShard.initiateDeleteShareGroupOffsets).

In this order: UNSUPPORTED_VERSION until share.version 1 is finalized; DELETE on the group
(GROUP_AUTHORIZATION_FAILED); per topic, READ on it (TOPIC_AUTHORIZATION_FAILED, zero topic id).
With no topic left the answer is those errors alone. Then the group: an empty id is
INVALID_GROUP_ID, another broker's group NOT_COORDINATOR, an id no share group has
GROUP_ID_NOT_FOUND and a group with members NON_EMPTY_GROUP, each as the top-level error with
nothing else. A topic that does not exist is UNKNOWN_TOPIC_OR_PARTITION, one the group has no share
state of UNKNOWN_TOPIC_OR_PARTITION "There is no offset information to delete."; the others lose
their share state, so the group's next ShareFetch starts them from share.auto.offset.reset. The
answer lists the refused topics, then the deleted ones, then the rest, as Kafka does.
"""

from ..cluster import GROUP
from ..errors import ErrorCode as E
from ..errors import KafkaError
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R
from ._authz import denied_topics_paced
from ._loading import LOADING, loading
from ._pace import Pacer
from ._share import is_other_group, share_groups_enabled
from ._share_offsets import ZERO_UUID, id_of, message
from .registry import api

NO_OFFSETS = "There is no offset information to delete."


@api(92, "DeleteShareGroupOffsets", 0, 0)
async def handle(ctx, request):
    if not share_groups_enabled(ctx):
        return error_response(ctx, request, E.unsupported_version)
    if not ctx.authorize(O.DELETE, R.GROUP, request.group_id):
        return error_response(ctx, request, E.group_authorization_failed)
    names = list(dict.fromkeys(t.topic_name for t in request.topics))
    refused = await denied_topics_paced(ctx, names, Pacer())
    results = [_topic(ctx, t, E.topic_authorization_failed, message(E.topic_authorization_failed), ZERO_UUID)
               for t in names if t in refused]
    wanted = [t for t in names if t not in refused]
    if not wanted:
        return _answer(ctx, results)
    try:
        _check_group(ctx, request.group_id)
        deleted, failed = _delete(ctx, request.group_id, wanted)
    except KafkaError as e:
        return error_response(ctx, request, e.code, e.message)
    return _answer(ctx, results + deleted + failed)


def _check_group(ctx, group_id) -> None:
    if not group_id:
        raise KafkaError(E.invalid_group_id, message(E.invalid_group_id))
    if not ctx.coordinates(GROUP, group_id):
        raise KafkaError(E.not_coordinator, message(E.not_coordinator))
    if loading(ctx):  # after the request's own checks (shim.apis._loading)
        raise KafkaError(LOADING, message(LOADING))
    if is_other_group(ctx, group_id):  # Kafka: GroupMetadataManager.shareGroup
        raise KafkaError(E.group_id_not_found, f"Group {group_id} is not a share group.")
    ctx.node.share.empty_group(group_id)


def _delete(ctx, group_id, topics):
    held = {t for t, _ in ctx.node.share.start_offsets(group_id)}
    unknown = [t for t in topics if t not in ctx.node.logs.topics]
    empty = [t for t in topics if t in ctx.node.logs.topics and t not in held]
    deleting = [t for t in topics if t in ctx.node.logs.topics and t in held]
    if deleting:
        ctx.node.share.delete_start_offsets(group_id, deleting)
    failed = [_topic(ctx, t, E.unknown_topic_or_partition, message(E.unknown_topic_or_partition), ZERO_UUID)
              for t in unknown]
    failed += [_topic(ctx, t, E.unknown_topic_or_partition, NO_OFFSETS, ZERO_UUID) for t in empty]
    return [_topic(ctx, t, E.none, None, id_of(ctx, t)) for t in deleting], failed


def _topic(ctx, topic, code, text, topic_id):
    return ctx.make("DeleteShareGroupOffsetsResponseTopic", topic_name=topic, topic_id=topic_id, error_code=code,
                    error_message=text)


def _answer(ctx, topics):
    return ctx.response(error_code=E.none, error_message=None, responses=tuple(topics))


def error_response(ctx, request, code, text=None):
    """Kafka: DeleteShareGroupOffsetsRequest.getErrorResponse -- the top-level error alone."""
    return ctx.response(error_code=code, error_message=text or message(code), responses=())
