"""ListOffsets by timestamp: the first record at or after a timestamp, found from batch headers.

Kafka: UnifiedLog.searchOffsetInLocalLog takes the first segment whose largest timestamp reaches
the target; LogSegment.findOffsetByTimestamp starts at the time index entry at or below the target
(or the log start offset, if later), and FileRecords.searchForTimestamp walks the batches from
there: the first whose MaxTimestamp reaches the target has its records read, and its first record
at or after the target with an offset at or past the log start is the answer (else the walk goes
on). Nothing past that one segment is searched.

With timestamps out of order the time index helps little and the walk may cross the whole
segment, so only the batch headers are read, in large chunks (kafka_codecs.batch.seek_timestamp,
in C when built), and a long walk runs on a thread of its own (``cost``): the search holds its own
descriptor of the segment file and the length it had when the search was planned, so retention,
compaction or appends on the event loop meanwhile neither disturb it nor are disturbed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from kafka_codecs.batch import HEADER_SIZE, parse_header, seek_timestamp
from kafka_codecs.records import decode_batch

CHUNK = 1 << 20  # bytes read at a time; a batch larger than this is read whole
INLINE_BYTES = 1 << 20  # a walk this short runs where it is asked, thread hops cost more


@dataclass
class TimestampSearch:
    """A planned search of one segment's bytes [start, end) for the first record whose timestamp is
    >= ``target`` and offset >= ``starting_offset``; an answer at or past ``upper`` (the high
    watermark or last stable offset) is none (Kafka: Partition.fetchOffsetForTimestamp)."""

    fd: int  # a duplicate, owned by the search: closed by run()
    start: int
    end: int
    target: int
    starting_offset: int
    upper: int

    @property
    def cost(self) -> int:
        return self.end - self.start

    def run(self) -> tuple[int, int] | None:
        """(offset, timestamp) found, or None. Safe on any thread; closes the descriptor."""
        try:
            return self._walk()
        finally:
            self.close()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def _walk(self) -> tuple[int, int] | None:
        pos = self.start
        while pos < self.end:
            chunk = os.pread(self.fd, min(CHUNK, self.end - pos), pos)
            if len(chunk) < HEADER_SIZE:
                return None
            found, walked = seek_timestamp(chunk, self.target)
            if walked == 0:  # the next batch alone is larger than a chunk: its header decides
                head = parse_header(chunk)
                if pos + head.size > self.end:
                    return None
                found, walked = (0 if head.max_timestamp >= self.target else -1), head.size
            if found >= 0:
                answer = self._records(pos + found)
                if answer is not None:
                    return answer if answer[0] < self.upper else None
            pos += walked
        return None

    def _records(self, position: int) -> tuple[int, int] | None:
        head = parse_header(os.pread(self.fd, HEADER_SIZE, position))
        _, records = decode_batch(os.pread(self.fd, head.size, position))
        for r in records:
            if r.timestamp >= self.target and r.offset >= self.starting_offset:
                return r.offset, r.timestamp
        return None
