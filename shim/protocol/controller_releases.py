"""What each emulated Apache Kafka release's controller listener advertises in ApiVersions.

Data only. Source: ``clients/src/main/resources/common/message/*Request.json`` at each release tag
(3.7.0, 3.8.0, 3.9.0-rc3 of apache/kafka; 4.0.0 and 4.1.0 as the community tags v8.0.0 and v8.1.0
of Confluent's fork, as shim.protocol.kafka_releases), the APIs whose ``listeners`` include
``controller``, at ``validVersions`` (none of them has an unstable latest version there). The
controller advertises every one of them (ControllerServer's SimpleApiVersionManager over
ApiKeys.apisForListener(CONTROLLER)), with the same supported and finalized features as the broker.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

# what the controller's ApiVersions lists as the quorum's own: raft and the brokers' lifecycle
RAFT_APIS = frozenset({1, 52, 53, 54, 59})  # Fetch (of __cluster_metadata), Vote, Begin/EndQuorumEpoch, FetchSnapshot
NODE_APIS = frozenset({56, 58, 62, 63, 67, 70, 73, 82})  # AlterPartition, Envelope, Broker/ControllerRegistration ...
# advertised by the controller but not handled by ControllerApis (its "Unsupported ApiKey")
UNHANDLED_APIS = frozenset({7, 41, 50})  # ControlledShutdown, DescribeDelegationToken, DescribeUserScramCredentials

_CONTROLLER_3_7 = {
    1: (0, 16), 7: (0, 3), 17: (0, 1), 18: (0, 3), 19: (0, 7), 20: (0, 6), 29: (0, 3), 30: (0, 3), 31: (0, 3),
    32: (0, 4), 33: (0, 2), 36: (0, 2), 37: (0, 3), 38: (0, 3), 39: (0, 2), 40: (0, 2), 41: (0, 3), 43: (0, 2),
    44: (0, 1), 45: (0, 0), 46: (0, 0), 49: (0, 1), 50: (0, 0), 51: (0, 0), 52: (0, 0), 53: (0, 0), 54: (0, 0),
    55: (0, 1), 56: (0, 3), 57: (0, 1), 58: (0, 0), 59: (0, 0), 60: (0, 1), 62: (0, 3), 63: (0, 1), 64: (0, 0),
    67: (0, 0), 70: (0, 0), 73: (0, 0),
}
_CONTROLLER_3_9 = {
    **_CONTROLLER_3_7, 1: (0, 17), 18: (0, 4), 52: (0, 1), 53: (0, 1), 54: (0, 1), 55: (0, 2), 59: (0, 1),
    62: (0, 4), 80: (0, 0), 81: (0, 0), 82: (0, 0),
}
# 4.0: KIP-896's raised minimums, no ControlledShutdown (ZooKeeper's), new maxima
_CONTROLLER_4_0 = {
    **{k: v for k, v in _CONTROLLER_3_9.items() if k != 7}, 1: (4, 17), 19: (2, 7), 20: (1, 6), 29: (1, 3),
    30: (1, 3), 31: (1, 3), 32: (1, 4), 38: (1, 3), 39: (1, 2), 40: (1, 2), 41: (1, 3), 52: (0, 2), 56: (2, 3),
    57: (0, 2), 60: (0, 2),
}
_CONTROLLER_4_1 = {**_CONTROLLER_4_0, 1: (4, 18), 45: (0, 1)}

CONTROLLER_API_VERSIONS: Mapping[str, Mapping[int, tuple[int, int]]] = MappingProxyType({
    "3.7": MappingProxyType(_CONTROLLER_3_7),
    "3.8": MappingProxyType(_CONTROLLER_3_7),  # 3.8.0's controller APIs are 3.7.0's
    "3.9": MappingProxyType(_CONTROLLER_3_9),
    "4.0": MappingProxyType(_CONTROLLER_4_0),
    "4.1": MappingProxyType(_CONTROLLER_4_1),
})
