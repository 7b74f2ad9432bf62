"""KIP-714 client telemetry as a Kafka broker without a telemetry receiver answers it
(Kafka: ClientMetricsManager, ClientMetricsInstance).

kafka-shim has no telemetry receiver, so, like a default Kafka, it does not advertise
GetTelemetrySubscriptions (71) and PushTelemetry (72); a client that sends them anyway is answered
as Kafka answers. Each client instance gets an id (a random one when the request has the zero id,
never a reserved one nor one whose base64 form starts with ``-``), the subscription of the
CLIENT_METRICS resources it matches (shim.configs.client_metrics: by its instance id, the client id
and source address and port of the request that made it, the software name and version its
connection's ApiVersions gave; with none, no metrics and Kafka's default push interval of 5
minutes), ZSTD, LZ4, GZIP and SNAPPY accepted, ``telemetry.max.bytes``, delta temporality, and a
subscription id: the CRC32C of the metrics set as Java prints it followed by the interval, XORed
with the id's hash. A change to any subscription makes each instance's next request evaluate it
afresh, as a new instance (no throttling carried over), as Kafka's subscriptionUpdateVersion does. A push is checked in Kafka's
order: a terminating instance is INVALID_REQUEST, a push before the interval is up is
THROTTLING_QUOTA_EXCEEDED (the first push after a GetTelemetrySubscriptions is always on time),
then UNKNOWN_SUBSCRIPTION_ID, UNSUPPORTED_COMPRESSION_TYPE (an id no codec has) and
TELEMETRY_TOO_LARGE; the metrics themselves go nowhere. A GetTelemetrySubscriptions before the
interval is up is THROTTLING_QUOTA_EXCEEDED -- from 4.1, not after a push was refused for its
subscription id or compression type (the check of Kafka 3.x and 4.0 refuses it anyway: its ``||``
where ``&&`` was meant, fixed by apache/kafka#19959).

Instances live in memory, at most 16,384 (least recently used dropped first), each until
max(60 s, 3 push intervals) after its last request; from 4.0 also until the connection that
created it closes (KAFKA-17778). The module is sans-IO: callers pass the time.
"""

from __future__ import annotations

import base64
import collections
import os
import struct
import uuid
from dataclasses import dataclass
from typing import Callable

from .errors import ErrorCode

SUPPORTED_COMPRESSION_TYPES = (4, 3, 1, 2)  # ZSTD, LZ4, GZIP, SNAPPY, the broker's preference first
KNOWN_COMPRESSION_TYPES = range(0, 5)  # Kafka: CompressionType.forId
DEFAULT_PUSH_INTERVAL_MS = 300_000  # ClientMetricsConfigs: interval.ms default
CACHE_MAX_SIZE = 16_384
CACHE_EXPIRY_MS = 60_000
ZERO_UUID = uuid.UUID(int=0)
RESERVED = frozenset({ZERO_UUID, uuid.UUID(int=1)})  # Kafka: Uuid.RESERVED (ZERO_UUID, ONE_UUID)
# Kafka 4.1 fixed GetTelemetrySubscriptions' throttle check so that these errors let the next one through
UNTHROTTLED_AFTER = frozenset({ErrorCode.unknown_subscription_id, ErrorCode.unsupported_compression_type})


def java_uuid_hash(u: uuid.UUID) -> int:
    """Kafka: Uuid.hashCode -- the two halves XORed, folded to 32 bits."""
    xor = (u.int >> 64) ^ (u.int & (1 << 64) - 1)
    return (xor >> 32) ^ (xor & 0xFFFFFFFF)


def subscription_id(metrics: tuple[str, ...], push_interval_ms: int, instance_id: uuid.UUID) -> int:
    """Kafka: ClientMetricsManager.computeSubscriptionId (as a signed int32)."""
    from crc32c import crc32c

    text = "[" + ", ".join(metrics) + "]" + str(push_interval_ms)  # Java's Set.toString, then the interval
    value = crc32c(text.encode()) ^ java_uuid_hash(instance_id)
    return struct.unpack(">i", struct.pack(">I", value & 0xFFFFFFFF))[0]


