"""kill -9 of the broker (a ``python -m shim serve`` subprocess) with transactions in flight, with
each Python client: an open transaction holds the LSO across the restart until its timeout aborts
it, and a committed one stays committed, with ``--fsync never`` and ``always``. (A crash between
the commit request and the markers can only be staged inside the coordinator:
tests/txn/test_txn_recovery.py; a power loss, in a model of the disk: tests/storage/.)

What the tests check is also what Apache Kafka does after an unclean broker restart: Ongoing
transactions are reloaded from __transaction_state and time out; the producer state and the
aborted-transaction index are rebuilt from the log."""

from __future__ import annotations

import struct
import time

import pytest

from compat.txn_clients import CLIENT_NAMES, Clients, expect_failure, settle, wait_for
from compat.wire import Wire

pytestmark = pytest.mark.shim_only("kills the broker with SIGKILL and restarts it")

READ_UNCOMMITTED, READ_COMMITTED = 0, 1
RC, RU = "read_committed", "read_uncommitted"
TOPIC = "t"
TXN_TIMEOUT_MS = 5_000
SHORT_ABORT_CHECK = ["--transaction-abort-check-interval-ms", "100"]


class Restartable:
    """One data directory and port; ``start()``, ``kill9()``; a Wire to the running broker."""

    def __init__(self, shim_process, data_dir, port, fsync="never") -> None:
        self.shim_process, self.data_dir, self.port, self.fsync = shim_process, data_dir, port, fsync
        self.proc = None
        self.wire: Wire | None = None

    def start(self) -> str:
        self.proc = self.shim_process(self.data_dir, self.port, args=SHORT_ABORT_CHECK + ["--fsync", self.fsync])
        bootstrap = self.proc.wait_ready()
        assert bootstrap.split(",")[0] == f"127.0.0.1:{self.port}"
        self.wire = Wire(bootstrap)
        return bootstrap

    def kill9(self) -> None:
        self.wire.close()
        self.proc.kill9()

    def txnindex(self, topic=TOPIC, partition=0) -> list[tuple[int, int, int, int]]:
        """(producer id, first offset, last offset, LSO) of every .txnindex entry, as on disk."""
        out = []
        for path in sorted((self.data_dir / f"{topic}-{partition}").glob("*.txnindex")):
            out += [(pid, first, last, lso) for _, pid, first, last, lso in struct.iter_unpack(">hqqqq", path.read_bytes())]
        return out


@pytest.fixture
def broker(request, tmp_path, shim_process, free_port):
    """A restartable broker, ``--fsync never`` unless the test parametrizes it indirectly."""
    b = Restartable(shim_process, tmp_path / "data", free_port(), getattr(request, "param", "never"))
    b.start()
    b.wire.create_topic(TOPIC)
    yield b
    if b.wire is not None:
        b.wire.close()


@pytest.fixture(params=CLIENT_NAMES)
def clients(request, broker):
    c = Clients(request.param, f"127.0.0.1:{broker.port}")
    yield c
    c.close_all()


def test_an_open_transaction_holds_the_lso_across_kill9_until_it_times_out(broker, clients):
    plain = clients.plain_producer()
    assert plain.send(TOPIC, b"p-0") == 0
    t = clients.txn_producer("kill9-open", timeout_ms=TXN_TIMEOUT_MS)
    t.begin()
    started = time.monotonic()
    assert t.send(TOPIC, b"t-1") == 1
    assert plain.send(TOPIC, b"p-2") == 2
    assert broker.wire.list_offset(TOPIC, 0, READ_COMMITTED) == 1

    broker.kill9()
    broker.start()
    # Checked well before the transaction times out (restart takes about a second).
    described = broker.wire.describe_transaction("kill9-open")
    lso = broker.wire.list_offset(TOPIC, 0, READ_COMMITTED)
    assert time.monotonic() - started < TXN_TIMEOUT_MS / 1000, "the restart took longer than the timeout"
    assert (described.transaction_state, lso, broker.wire.list_offset(TOPIC, 0, READ_UNCOMMITTED)) == ("Ongoing", 1, 3)
    rc = clients.consumer(RC, TOPIC)
    assert settle(rc, 1) == [(0, b"p-0")]
    assert broker.txnindex() == []

    # The reloaded coordinator aborts it once transaction.timeout.ms has passed.
    wait_for(lambda: broker.wire.list_offset(TOPIC, 0, READ_COMMITTED) == 4, 30, 0.05, "the timeout's ABORT marker")
    assert time.monotonic() - started >= TXN_TIMEOUT_MS / 1000 - 0.1
    assert broker.wire.describe_transaction("kill9-open").transaction_state == "CompleteAbort"
    assert settle(rc, 4) == [(0, b"p-0"), (2, b"p-2")]
    assert settle(clients.consumer(RU, TOPIC), 4) == [(0, b"p-0"), (1, b"t-1"), (2, b"p-2")]
    pid = broker.wire.describe_transaction("kill9-open").producer_id
    assert broker.txnindex() == [(pid, 1, 3, 4)]
    for error in (expect_failure(t.send, TOPIC, b"t-late"), expect_failure(t.commit)):
        assert clients.fenced(error), repr(error)

    # Killed again: the aborted transaction stays aborted (index and producer state rebuilt).
    broker.kill9()
    broker.start()
    assert broker.txnindex() == [(pid, 1, 3, 4)]
    assert broker.wire.list_offset(TOPIC, 0, READ_COMMITTED) == broker.wire.list_offset(TOPIC, 0, READ_UNCOMMITTED) == 4
    assert settle(clients.consumer(RC, TOPIC), 4) == [(0, b"p-0"), (2, b"p-2")]


@pytest.mark.parametrize("broker", ["never", "always"], indirect=True)
def test_a_committed_transaction_stays_committed_across_kill9(broker, clients):
    t = clients.txn_producer("kill9-done")
    t.begin()
    assert (t.send(TOPIC, b"c-0"), t.send(TOPIC, b"c-1")) == (0, 1)
    t.commit()
    wait_for(lambda: broker.wire.list_offset(TOPIC, 0, READ_COMMITTED) == 3, 10, 0.02, "the COMMIT marker")
    before = broker.wire.describe_transaction("kill9-done")

    broker.kill9()
    broker.start()
    after = broker.wire.describe_transaction("kill9-done")
    assert (after.transaction_state, after.producer_id, after.producer_epoch) == (
        "CompleteCommit", before.producer_id, before.producer_epoch)
    assert broker.wire.list_offset(TOPIC, 0, READ_COMMITTED) == broker.wire.list_offset(TOPIC, 0, READ_UNCOMMITTED) == 3
    assert settle(clients.consumer(RC, TOPIC), 3) == [(0, b"c-0"), (1, b"c-1")]
    assert broker.txnindex() == []

    # A new instance of the same transactional id fences the old epoch and carries on.
    again = clients.txn_producer("kill9-done")
    again.begin()
    assert again.send(TOPIC, b"c-3") == 3
    again.commit()
    described = broker.wire.describe_transaction("kill9-done")
    assert (described.producer_id, described.producer_epoch) == (before.producer_id, before.producer_epoch + 1)
    wait_for(lambda: broker.wire.list_offset(TOPIC, 0, READ_COMMITTED) == 5, 10, 0.02, "the second COMMIT marker")
