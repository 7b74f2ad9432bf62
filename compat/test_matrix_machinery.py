"""The compat machinery itself: the ``shim_only`` marker against an external target, and the
matrix's Markdown (header notes, links relative to where it is written)."""

from __future__ import annotations

import pytest

from compat import matrix

pytest_plugins = ["pytester"]

MODULE = """
import pytest

pytestmark = pytest.mark.shim_only("restarts the broker")


def test_needs_its_own_shim():
    pass
"""


@pytest.fixture
def suite(pytester):
    pytester.makeini("[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makeconftest("from compat.plugin import *  # noqa: F401,F403\n")
    pytester.makepyfile(test_restarts=MODULE)
    return pytester


def test_shim_only_runs_against_kafka_shim(suite):
    suite.runpytest_inprocess("-p", "no:randomly").assert_outcomes(passed=1)


def test_shim_only_skips_for_an_external_target(suite):
    result = suite.runpytest_inprocess("-p", "no:randomly", "-rs", "--kafka-bootstrap", "127.0.0.1:1")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*not run against 127.0.0.1:1: restarts the broker*"])


def test_shim_only_skips_for_the_environment_target(suite, monkeypatch):
    monkeypatch.setenv("KAFKA_SHIM_TARGET", "broker.example:9092")
    suite.runpytest_inprocess("-p", "no:randomly").assert_outcomes(skipped=1)


def _small_matrix() -> dict:
    sc = matrix.scenarios.SCENARIOS[0]
    cells = {c: {"status": "n/a", "reason": "", "tests": []} for c in matrix.scenarios.CLIENTS}
    client = next(iter(sc.applies_to))
    cells[client] = {"status": "skip", "reason": "not run against x: restarts the broker",
                     "tests": [{"test": "compat/test_x.py::t", "status": "skip",
                                "reason": "not run against x: restarts the broker"}]}
    return {"generated": "2026-01-01 00:00 UTC", "target": "Apache Kafka 3.9.0", "commit": "abc1234",
            "clients": {c: {"description": d, "version": ""} for c, d in matrix.scenarios.CLIENTS.items()},
            "scenarios": [{"id": sc.id, "title": sc.title, "spec": sc.spec, "cells": cells}],
            "notes": ["Built from source here."]}


def test_markdown_has_the_notes_and_links_relative_to_where_it_is_written():
    m = _small_matrix()
    beside = matrix.markdown(m)  # compat/MATRIX.md
    below = matrix.markdown(m, matrix.HERE / "apache-kafka")  # compat/apache-kafka/MATRIX.md
    assert "against **Apache Kafka 3.9.0**" in beside and "\nBuilt from source here.\n" in beside
    assert "[compat/scenarios/](scenarios)" in beside and "[compat/README.md](README.md)" in beside
    assert "[compat/scenarios/](../scenarios)" in below and "[compat/README.md](../README.md)" in below
    # a cell that is not a pass says why
    assert "not run against x: restarts the broker" in below.split("## Cells that are not a pass", 1)[1]


def test_markdown_links_resolve_from_the_output_directory():
    out = matrix.HERE / "apache-kafka"
    md = matrix.markdown(_small_matrix(), out)
    link = md.split("[compat/scenarios/](", 1)[1].split(")", 1)[0]
    assert (out / link).resolve() == (matrix.HERE / "scenarios").resolve()


def _peer_suite(differences=()) -> dict:
    return {"title": "kafka-python 3.0.12 test/integration", "client": "kafka-python 3.0.12 (installed)",
            "broker": "kafka-shim serve --num-partitions 4", "seconds": 40.2, "counts": {"pass": 1, "fail": 1},
            "expected_file": "compat/peers/kafka_python_expected.toml", "differences": list(differences),
            "tests": [{"test": "test/integration/test_a.py::test_ok", "status": "pass", "reason": ""},
                      {"test": "test/integration/test_a.py::test_partitions", "status": "fail",
                       "reason": "CreatePartitions (API 37) not implemented | not advertised"}]}


def test_markdown_has_a_section_per_client_librarys_own_suite_with_each_tests_result():
    m = {**_small_matrix(), "peer_suites": [_peer_suite()]}
    section = matrix.markdown(m).split("## kafka-python 3.0.12 test/integration (the library's own suite)", 1)[1]
    section = section.split("## Scenarios", 1)[0]
    assert "kafka-python 3.0.12 (installed) against kafka-shim serve --num-partitions 4: 1 pass, 1 fail in 40 s." in section
    assert "[compat/peers/kafka_python_expected.toml](peers/kafka_python_expected.toml); this run matches them." in section
    assert "| `test/integration/test_a.py::test_ok` | pass |  |" in section
    assert ("| `test/integration/test_a.py::test_partitions` | **FAIL** | "
            "CreatePartitions (API 37) not implemented \\| not advertised |") in section


def test_markdown_lists_the_differences_from_the_expected_list():
    m = {**_small_matrix(), "peer_suites": [_peer_suite(["test/integration/test_a.py::test_ok: expected to pass, fail: x"])]}
    md = matrix.markdown(m)
    assert "**1 difference(s)**:\n* test/integration/test_a.py::test_ok: expected to pass, fail: x\n" in md


def test_the_readme_block_carries_one_line_per_peer_suite(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{matrix.README_START}\nold\n{matrix.README_END}\nrest\n")
    assert matrix.update_readme({**_small_matrix(), "peer_suites": [_peer_suite()]}, readme)
    text = readme.read_text()
    assert "\nkafka-python 3.0.12 test/integration, the library's own suite: 1 pass, 1 fail; " in text
    assert text.startswith("intro\n") and text.endswith(f"{matrix.README_END}\nrest\n") and "old" not in text