def java_uuid_string(u: uuid.UUID) -> str:
    """Kafka: Uuid.toString -- URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(u.bytes).rstrip(b"=").decode()


def random_instance_id(taken: Callable[[uuid.UUID], bool]) -> uuid.UUID:
    """Kafka: Uuid.randomUuid (no reserved id, none whose base64 starts with '-') not yet taken."""
    while True:
        u = uuid.UUID(bytes=os.urandom(16), version=4)
        if u not in RESERVED and u.bytes[0] >> 2 != 62 and not taken(u):
            return u


@dataclass(slots=True)
class Instance:
    instance_id: uuid.UUID
    subscription_id: int
    push_interval_ms: int = DEFAULT_PUSH_INTERVAL_MS
    metrics: tuple[str, ...] = ()
    last_get_ms: int = 0
    last_push_ms: int = 0
    terminating: bool = False
    last_error: ErrorCode = ErrorCode.none
    expires_ms: int = 0
    connection: object = None
    subscription_version: int = 0
    attributes: dict | None = None  # Kafka: ClientMetricsInstanceMetadata, what subscriptions match on

    def get_on_time(self, now_ms: int) -> bool:
        """Kafka: ClientMetricsInstance.maybeUpdateGetRequestTimestamp."""
        if now_ms - max(self.last_get_ms, self.last_push_ms) >= self.push_interval_ms:
            self.last_get_ms = now_ms
            return True
        return False

    def push_on_time(self, now_ms: int) -> bool:
        """Kafka: maybeUpdatePushRequestTimestamp -- the first push after a get is accepted early
        (clients jitter the interval)."""
        if self.last_get_ms > self.last_push_ms or now_ms - self.last_push_ms >= self.push_interval_ms:
            self.last_push_ms = now_ms
            return True
        return False


class ClientMetricsManager:
    def __init__(self, telemetry_max_bytes: int, drop_on_disconnect: bool,
                 forgiving_get: bool, max_instances: int = CACHE_MAX_SIZE, subscriptions=None) -> None:
        self.subscriptions = subscriptions  # shim.configs.client_metrics.ClientMetricsConfigs, or none
        self.telemetry_max_bytes = telemetry_max_bytes
        self.drop_on_disconnect = drop_on_disconnect  # Kafka 4.0+ (KAFKA-17778)
        self.forgiving_get = forgiving_get  # Kafka 4.1+: UNTHROTTLED_AFTER
        self.max_instances = max_instances
        self.instances: collections.OrderedDict[uuid.UUID, Instance] = collections.OrderedDict()
        self.by_connection: dict[object, uuid.UUID] = {}

    # -- the two requests ---------------------------------------------------------------------

    def get_subscriptions(self, instance_id: uuid.UUID | None, connection, now_ms: int,
                          attributes: dict | None = None) -> tuple[ErrorCode, Instance]:
        """GetTelemetrySubscriptions: (error, the instance). ``attributes``: the requester's
        client_id, client_software_name/version, client_source_address/port."""
        if instance_id is None or instance_id == ZERO_UUID:
            instance_id = random_instance_id(lambda u: u in self.instances)
        instance = self._instance(instance_id, connection, now_ms, attributes)
        if not instance.get_on_time(now_ms) and not (self.forgiving_get and instance.last_error in UNTHROTTLED_AFTER):
            return ErrorCode.throttling_quota_exceeded, instance
        instance.last_error = ErrorCode.none
        return ErrorCode.none, instance

    def push(self, instance_id: uuid.UUID | None, subscription: int, terminating: bool, compression_type: int,
             metrics_size: int, connection, now_ms: int, attributes: dict | None = None) -> ErrorCode:
        """PushTelemetry: the error code of the answer."""
        if instance_id is None or instance_id in RESERVED:
            return ErrorCode.invalid_request
        instance = self._instance(instance_id, connection, now_ms, attributes)
        error = self._check_push(instance, subscription, terminating, compression_type, metrics_size, now_ms)
        instance.terminating = terminating  # Kafka sets it whatever the outcome
        instance.last_error = error  # no receiver to export to: an accepted push is NONE
        return error

    def _check_push(self, instance: Instance, subscription: int, terminating: bool, compression_type: int,
                    metrics_size: int, now_ms: int) -> ErrorCode:
        """Kafka: ClientMetricsManager.validatePushRequest, in its order."""
        if instance.terminating:
            return ErrorCode.invalid_request
        if not instance.push_on_time(now_ms) and not terminating:
            return ErrorCode.throttling_quota_exceeded
        if subscription != instance.subscription_id:
            return ErrorCode.unknown_subscription_id
        if compression_type not in KNOWN_COMPRESSION_TYPES:
            return ErrorCode.unsupported_compression_type
        if metrics_size > self.telemetry_max_bytes:
            return ErrorCode.telemetry_too_large
        return ErrorCode.none

    # -- the instance cache ------------------------------------------------------------------

    def _evaluated(self, instance_id: uuid.UUID, attributes: dict | None) -> Instance:
        """Kafka: ClientMetricsManager.createClientInstance."""
        attributes = {**(attributes or {}), "client_instance_id": java_uuid_string(instance_id)}
        if self.subscriptions is None:
            return Instance(instance_id, subscription_id((), DEFAULT_PUSH_INTERVAL_MS, instance_id), attributes=attributes)
        metrics, interval = self.subscriptions.matching(attributes)
        return Instance(instance_id, subscription_id(metrics, interval, instance_id), push_interval_ms=interval,
                        metrics=metrics, subscription_version=self.subscriptions.version, attributes=attributes)

    def _instance(self, instance_id: uuid.UUID, connection, now_ms: int, attributes: dict | None = None) -> Instance:
        self._expire(now_ms)
        instance = self.instances.get(instance_id)
        if instance is not None and self.subscriptions is not None \
                and instance.subscription_version < self.subscriptions.version:
            self._drop(instance_id)  # evaluated afresh from the metadata of the request that made it
            instance = self._evaluated(instance_id, instance.attributes)
            self._add(instance, connection)
        elif instance is None:
            instance = self._evaluated(instance_id, attributes)
            self._add(instance, connection)
        self.instances.move_to_end(instance_id)
        instance.expires_ms = now_ms + max(CACHE_EXPIRY_MS, 3 * instance.push_interval_ms)
        return instance

    def _add(self, instance: Instance, connection) -> None:
        if len(self.instances) >= self.max_instances:
            self._drop(next(iter(self.instances)))
        self.instances[instance.instance_id] = instance
        if self.drop_on_disconnect and connection is not None:
            instance.connection = connection
            self.by_connection[connection] = instance.instance_id

    def _expire(self, now_ms: int) -> None:
        """Instances are in the order of their last request, so of their expiry (one push interval)."""
        while self.instances:
            first = next(iter(self.instances.values()))
            if first.expires_ms > now_ms:
                return
            self._drop(first.instance_id)

    def _drop(self, instance_id: uuid.UUID) -> None:
        instance = self.instances.pop(instance_id)
        if instance.connection is not None and self.by_connection.get(instance.connection) == instance_id:
            del self.by_connection[instance.connection]

    def disconnected(self, connection) -> None:
        """The connection closed: the instance it created goes (Kafka 4.0+)."""
        instance_id = self.by_connection.pop(connection, None)
        if instance_id is not None and instance_id in self.instances:
            self.instances.pop(instance_id)
