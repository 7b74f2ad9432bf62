"""The share-partition state machine (Kafka: SharePartition): acquisition, acknowledgements,
acquisition-lock expiry on a clock the test drives, delivery-count limit and start-offset moves."""

from __future__ import annotations

import pytest

from shim.coordinators.share.partition import TRANSITIONS, InFlight, RecordState as S, SharePartition, transition
from shim.errors import ErrorCode, KafkaError

ACCEPT, RELEASE, REJECT, GAP = 1, 2, 3, 0
LOCK = 30_000


def partition(start=0, limit=5, max_in_flight=2000):
    return SharePartition(start, lock_duration_ms=LOCK, delivery_count_limit=limit, max_in_flight=max_in_flight)


def test_the_state_table_is_kafkas():
    assert TRANSITIONS[S.AVAILABLE] == {S.ACQUIRED, S.ARCHIVED}
    assert TRANSITIONS[S.ACQUIRED] == {S.AVAILABLE, S.ACKNOWLEDGED, S.ARCHIVED}
    assert not TRANSITIONS[S.ACKNOWLEDGED] and not TRANSITIONS[S.ARCHIVED]


@pytest.mark.parametrize("start,to", [(S.ACKNOWLEDGED, S.AVAILABLE), (S.ARCHIVED, S.ACQUIRED), (S.AVAILABLE, S.ACKNOWLEDGED)])
def test_a_move_the_table_lacks_is_refused(start, to):
    with pytest.raises(KafkaError) as e:
        transition(InFlight(start), to)
    assert e.value.code == ErrorCode.invalid_record_state


def test_acquired_records_come_as_ranges_with_their_delivery_count():
    sp = partition()
    assert sp.acquire("m1", range(0, 5), True, 0) == [(0, 4, 1)]
    assert sp.next_fetch_offset(0) == 5
    assert sp.acquire("m2", range(0, 5), True, 0) == []  # held by m1


def test_accept_moves_the_start_offset_past_finished_records():
    sp = partition()
    sp.acquire("m1", range(0, 4), True, 0)
    sp.acknowledge("m1", 0, 1, [ACCEPT], 0)
    assert sp.start_offset == 2
    sp.acknowledge("m1", 3, 3, [REJECT], 0)
    assert sp.start_offset == 2 and sp.state_of(3) is S.ARCHIVED
    sp.acknowledge("m1", 2, 2, [ACCEPT], 0)
    assert sp.start_offset == 4 and not sp.records


def test_released_records_come_back_with_a_higher_delivery_count():
    sp = partition()
    sp.acquire("m1", range(0, 3), True, 0)
    sp.acknowledge("m1", 0, 2, [ACCEPT, RELEASE, ACCEPT], 0)
    assert sp.next_fetch_offset(0) == 1
    assert sp.acquire("m2", range(1, 3), True, 0) == [(1, 1, 2)]


def test_only_the_holder_may_acknowledge():
    sp = partition()
    sp.acquire("m1", range(0, 2), True, 0)
    with pytest.raises(KafkaError) as e:
        sp.acknowledge("m2", 0, 1, [ACCEPT], 0)
    assert e.value.code == ErrorCode.invalid_record_state
    assert sp.state_of(0) is S.ACQUIRED  # nothing changed


def test_types_must_be_one_or_one_per_offset():
    sp = partition()
    sp.acquire("m1", range(0, 3), True, 0)
    with pytest.raises(KafkaError) as e:
        sp.acknowledge("m1", 0, 2, [ACCEPT, ACCEPT], 0)
    assert e.value.code == ErrorCode.invalid_request


def test_an_expired_lock_makes_the_records_available_to_another_member():
    sp = partition()
    sp.acquire("m1", range(0, 2), True, 1000)
    assert sp.next_deadline() == 1000 + LOCK
    assert sp.next_fetch_offset(1000 + LOCK - 1) == 2  # still locked
    assert sp.expire(1000 + LOCK)
    assert sp.acquire("m2", range(0, 2), True, 1000 + LOCK) == [(0, 1, 2)]
    with pytest.raises(KafkaError):  # the first member's lock is gone
        sp.acknowledge("m1", 0, 0, [ACCEPT], 1000 + LOCK)


