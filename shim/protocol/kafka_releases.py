"""What each emulated Apache Kafka release tells clients in ApiVersions.

Data only. For every release: the API version ranges its broker listener advertises, the
``metadata.version`` feature level and the features it supports and finalizes by default.
kafka-shim intersects the API ranges with what it serves (shim.apis.registry.emulated_range).

Sources, read at each release tag (``X.Y.0``) of apache/kafka (4.0.0 and 4.1.0 read from the
community tags v8.0.0 and v8.1.0 of Confluent's fork, whose message schemas were checked identical
to Apache's for 3.7.0, 3.8.0 and 3.9.0):

* API ranges: ``clients/src/main/resources/common/message/*Request.json``, APIs whose
  ``listeners`` include ``broker``; ``validVersions`` less the last version when
  ``latestVersionUnstable`` is true (``unstable.api.versions.enable`` is off by default;
  Kafka: ApiKeys.toApiVersion, ApiVersionsResponse.filterApis). GetTelemetrySubscriptions (71) and
  PushTelemetry (72), v0 in every release here, are on the broker listener too, but Kafka advertises
  them only when a metrics reporter that receives client telemetry is configured
  (ClientMetricsManager.isTelemetryReceiverConfigured; none by default), so they are kept apart in
  ``TELEMETRY_APIS``: kafka-shim has no such receiver and, like a default Kafka, does not advertise
  them but answers them (clients only push telemetry to a broker that advertises them, KIP-714;
  shim.apis.registry serves them unadvertised).
  Checked against the tags by reading every ``*Request.json`` (3.7.0, 3.8.0, 3.9.0).
  4.0 and 4.1 advertise Produce from version 0 although they serve it from 3 (KAFKA-18659);
  these tables hold the versions served, which is what a request at an older version finds out.
* ``metadata.version``: ``MetadataVersion.LATEST_PRODUCTION`` (the level a new cluster is
  formatted at), supported from ``MINIMUM_KRAFT_VERSION`` (3.x) or ``MINIMUM_VERSION`` (4.x).
* Other features: ``server-common``'s Features (3.8, 3.9) / Feature (4.x) enum and each
  FeatureVersion (KRaftVersion, TransactionVersion, GroupVersion,
  EligibleLeaderReplicasVersion, ShareVersion, StreamsVersion). Supported: every production
  feature whose latest production level is above 0, from its lowest level
  (BrokerFeatures.defaultSupportedFeatures). Finalized: what ``kafka-storage format`` gives each
  feature by default at that metadata.version (Formatter: ``Feature.defaultLevel``), with
  kraft.version 1 from the quickstart's ``--standalone`` (a dynamic quorum; 3.7 and 3.8 have no
  kraft.version feature). Levels of 0 are not sent (ApiVersionsResponse.createFinalizedFeatureKeys).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"
TRANSACTION_VERSION = "transaction.version"
GROUP_VERSION = "group.version"
ELR_VERSION = "eligible.leader.replicas.version"
SHARE_VERSION = "share.version"

# The metadata log offset a new single-node cluster's finalized features carry as their epoch is
# a small positive number; any value >= 0 tells clients that features are finalized.
FINALIZED_FEATURES_EPOCH = 1


@dataclass(frozen=True)
class KafkaRelease:
    name: str
    """"3.9": what ``--kafka-version`` takes."""
    tag: str
    api_versions: Mapping[int, tuple[int, int]]
    """API key -> (min, max) advertised by the release's broker listener."""
    supported_features: Mapping[str, tuple[int, int]]
    finalized_features: Mapping[str, int]
    """Feature -> level of a cluster formatted with the release's defaults (levels > 0 only)."""

    @property
    def scram_nonce_check(self) -> str:
        """How ScramSaslServer compares the client-final message's nonce with the server-first one
        (CVE-2024-56128): "none" before 3.8.1 (3.7.0, 3.8.0), "suffix" in 3.8.1 and 3.9 (``endsWith``:
        librdkafka < 2.6.1 sends its client nonce twice), "exact" from 4.0 (``equals``)."""
        major, minor = (int(part) for part in self.name.split(".")[:2])
        if major >= 4:
            return "exact"
        return "suffix" if minor >= 9 else "none"

    @property
    def new_group_coordinator(self) -> bool:
        """Kafka 4.0 removed the old group coordinator (kafka.coordinator.group.GroupCoordinator);
        3.9 runs it unless the consumer protocol is enabled, which kafka-shim's 3.9 does not do."""
        return int(self.name.split(".")[0]) >= 4

    @property
    def transaction_version(self) -> int:
        """1: KIP-890 part 1 only; 2: an epoch bump per transaction (KIP-890 part 2)."""
        return self.finalized_features.get(TRANSACTION_VERSION, 0)


def _release(name: str, tag: str, apis: dict, supported: dict, finalized: dict) -> KafkaRelease:
    return KafkaRelease(name, tag, MappingProxyType(apis), MappingProxyType(supported),
                        MappingProxyType(finalized))


