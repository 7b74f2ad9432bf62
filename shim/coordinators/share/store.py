"""Durable share-partition state: what Kafka's share coordinator keeps in ``__share_group_state``.

One file per share group, ``share-state/<group, base64url>.json`` beside the cluster metadata,
replaced atomically (written, fsynced, renamed) before an acknowledgement or a release is answered
or applied, so an acknowledged record stays acknowledged across ``kill -9``. Per share partition it
holds the start offset, the first offset never fetched and each in-flight record's state and delivery
count. As Kafka's persister does, ACQUIRED is written as AVAILABLE: locks do not survive a restart,
the records come back to the group with the delivery count they had (Kafka: SharePartition.maybeInitialize).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from ...storage import fs
from .partition import InFlight, RecordState, SharePartition

DIRECTORY = "share-state"


def _file_name(group_id: str) -> str:
    return base64.urlsafe_b64encode(group_id.encode()).decode() + ".json"


class ShareStateStore:
    def __init__(self, meta_dir: Path | None) -> None:
        self.directory = meta_dir / DIRECTORY if meta_dir is not None else None
        if self.directory is not None:
            fs.make_dirs(self.directory, sync=True)

    def write(self, group_id: str, partitions: dict[tuple[str, int], dict]) -> None:
        """``partitions``: (topic, partition) -> :func:`encode` of its share partition."""
        if self.directory is None:
            return
        state = {f"{topic}:{p}": saved for (topic, p), saved in sorted(partitions.items())}
        fs.atomic_write(self.directory / _file_name(group_id), json.dumps({"group": group_id, "partitions": state},
                                                                          sort_keys=True).encode())

    def delete(self, group_id: str) -> None:
        """The group was deleted: its file goes, durably."""
        if self.directory is not None and (path := self.directory / _file_name(group_id)).exists():
            fs.remove(path, sync=True)

    def load(self) -> dict[str, dict[tuple[str, int], dict]]:
        """group id -> (topic, partition) -> the saved state (see :func:`restore`)."""
        out: dict[str, dict[tuple[str, int], dict]] = {}
        if self.directory is None:
            return out
        for path in sorted(self.directory.glob("*.json")):
            saved = json.loads(path.read_text())
            parts = out.setdefault(saved["group"], {})
            for key, state in saved["partitions"].items():
                topic, _, partition = key.rpartition(":")
                parts[(topic, int(partition))] = state
        return out


def encode(sp: SharePartition) -> dict:
    records = [[offset, (RecordState.AVAILABLE if r.state is RecordState.ACQUIRED else r.state).value,
                r.delivery_count] for offset, r in sorted(sp.records.items())]
    return {"start_offset": sp.start_offset, "end_offset": sp.end_offset, "records": records}


def restore(sp: SharePartition, state: dict) -> SharePartition:
    sp.start_offset, sp.end_offset = state["start_offset"], state["end_offset"]
    sp.records = {offset: InFlight(RecordState(value), count) for offset, value, count in state["records"]}
    return sp