def test_the_delivery_count_limit_archives_a_record():
    sp = partition(limit=3)
    now = 0
    for delivery in range(1, 4):
        assert sp.acquire("m1", [0], True, now) == [(0, 0, delivery)]
        sp.acknowledge("m1", 0, 0, [RELEASE], now)
    assert sp.state_of(0) is None and sp.start_offset == 1  # archived, then passed
    assert sp.next_fetch_offset(now) == 1


def test_an_expired_lock_counts_towards_the_limit():
    sp = partition(limit=2)
    sp.acquire("m1", [0], True, 0)
    sp.expire(LOCK)
    sp.acquire("m1", [0], True, LOCK)
    sp.expire(2 * LOCK)
    assert sp.start_offset == 1


def test_undeliverable_records_are_archived_without_being_acquired():
    sp = partition()
    assert sp.acquire("m1", range(0, 3), False, 0) == []
    assert sp.start_offset == 3


def test_a_member_that_leaves_releases_what_it_holds():
    sp = partition()
    sp.acquire("m1", range(0, 2), True, 0)
    sp.acquire("m2", range(2, 4), True, 0)
    sp.release_member("m1")
    assert [sp.state_of(o) for o in range(4)] == [S.AVAILABLE, S.AVAILABLE, S.ACQUIRED, S.ACQUIRED]
    assert [sp.records[o].delivery_count for o in range(4)] == [0, 0, 1, 1]


def test_records_released_with_a_closing_session_do_not_count_towards_the_limit():
    """Kafka 4.1 (KAFKA-17541, DeliveryCountOps.DECREASE): a record fetched and released by a closing
    session loses the delivery it was counted, and is not archived at the limit."""
    sp = partition(limit=2)
    for _ in range(4):
        assert sp.acquire("m1", [0], True, 0) == [(0, 0, 1)]
        sp.release_member("m1")
    assert sp.acquire("m1", [0], True, 0) == [(0, 0, 1)]
    sp.acknowledge("m1", 0, 0, [RELEASE], 0)  # an acknowledgement's RELEASE counts
    assert sp.acquire("m1", [0], True, 0) == [(0, 0, 2)]
    sp.release_member("m1")
    assert (sp.state_of(0), sp.records[0].delivery_count) == (S.AVAILABLE, 1)  # at the limit, not archived


def test_the_in_flight_limit_stops_acquisition():
    sp = partition(max_in_flight=3)
    assert sp.acquire("m1", range(0, 10), True, 0) == [(0, 2, 1)]
    assert sp.next_fetch_offset(0) is None
    sp.acknowledge("m1", 0, 0, [ACCEPT], 0)
    assert sp.next_fetch_offset(0) == 3


def test_records_below_the_log_start_are_dropped():
    sp = partition()
    sp.acquire("m1", range(0, 4), True, 0)
    sp.skip_to(2)
    assert sp.start_offset == 2 and sorted(sp.records) == [2, 3]


def test_a_compacted_gap_keeps_no_records_and_is_passed():
    sp = partition()
    sp.acquire("m1", [0], True, 0)
    sp.mark_gap(1, 1_000_000)  # offsets the log no longer holds
    assert len(sp.records) == 1 and sp.next_fetch_offset(0) == 1_000_001
    assert sp.acquire("m1", [1_000_001], True, 0) == [(1_000_001, 1_000_001, 1)]
    sp.acknowledge("m1", 0, 0, [ACCEPT], 0)
    assert sp.start_offset == 1_000_001


def test_an_acknowledgement_over_a_huge_range_is_refused_without_walking_it():
    sp = partition()
    sp.acquire("m1", range(0, 2), True, 0)
    with pytest.raises(KafkaError) as e:
        sp.acknowledge("m1", 0, 2**62, [ACCEPT], 0)
    assert e.value.code == ErrorCode.invalid_record_state
    assert sp.state_of(0) is S.ACQUIRED
