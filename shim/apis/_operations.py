"""Authorized-operations bitfields as Kafka fills them without an authorizer.

Kafka's AuthHelper.authorizedOperations answers every operation AclEntry.supportedOperations lists
for the resource type when no authorizer is configured, as a bitfield of AclOperation codes
(Utils.to32BitField). A field that was not asked for keeps the schema default, -2147483648.
"""

NOT_REQUESTED = -(2**31)

# AclOperation codes
READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE = 3, 4, 5, 6, 7, 8
CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE = 9, 10, 11, 12


def _bits(*codes: int) -> int:
    return sum(1 << c for c in codes)


# AclEntry.supportedOperations(TOPIC / GROUP / CLUSTER) in Kafka 3.9
TOPIC = _bits(READ, WRITE, CREATE, DESCRIBE, DELETE, ALTER, DESCRIBE_CONFIGS, ALTER_CONFIGS)
GROUP = _bits(READ, DESCRIBE, DELETE)
CLUSTER = _bits(CREATE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, ALTER, DESCRIBE)
