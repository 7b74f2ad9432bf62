"""Spark 4.0's Kafka connector calls, replayed with kafka-clients 3.9.1 by
compat/java/SparkPatternDriver.java (one JVM per module): the driver's Admin describeTopics +
listOffsets(isolation) and the executors' assign/seek/poll reads with invisible gaps skipped and
failOnDataLoss=true, over a topic holding aborted, committed and open transactions and plain records.

Layout (partition: offset value), as the driver writes it:
  0: 0 p-0 | 1 a-1, 2 a-2 (aborted), 3 ABORT | 4 p-1 | 5 b-1, 6 b-2, 7 COMMIT | 8 p-2 | 9 c-1 (open) | 10 p-3
     then 11 COMMIT of c once the first batch has been read
  1: 0 a-3 (aborted), 1 ABORT | 2 p-4 | 3 b-3, 4 COMMIT
  2: 0 a-4 (aborted), 1 ABORT
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.compat(client="spark-pattern")

ISOLATION = ["read_committed", "read_uncommitted"]
LAYOUT = {"p-0": [0, 0], "a-1": [0, 1], "a-2": [0, 2], "a-3": [1, 0], "a-4": [2, 0], "p-1": [0, 4], "p-4": [1, 2],
          "b-1": [0, 5], "b-2": [0, 6], "b-3": [1, 3], "p-2": [0, 8], "c-1": [0, 9], "p-3": [0, 10]}
# What each isolation level may return in the first batch, per partition.
VISIBLE = {
    "read_committed": {"0": [[0, "p-0"], [4, "p-1"], [5, "b-1"], [6, "b-2"], [8, "p-2"]],
                       "1": [[2, "p-4"], [3, "b-3"]],
                       "2": []},
    "read_uncommitted": {"0": [[0, "p-0"], [1, "a-1"], [2, "a-2"], [4, "p-1"], [5, "b-1"], [6, "b-2"], [8, "p-2"],
                               [9, "c-1"], [10, "p-3"]],
                         "1": [[0, "a-3"], [2, "p-4"], [3, "b-3"]],
                         "2": [[0, "a-4"]]},
}
# [earliest, latest) from the driver: latest is the LSO (9: c-1 is open) under read_committed.
RANGES = {"read_committed": {"0": [0, 9], "1": [0, 5], "2": [0, 2]},
          "read_uncommitted": {"0": [0, 11], "1": [0, 5], "2": [0, 2]}}


def each_iso(scenario: str):
    return [pytest.param(iso, id=iso, marks=pytest.mark.compat(scenario=scenario)) for iso in ISOLATION]


@pytest.fixture(scope="module")
def spark_pattern(java_drivers, compat_target):
    out = java_drivers.run("SparkPatternDriver", "spark.pattern", compat_target.bootstrap_servers, timeout=300,
                           prefix=compat_target.prefix + "-sp", timeout_s=240)
    result = out["results"]["spark.pattern"]
    return result


@pytest.fixture
def observed(spark_pattern):
    if not spark_pattern["ok"]:
        pytest.fail(f"{spark_pattern['error']}\nobserved so far: {spark_pattern['observed']}\n{spark_pattern['trace']}")
    obs = spark_pattern["observed"]
    assert obs["layout"] == LAYOUT
    return obs


@pytest.mark.parametrize("iso", each_iso("spark.batch_read"))
def test_batch_read(observed, iso):
    batch = observed["batch1"][iso]
    assert batch["admin"] == RANGES[iso]
    assert batch["late_binding"] == RANGES[iso], "executor-side earliest/latest disagree with the driver's"
    assert batch["rows"] == VISIBLE[iso]


@pytest.mark.parametrize("iso", each_iso("spark.offset_probes"))
def test_fetch_at_every_offset(observed, iso):
    batch = observed["batch1"][iso]
    for part, probes in batch["probes"].items():
        start, until = RANGES[iso][part]
        visible = [o for o, _ in VISIBLE[iso][part]]
        assert [p["offset"] for p in probes] == list(range(start, until))
        for p in probes:
            assert "error" not in p, f"partition {part}: {p}"
            nxt = [o for o in visible if o >= p["offset"]]
            assert p["first"] == (nxt[0] if nxt else None), f"partition {part}: {p}"
            if p["first"] is None:
                # nothing visible left before `until`: the position must still move past the markers
                assert p["after"] == until, f"partition {part}: {p}"
            else:
                assert p["after"] > p["first"], f"partition {part}: {p}"


@pytest.mark.parametrize("iso", each_iso("spark.micro_batches"))
def test_next_micro_batch_after_commit(observed, iso):
    batch = observed["batch2"][iso]
    assert batch["admin"] == {"0": [0, 12], "1": [0, 5], "2": [0, 2]}
    first_latest = {p: r[1] for p, r in RANGES[iso].items()}
    assert batch["ranges"] == {p: [first_latest[p], latest] for p, (_, latest) in batch["admin"].items()}
    if iso == "read_committed":
        assert batch["rows"] == {"0": [[9, "c-1"], [10, "p-3"]], "1": [], "2": []}
    else:
        assert batch["rows"] == {"0": [], "1": [], "2": []}
        assert batch["invisible_gaps"]["0"] == [[11, 12]]  # only the COMMIT marker was left
