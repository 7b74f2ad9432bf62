"""IncrementalAlterConfigs (44), v0-1: SET, DELETE, APPEND, SUBTRACT on a resource's configs.

TOPIC and BROKER as AlterConfigs (33) but changing only the named configs; APPEND/SUBTRACT only for
LIST configs (INVALID_CONFIG "Can't APPEND to key .. because its type is not LIST."). BROKER_LOGGER
with this broker's id sets (SET) or resets (DELETE) the level of a broker's Python logger, by
log4j's names (FATAL, ERROR, WARN, INFO, DEBUG, TRACE), live and not persisted, as Kafka.
validate_only checks without changing anything.
"""

from ..configs.admin import Op
from ._alter_configs import alter_resources
from .registry import api


@api(44, "IncrementalAlterConfigs", 0, 1)
async def handle(ctx, request):
    return await alter_resources(ctx, request, lambda r: [Op(c.name, c.config_operation, c.value) for c in r.configs], incremental=True)
