"""DeleteTopics (20), v0-6: by name, or from v6 by topic id. Internal topics cannot be deleted.
v0 (3.x emulation only: Kafka 4.0 removed it, KIP-896) is v1 without ThrottleTimeMs.
The topic leaves every answer at once; its files are removed off the event loop before the answer."""

from ..errors import ErrorCode, KafkaError
from ..storage.log_manager import INTERNAL_TOPICS
from ..security.acls import AclOperation as O
from ..security.acls import ResourceType as R
from ._pace import Pacer
from .registry import api



@api(20, "DeleteTopics", 0, 6)
async def handle(ctx, request):
    if ctx.version >= 6:
        wanted = [(t.name, t.topic_id) for t in request.topics]
    else:
        wanted = [(name, None) for name in request.topic_names]
    # paced: names of no topic are refused without awaiting anything, 0.4 s of the loop a megabyte
    return ctx.response(responses=tuple([await _delete(ctx, name, topic_id)
                                         async for name, topic_id in Pacer().each(wanted)]))


async def _delete(ctx, name, topic_id):
    logs = ctx.node.logs
    try:
        if name is None and topic_id is not None:
            info = logs.topic_by_id(topic_id)
            if info is None:
                raise KafkaError(ErrorCode.unknown_topic_id)
            if not ctx.authorize(O.DESCRIBE, R.TOPIC, info.name):  # Kafka: the name of an id stays hidden
                raise KafkaError(ErrorCode.topic_authorization_failed)
            name = info.name
        if not ctx.authorize(O.DELETE, R.TOPIC, name):
            raise KafkaError(ErrorCode.topic_authorization_failed)
        info = logs.topic(name)
        if name in INTERNAL_TOPICS:
            raise KafkaError(ErrorCode.topic_deletion_disabled, f"internal topic {name} cannot be deleted")
        await logs.delete_topic_async(name)
    except KafkaError as e:
        return ctx.make("DeletableTopicResult", name=name, topic_id=topic_id, error_code=e.code, error_message=e.message)
    return ctx.make("DeletableTopicResult", name=name, topic_id=info.topic_id, error_code=ErrorCode.none, error_message=None)
