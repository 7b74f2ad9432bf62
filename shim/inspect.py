"""``kafka-shim inspect``: offsets, open transactions and the aborted-transaction index per partition.

Reads a data directory without changing it (safe while a broker is serving it): every partition's
log start offset, high watermark and last stable offset, its open transactions (transactional id,
producer id/epoch, first offset, age) and its aborted-transaction index; for compacted partitions
the log cleaner's progress: where it stopped (the first dirty offset), the clean and dirty bytes and
the dirty ratio against min.cleanable.dirty.ratio, and when it last finished a round; every
partition's recovery point (shim.storage.recovery_point) and how old the checkpoint file is.
"""

from __future__ import annotations

import json
from pathlib import Path

from .coordinators.steps import drain
from .coordinators.txn.state_manager import read_transactions
from .storage import cleaner_manager as cm
from .storage import recovery_point
from .storage.log_manager import LogManager
from .storage.partition_log import LogConfig, PartitionLog


def inspect_data_dir(data_dir: Path, now_ms: int, include_internal: bool = False) -> dict:
    logs = LogManager(Path(data_dir), LogConfig(), read_only=True)
    points, checkpoint = _recovery_points(Path(data_dir), now_ms)
    try:
        txns = drain(read_transactions(logs))
        by_pid = {m.producer_id: m for m in txns.values()}
        partitions = []
        for (topic, partition), plog in sorted(logs.logs.items()):
            if topic.startswith("__") and not include_internal:
                continue
            open_txns = []
            for pid, first in sorted(plog.producer_state.ongoing_txns.items(), key=lambda kv: kv[1]):
                entry = plog.producer_state.producers[pid]
                m = by_pid.get(pid)
                open_txns.append({
                    "transactional_id": m.transactional_id if m else None,
                    "producer_id": pid, "producer_epoch": entry.producer_epoch, "first_offset": first,
                    "age_ms": now_ms - m.txn_start_ms if m and m.txn_start_ms >= 0 else None,
                })
            partitions.append({
                "topic": topic, "partition": partition, "log_start_offset": plog.log_start_offset,
                "high_watermark": plog.high_watermark, "last_stable_offset": plog.last_stable_offset,
                "open_transactions": open_txns, "aborted_transactions": [a._asdict() for a in plog.aborted],
                "cleaner": _cleaner(plog, now_ms), "recovery_point": points.get((topic, partition)),
            })
        transactions = [
            {"transactional_id": m.transactional_id, "state": m.state.kafka_name, "producer_id": m.producer_id,
             "producer_epoch": m.producer_epoch, "timeout_ms": m.timeout_ms,
             "partitions": sorted(f"{t}-{p}" for t, p in m.partitions)}
            for m in sorted(txns.values(), key=lambda m: m.transactional_id)
        ]
        return {"partitions": partitions, "transactions": transactions, "recovery_point_checkpoint": checkpoint}
    finally:
        for plog in logs.logs.values():
            for seg in plog.segments:
                seg.close()


def _recovery_points(data_dir: Path, now_ms: int) -> tuple[dict, dict | None]:
    """The partitions' recovery points as the checkpoint file holds them, and the file's age: what
    a start after a crash would trust (Kafka: recovery-point-offset-checkpoint)."""
    path = data_dir / recovery_point.FILE
    try:
        modified_ms = int(path.stat().st_mtime * 1000)
    except FileNotFoundError:
        return {}, None
    points = {key: {"segment_base_offset": base, "offset": offset, "position": position}
              for key, (base, offset, position) in recovery_point.read(data_dir).items()}
    return points, {"path": str(path), "age_ms": now_ms - modified_ms}


def _cleaner(plog: PartitionLog, now_ms: int) -> dict | None:
    """The log cleaner's view of a compacted partition (Kafka: LogToClean, the cleaner checkpoint)."""
    if not plog.config.compact:
        return None
    ltc = cm.plan(plog, now_ms)
    checkpoint = plog.directory / cm.CHECKPOINT_FILE
    return {
        "first_dirty_offset": ltc.first_dirty_offset, "first_uncleanable_offset": ltc.first_uncleanable_offset,
        "clean_bytes": ltc.clean_bytes, "dirty_bytes": ltc.cleanable_bytes,
        "dirty_ratio": round(ltc.cleanable_ratio, 4), "min_cleanable_dirty_ratio": plog.config.min_cleanable_dirty_ratio,
        "cleanable_now": cm.should_clean(plog, ltc),
        "last_cleaned_ms": int(checkpoint.stat().st_mtime * 1000) if checkpoint.exists() else None,
    }


def render(report: dict) -> str:
    checkpoint = report["recovery_point_checkpoint"]
    lines = [f"recovery points: {checkpoint['path']}, written {checkpoint['age_ms'] / 1000:.1f}s ago"
             if checkpoint else "recovery points: none checkpointed (a start after a crash checks every segment)"]
    lines.append(f"{'partition':<32} {'log start':>10} {'HW':>10} {'LSO':>10} {'recovery point':>24}"
                 "  open transactions / aborted")
    for p in report["partitions"]:
        name = f"{p['topic']}-{p['partition']}"
        rp = p["recovery_point"]
        point = f"{rp['offset']} (seg {rp['segment_base_offset']}@{rp['position']})" if rp else "-"
        lines.append(f"{name:<32} {p['log_start_offset']:>10} {p['high_watermark']:>10} {p['last_stable_offset']:>10}"
                     f" {point:>24}")
        c = p.get("cleaner")
        if c:
            lines.append(f"    cleaner dirty ratio {c['dirty_ratio']:.2f} (min {c['min_cleanable_dirty_ratio']}) "
                         f"clean {c['clean_bytes']}B dirty {c['dirty_bytes']}B, cleaned up to offset "
                         f"{c['first_dirty_offset']}, cleanable up to {c['first_uncleanable_offset']}"
                         f"{', due' if c['cleanable_now'] else ''}")
        for t in p["open_transactions"]:
            age = "?" if t["age_ms"] is None else f"{t['age_ms'] / 1000:.1f}s"
            lines.append(f"    open    {t['transactional_id']!s:<20} pid={t['producer_id']} epoch={t['producer_epoch']} "
                         f"first={t['first_offset']} age={age}")
        for a in p["aborted_transactions"]:
            lines.append(f"    aborted pid={a['producer_id']} first={a['first_offset']} last={a['last_offset']} "
                         f"lso={a['last_stable_offset']}")
    if report["transactions"]:
        lines.append("")
        lines.append(f"{'transactional id':<24} {'state':<15} {'pid':>8} {'epoch':>6}  partitions")
        for t in report["transactions"]:
            lines.append(f"{t['transactional_id']:<24} {t['state']:<15} {t['producer_id']:>8} {t['producer_epoch']:>6}  "
                         f"{' '.join(t['partitions'])}")
    return "\n".join(lines)


def to_json(report: dict) -> str:
    return json.dumps(report, indent=2)