# Per release: {api_key: (min, max)}. The 3.x lines differ only where a release added a version.
_COMMON_3X = {
    3: (0, 12), 8: (0, 9), 9: (0, 9), 11: (0, 9), 12: (0, 4), 13: (0, 5), 14: (0, 5), 15: (0, 5),
    17: (0, 1), 19: (0, 7), 20: (0, 6), 21: (0, 2), 23: (0, 4), 27: (0, 1), 29: (0, 3), 30: (0, 3),
    31: (0, 3), 32: (0, 4), 33: (0, 2), 34: (0, 2), 35: (0, 4), 36: (0, 2), 37: (0, 3), 38: (0, 3),
    39: (0, 2), 40: (0, 2), 41: (0, 3), 42: (0, 2), 43: (0, 2), 44: (0, 1), 45: (0, 0), 46: (0, 0),
    47: (0, 0), 48: (0, 1), 49: (0, 1), 50: (0, 0), 51: (0, 0), 57: (0, 1), 60: (0, 1), 61: (0, 0),
    64: (0, 0), 65: (0, 0), 68: (0, 0), 74: (0, 0),
}
_API_3_7 = {**_COMMON_3X, 0: (0, 10), 1: (0, 16), 2: (0, 8), 10: (0, 4), 16: (0, 4), 18: (0, 3), 22: (0, 4),
            24: (0, 4), 25: (0, 3), 26: (0, 3), 28: (0, 3), 55: (0, 1), 66: (0, 0)}
_API_3_8 = {**_COMMON_3X, 0: (0, 11), 1: (0, 16), 2: (0, 8), 10: (0, 5), 16: (0, 5), 18: (0, 3), 22: (0, 5),
            24: (0, 5), 25: (0, 4), 26: (0, 4), 28: (0, 4), 55: (0, 1), 66: (0, 1), 69: (0, 0), 75: (0, 0)}
_API_3_9 = {**_API_3_8, 1: (0, 17), 2: (0, 9), 10: (0, 6), 18: (0, 4), 55: (0, 2), 80: (0, 0), 81: (0, 0)}
# 4.0 removed the versions KIP-896 deprecated (raised minimums) and added new maxima.
_API_4_0 = {
    **_API_3_9, 0: (3, 12), 1: (4, 17), 2: (1, 10), 3: (0, 13), 8: (2, 9), 9: (1, 9), 11: (2, 9), 15: (0, 6),
    19: (2, 7), 20: (1, 6), 23: (2, 4), 26: (0, 5), 27: (1, 1), 28: (0, 5), 29: (1, 3), 30: (1, 3),
    31: (1, 3), 32: (1, 4), 34: (1, 2), 35: (1, 4), 38: (1, 3), 39: (1, 2), 40: (1, 2), 41: (1, 3),
    57: (0, 2), 60: (0, 2), 68: (0, 1), 69: (0, 1),
}
# 4.1 restored JoinGroup v0-1 and added share groups' APIs (76-79, 83-87, 90-92).
_API_4_1 = {
    **_API_4_0, 0: (3, 13), 1: (4, 18), 11: (0, 9), 45: (0, 1), 66: (0, 2), 74: (0, 1),
    76: (1, 1), 77: (1, 1), 78: (1, 1), 79: (1, 1), 83: (0, 0), 84: (0, 0), 85: (0, 0), 86: (0, 0),
    87: (0, 0), 90: (0, 0), 91: (0, 0), 92: (0, 0),
}

# KIP-714 client telemetry: on the broker listener of every release here, advertised only with a
# telemetry receiver (see the module docstring).
TELEMETRY_APIS: Mapping[int, tuple[int, int]] = MappingProxyType({71: (0, 0), 72: (0, 0)})

RELEASES: Mapping[str, KafkaRelease] = MappingProxyType({
    "3.7": _release("3.7", "3.7.0", _API_3_7, {METADATA_VERSION: (1, 19)}, {METADATA_VERSION: 19}),
    "3.8": _release("3.8", "3.8.0", _API_3_8, {METADATA_VERSION: (1, 20)}, {METADATA_VERSION: 20}),
    # 3.9 defines transaction.version 1-2 but only from metadata.version 4.0: level 0, not listed.
    "3.9": _release("3.9", "3.9.0", _API_3_9, {METADATA_VERSION: (1, 21), KRAFT_VERSION: (0, 1)},
                    {METADATA_VERSION: 21, KRAFT_VERSION: 1}),
    "4.0": _release(
        "4.0", "4.0.0", _API_4_0,
        {METADATA_VERSION: (7, 25), KRAFT_VERSION: (0, 1), TRANSACTION_VERSION: (0, 2), GROUP_VERSION: (0, 1),
         ELR_VERSION: (0, 1)},
        {METADATA_VERSION: 25, KRAFT_VERSION: 1, TRANSACTION_VERSION: 2, GROUP_VERSION: 1},
    ),
    "4.1": _release(
        "4.1", "4.1.0", _API_4_1,
        {METADATA_VERSION: (7, 27), KRAFT_VERSION: (0, 1), TRANSACTION_VERSION: (0, 2), GROUP_VERSION: (0, 1),
         ELR_VERSION: (0, 1), SHARE_VERSION: (0, 1)},
        {METADATA_VERSION: 27, KRAFT_VERSION: 1, TRANSACTION_VERSION: 2, GROUP_VERSION: 1, ELR_VERSION: 1},
    ),
})
DEFAULT_RELEASE = "3.9"
