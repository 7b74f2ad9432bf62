"""AlterConfigs (33), v0-2: replace a resource's whole set of configs (the legacy, non-incremental API).

TOPIC: the topic's overrides become exactly the given ones, validated as at CreateTopics
(INVALID_CONFIG with Kafka's message), persisted with the topic, applied live to its partitions.
BROKER with this broker's id, or "" for the cluster default: the dynamic broker configs of that
level, checked as DynamicBrokerConfig.validate (read-only config -> INVALID_REQUEST "Cannot update
these configs dynamically: Set(..)", per-broker config at the cluster level -> INVALID_REQUEST),
persisted atomically and applied live. GROUP: the group's configs become exactly the given ones,
validated as IncrementalAlterConfigs validates them (shim.configs.group). validate_only checks without changing anything. A resource
named twice gets INVALID_REQUEST for both; BROKER_LOGGER is not served by this API (INVALID_REQUEST),
as in Kafka.
"""

from ..configs.admin import SET, Op
from ._alter_configs import alter_resources
from .registry import api


@api(33, "AlterConfigs", 0, 2)
async def handle(ctx, request):
    return await alter_resources(ctx, request, lambda r: [Op(c.name, SET, c.value) for c in r.configs], incremental=False)
