"""Segment rolls that depend on topic configs other than segment.bytes (Kafka: LogSegment.shouldRoll):
segment.ms against the first batch's timestamp, and a full offset or time index (segment.index.bytes).

segment.jitter.ms is not applied (Kafka draws a random jitter per segment). Checked before client
appends (Produce); coordinator writes and markers roll on segment.bytes only.
"""

from __future__ import annotations

from kafka_codecs.batch import HEADER_SIZE, BatchHeader, parse_header

from .partition_log import PartitionLog
from .segment import LogSegment

OFFSET_ENTRY, TIME_ENTRY = 8, 12  # bytes per offset index and time index entry


def _rolling_timestamp(seg: LogSegment) -> int:
    """The first batch's max timestamp (Kafka: LogSegment.rollingBasedTimestamp): known from the
    segment's first append or its load, else (indexes loaded from their files) read once."""
    ts = seg.rolling_timestamp
    if ts is None:
        ts = seg.rolling_timestamp = parse_header(seg.read(0, HEADER_SIZE)).max_timestamp
    return ts


def maybe_roll(plog: PartitionLog, h: BatchHeader, now_ms: int) -> bool:
    """Roll the active segment before appending ``h`` when Kafka would; returns whether it did.
    One function: it runs before every client append."""
    seg = plog.segments[-1]
    if not seg.size:
        return False
    c = plog.config
    index_bytes = c.segment_index_bytes
    if len(seg._offsets) < index_bytes // OFFSET_ENTRY and len(seg._time_ts) < index_bytes // TIME_ENTRY:
        first = seg.rolling_timestamp
        if first is None:
            first = _rolling_timestamp(seg)
        # Kafka falls back to the segment's creation time when its first batch has no timestamp;
        # such batches (timestamp -1) do not roll by time here.
        if first < 0 or h.max_timestamp - first <= c.segment_ms:
            return False
    plog.roll()
    return True
