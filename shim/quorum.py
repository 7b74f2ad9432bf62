"""The KRaft metadata quorum this one node stands for: its finalized features and how it describes itself.

Kafka runs a single-node cluster as one combined broker and controller that is the only voter of
the ``__cluster_metadata`` quorum (the quickstart's ``kafka-storage format --standalone``). Clients
see that quorum through DescribeQuorum and change its finalized features through UpdateFeatures;
ApiVersions reports the features with the metadata log offset of their last change as
FinalizedFeaturesEpoch. kafka-shim keeps no metadata log: the finalized levels, that epoch and the
voter's directory id (Kafka: ``directory.id`` in the metadata directory's meta.properties) are one
small file, written atomically at each change. The levels start at what a cluster of the emulated
release is formatted with; they are kept across restarts with the same ``--kafka-version`` and
reset when it changes (a cluster formatted by another release has other defaults).

FeatureControlManager.updateFeature's checks, in its order, decide each update (``check_update``).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from .errors import ErrorCode, KafkaError
from .protocol.kafka_releases import FINALIZED_FEATURES_EPOCH, METADATA_VERSION, KafkaRelease
from .storage import fs

UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3  # Kafka: FeatureUpdate.UpgradeType
MINIMUM_BOOTSTRAP_LEVEL = 4  # Kafka: MetadataVersion.MINIMUM_BOOTSTRAP_VERSION, 3.3-IV0
LEADER_EPOCH = 1  # the epoch a standalone voter elects itself in

# metadata.version level -> (its name, whether it changed the metadata format): Kafka's
# MetadataVersion enum as of 3.9 (didMetadataChange). Later levels are taken as changed.
_METADATA_VERSIONS = {
    1: ("3.0-IV1", True), 2: ("3.1-IV0", False), 3: ("3.2-IV0", True), 4: ("3.3-IV0", False),
    5: ("3.3-IV1", True), 6: ("3.3-IV2", True), 7: ("3.3-IV3", True), 8: ("3.4-IV0", True),
    9: ("3.5-IV0", False), 10: ("3.5-IV1", False), 11: ("3.5-IV2", True), 12: ("3.6-IV0", False),
    13: ("3.6-IV1", True), 14: ("3.6-IV2", True), 15: ("3.7-IV0", True), 16: ("3.7-IV1", False),
    17: ("3.7-IV2", True), 18: ("3.7-IV3", False), 19: ("3.7-IV4", False), 20: ("3.8-IV0", False),
    21: ("3.9-IV0", False),
}


def version_range(low: int, high: int) -> str:
    """Kafka: org.apache.kafka.metadata.VersionRange.toString."""
    return str(low) if low == high else f"{low}-{high}"


class MetadataQuorum:
    def __init__(self, meta_dir: Path, release: KafkaRelease, node_id: int) -> None:
        self.path = meta_dir / "quorum.json"
        self.release, self.node_id = release, node_id
        state = self._read()
        self.directory_id = uuid.UUID(state["directory_id"]) if "directory_id" in state else uuid.uuid4()
        if state.get("release") == release.name:
            self.finalized = {k: int(v) for k, v in state["finalized"].items()}
            self.epoch = int(state["epoch"])
        else:
            self.finalized, self.epoch = dict(release.finalized_features), FINALIZED_FEATURES_EPOCH
        if state.get("release") != release.name or "directory_id" not in state:
            self._write()

    @property
    def high_watermark(self) -> int:
        """The metadata log's end: one past the record of the last feature change."""
        return self.epoch + 1

    def level(self, feature: str) -> int:
        return self.finalized.get(feature, 0)

    def check_update(self, feature: str, level: int, upgrade_type: int) -> None:
        """Raise INVALID_UPDATE_VERSION unless ``feature`` may be set to ``level`` (Kafka:
        FeatureControlManager.updateFeature, with this node as the only broker and controller)."""
        if upgrade_type not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
            raise _invalid(feature, level, "The controller does not support the given upgrade type.")
        current = self.level(feature)
        if level < 0:
            raise _invalid(feature, level, "A feature version cannot be less than 0.")
        low, high = self.release.supported_features.get(feature, (0, 0))
        if not low <= level <= high:
            what = f"Local controller {self.node_id}"
            raise _invalid(feature, level, f"{what} does not support this feature." if high == 0
                           else f"{what} only supports versions {version_range(low, high)}")
        if level < current and upgrade_type == UPGRADE:
            raise _invalid(feature, level, "Can't downgrade the version of this feature without setting the "
                                           "upgrade type to either safe or unsafe downgrade.")
        if level > current and upgrade_type != UPGRADE:
            raise _invalid(feature, level, "Can't downgrade to a newer version.")
        if feature == METADATA_VERSION:
            _check_metadata_version(current, level, upgrade_type == UNSAFE_DOWNGRADE)

    def apply(self, levels: dict[str, int]) -> None:
        """Finalize ``levels`` (each already checked) durably, as one metadata change."""
        if not levels:
            return
        finalized = {**self.finalized, **levels}
        self._write(finalized, self.epoch + 1)
        self.finalized = {k: v for k, v in finalized.items() if v > 0}
        self.epoch += 1

    def _read(self) -> dict:
        try:
            return json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return {}

    def _write(self, finalized: dict | None = None, epoch: int | None = None) -> None:
        state = {"release": self.release.name, "directory_id": str(self.directory_id),
                 "finalized": {k: v for k, v in (self.finalized if finalized is None else finalized).items() if v > 0},
                 "epoch": self.epoch if epoch is None else epoch}
        fs.atomic_write(self.path, json.dumps(state, sort_keys=True).encode())


def _invalid(feature: str, level: int, message: str) -> KafkaError:
    return KafkaError(ErrorCode.invalid_update_version, f"Invalid update version {level} for feature {feature}. "
                                                        f"{message}")


def _check_metadata_version(current: int, level: int, unsafe: bool) -> None:
    """Kafka: FeatureControlManager.updateMetadataVersion."""
    def invalid(message: str) -> KafkaError:
        return KafkaError(ErrorCode.invalid_update_version, f"Invalid metadata.version {level}. {message}")

    if level < MINIMUM_BOOTSTRAP_LEVEL:
        raise invalid(f"Unable to set a metadata.version less than {_METADATA_VERSIONS[MINIMUM_BOOTSTRAP_LEVEL][0]}")
    if level < current and _metadata_changed(current, level):
        if unsafe:
            raise invalid("Unsafe metadata downgrade is not supported in this version.")
        raise invalid("Refusing to perform the requested downgrade because it might delete metadata information.")


def _metadata_changed(high: int, low: int) -> bool:
    """Kafka: MetadataVersion.checkIfMetadataChangedOrdered."""
    version = high
    while version != low and not _METADATA_VERSIONS.get(version, ("", True))[1]:
        version -= 1
    return version != low
