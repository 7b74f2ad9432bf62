"""The compatibility matrix: every client x scenario of compat/scenarios/, filled by running the
compat suites through pytest.

    .venv/bin/python -m compat.matrix                      # run, print, write compat/MATRIX.md + matrix.json
                                                           # (and the table in README.md)
    .venv/bin/python -m compat.matrix --kafka-bootstrap localhost:19092 --no-write   # against Apache Kafka
    .venv/bin/python -m compat.matrix --no-run             # print the last written matrix.json again
    .venv/bin/python -m compat.matrix -- -k kcat           # extra pytest arguments after --

A test fills a cell through its ``compat(client=..., scenario=...)`` marker or a ``NODE_IDS``
pattern in compat/scenarios/; only those tests are run. A cell passes when all of its tests
pass; any other cell says why (failure message, skip or xfail reason).

Client libraries' own test suites (compat/peers) run after the scenarios and get a section of their
own, one row per test (``--no-peers`` leaves them out).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

if __package__ in (None, ""):  # run as a script: .venv/bin/python compat/matrix.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compat import scenarios  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RANK = {"fail": 0, "error": 1, "xpass": 2, "xfail": 3, "skip": 4, "pass": 5}


class Collector:
    """pytest plugin: maps each collected test to its cell and records how it ended."""

    def __init__(self) -> None:
        self.cells: dict[str, tuple[str, str]] = {}
        self.outcomes: dict[str, dict] = {}

    def pytest_collection_modifyitems(self, session, config, items):
        from compat.plugin import compat_marks

        keep, drop = [], []
        for item in items:
            marks = compat_marks(item)
            cell = ((marks["client"], marks["scenario"]) if marks.get("client") and marks.get("scenario")
                    else scenarios.cell_of_nodeid(item.nodeid))
            if cell:
                self.cells[item.nodeid] = cell
                keep.append(item)
            else:
                drop.append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep

    def pytest_runtest_logreport(self, report):
        if report.nodeid not in self.cells:
            return
        current = self.outcomes.get(report.nodeid)
        outcome = _outcome(report)
        if outcome is None:
            return
        if current is None or RANK[outcome["status"]] < RANK[current["status"]]:
            self.outcomes[report.nodeid] = outcome


def _outcome(report) -> dict | None:
    wasxfail = getattr(report, "wasxfail", None)
    if report.when == "call":
        if report.passed:
            return {"status": "xpass", "reason": f"passed although expected to fail ({wasxfail})"} \
                if wasxfail is not None else {"status": "pass", "reason": ""}
        if report.skipped:
            if wasxfail is not None:
                return {"status": "xfail", "reason": f"{wasxfail} — {_message(report)}"}
            return {"status": "skip", "reason": _message(report)}
        return {"status": "fail", "reason": _message(report)}
    if report.skipped:
        return {"status": "xfail" if wasxfail is not None else "skip", "reason": wasxfail or _message(report)}
    if report.failed:
        return {"status": "error", "reason": f"{report.when}: {_message(report)}"}
    return None


def _message(report) -> str:
    lr = report.longrepr
    if isinstance(lr, tuple) and len(lr) == 3:
        text = lr[2]
    elif hasattr(lr, "reprcrash") and lr.reprcrash is not None:
        text = lr.reprcrash.message
    else:
        text = str(lr)
    text = re.sub(r"^Skipped: ", "", str(text).strip())
    return " ".join(text.split())


# -- building the matrix ---------------------------------------------------------------------


def build(collector: Collector, target: str, versions: dict) -> dict:
    by_cell: dict[tuple[str, str], list] = {}
    for nodeid, cell in collector.cells.items():
        outcome = collector.outcomes.get(nodeid, {"status": "error", "reason": "did not run"})
        by_cell.setdefault(cell, []).append({"test": nodeid, **outcome})
    rows = []
    for sc in scenarios.SCENARIOS:
        cells = {}
        for client in scenarios.CLIENTS:
            tests = by_cell.get((client, sc.id))
            if tests:
                worst = min(tests, key=lambda t: RANK[t["status"]])
                reasons = sorted({t["reason"] for t in tests if t["status"] != "pass"})
                cells[client] = {"status": worst["status"], "reason": "; ".join(reasons), "tests": tests}
            elif client in sc.applies_to:
                cells[client] = {"status": "no test", "reason": "no driver implements this scenario yet",
                                 "tests": []}
            else:
                cells[client] = {"status": "n/a", "reason": "", "tests": []}
        rows.append({"id": sc.id, "title": sc.title, "spec": sc.spec, "cells": cells})
    unknown = sorted({c for c in by_cell if c[1] not in scenarios.BY_ID})
    return {
        "generated": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "target": target,
        "commit": _git("rev-parse", "--short", "HEAD"),
        "clients": {name: {"description": desc, "version": versions.get(name, "")}
                    for name, desc in scenarios.CLIENTS.items()},
        "scenarios": rows,
        "unknown_cells": [list(c) for c in unknown],
    }


def _git(*args) -> str:
    try:
        return subprocess.run(["git", *args], capture_output=True, text=True, cwd=ROOT, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def client_versions() -> dict[str, str]:
    out = {}
    try:
        from compat import javarun

        with zipfile.ZipFile(javarun.find_jars()[0]) as jar:
            props = jar.read("kafka/kafka-version.properties").decode()
        out["java"] = out["spark-pattern"] = "kafka-clients " + re.search(r"version=(\S+)", props).group(1)
    except Exception:  # the jars are optional here; the cells say why the tests skipped
        pass
    kcat = shutil.which("kcat") or shutil.which("kafkacat")
    if kcat:
        text = subprocess.run([kcat, "-V"], capture_output=True, text=True, timeout=10).stdout
        m = re.search(r"Version (\S+) .*?librdkafka (\S+)", text)
        if m:
            out["kcat"] = f"kcat {m.group(1)}, librdkafka {m.group(2)}"
    for client, module in (("confluent-kafka", "confluent_kafka"), ("kafka-python", "kafka"),
                           ("aiokafka", "aiokafka"), ("spark", "pyspark")):
        try:
            mod = __import__(module)
        except ImportError:
            continue
        if client == "confluent-kafka":
            out[client] = f"{mod.__version__}, librdkafka {mod.libversion()[0]}"
        else:
            out[client] = getattr(mod, "__version__", "")
    return out


# -- rendering -----------------------------------------------------------------------------------

SHOW = {"pass": "pass", "fail": "**FAIL**", "error": "**ERROR**", "xfail": "xfail", "xpass": "XPASS",
        "skip": "skip", "no test": "no test", "n/a": "—"}


def _cell_text(cell: dict, limit: int = 70) -> str:
    text = SHOW[cell["status"]]
    if cell["status"] not in ("pass", "n/a") and cell["reason"]:
        reason = cell["reason"] if len(cell["reason"]) <= limit else cell["reason"][: limit - 1] + "…"
        text += f": {reason}"
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(matrix: dict, out: Path = HERE) -> str:
    clients = list(matrix["clients"])
    rel = {name: os.path.relpath(HERE / name, out) for name in ("scenarios", "README.md")}
    lines = [
        "# Compatibility matrix",
        "",
        f"Generated {matrix['generated']} by `python -m compat.matrix` at commit `{matrix['commit']}` "
        f"against **{matrix['target']}**. Scenarios are specified in "
        f"[compat/scenarios/]({rel['scenarios']}); how to run them is in [compat/README.md]({rel['README.md']}).",
        *(f"\n{note}" for note in matrix.get("notes", [])),
        "",
        "| client | what | version |",
        "|---|---|---|",
    ]
    for name, info in matrix["clients"].items():
        lines.append(f"| `{name}` | {info['description']} | {info['version'] or 'not installed'} |")
    lines += ["", "| scenario | " + " | ".join(f"`{c}`" for c in clients) + " |",
              "|---|" + "---|" * len(clients)]
    for row in matrix["scenarios"]:
        lines.append(f"| `{row['id']}` | " + " | ".join(_cell_text(row["cells"][c]) for c in clients) + " |")
    counts: dict[str, int] = {}
    for row in matrix["scenarios"]:
        for cell in row["cells"].values():
            counts[cell["status"]] = counts.get(cell["status"], 0) + 1
    lines += ["", "Cells: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items(), key=lambda kv: -kv[1])) + ".",
              "", "## Cells that are not a pass", ""]
    notes = 0
    for row in matrix["scenarios"]:
        for client, cell in row["cells"].items():
            if cell["status"] in ("pass", "n/a", "no test"):
                continue
            notes += 1
            lines.append(f"* `{row['id']}` × `{client}`: {SHOW[cell['status']]}")
            for t in cell["tests"]:
                if t["status"] != "pass":
                    lines.append(f"  * `{t['test']}` — {t['status']}: {t['reason']}")
    if not notes:
        lines.append("None: every implemented cell passes.")
    lines += _peer_lines(matrix, out)
    lines += ["", "## Scenarios", ""]
    for row in matrix["scenarios"]:
        lines.append(f"* **`{row['id']}`** ({row['title']}): {row['spec']}")
    return "\n".join(lines) + "\n"


def _peer_lines(matrix: dict, out: Path) -> list[str]:
    """One section per client library's own suite: what ran, against what, and each test's result."""
    lines = []
    for suite in matrix.get("peer_suites", []):
        counts = ", ".join(f"{n} {s}" for s, n in sorted(suite["counts"].items(), key=lambda kv: -kv[1]))
        lines += ["", f"## {suite['title']} (the library's own suite)", "",
                  f"{suite['client']} against {suite['broker']}: {counts} in {suite['seconds']:.0f} s"
                  + (f" (run {suite['generated']} at commit `{suite['commit']}`)." if suite.get("generated") else ".")]
        if suite.get("expected_file"):
            link = os.path.relpath(ROOT / suite["expected_file"], out)
            differences = suite.get("differences", [])
            lines.append(f"The expected results are in [{suite['expected_file']}]({link}); "
                         + (f"**{len(differences)} difference(s)**:" if differences else "this run matches them."))
            lines += [f"* {d}" for d in differences]
        lines += ["", "| test | result | why |", "|---|---|---|"]
        for t in suite["tests"]:
            why = t["reason"] if t["status"] != "pass" else ""
            lines.append(f"| `{t['test']}` | {SHOW.get(t['status'], t['status'])} | "
                         + why.replace("|", "\\|").replace("\n", " ") + " |")
    return lines


def peer_summary(matrix: dict) -> str:
    """One line per client library's own suite, for the README."""
    return "\n".join(
        f"{s['title']}, the library's own suite: "
        + ", ".join(f"{n} {st}" for st, n in sorted(s["counts"].items(), key=lambda kv: -kv[1]))
        for s in matrix.get("peer_suites", []))


def table(matrix: dict) -> str:
    """The table alone, for the terminal."""
    md = markdown(matrix).splitlines()
    start = next(i for i, ln in enumerate(md) if ln.startswith("| scenario |"))
    end = next(i for i in range(start, len(md)) if not md[i].startswith("|"))
    return "\n".join(md[start:end])


README_START, README_END = "<!-- compat-matrix:start -->", "<!-- compat-matrix:end -->"


def update_readme(matrix: dict, readme: Path) -> bool:
    """Replace the table between the README's matrix markers; False when the markers are missing."""
    text = readme.read_text()
    if README_START not in text or README_END not in text:
        return False
    head, rest = text.split(README_START, 1)
    _, tail = rest.split(README_END, 1)
    peers = peer_summary(matrix)
    block = (f"\n_{matrix['generated']}, commit `{matrix['commit']}`, against {matrix['target']}; "
             f"details and reasons in [compat/MATRIX.md](compat/MATRIX.md)._\n\n{table(matrix)}\n"
             + (f"\n{peers}; each test's result in [compat/MATRIX.md](compat/MATRIX.md).\n" if peers else ""))
    readme.write_text(head + README_START + block + README_END + tail)
    return True


def peer_suites(target: str) -> list[dict]:
    """Runs the client libraries' own suites against the target (a kafka-shim of their own by default)."""
    import tempfile

    from compat.peers import kafka_python, runner

    if target == "testcontainers":
        print("the client libraries' own suites need a broker address; not run against testcontainers", file=sys.stderr)
        return []
    external = target not in ("", "shim")
    with tempfile.TemporaryDirectory(prefix="kafka-python-suite-") as workdir:
        try:
            result = kafka_python.run(Path(workdir), target if external else None)
        except (runner.SdistUnavailable, RuntimeError) as exc:
            print(f"kafka-python's own suite did not run: {exc}", file=sys.stderr)
            return []
    expected = None if external else runner.load_expected(kafka_python.SUITE.expected_file)
    section = kafka_python.matrix_section(result, expected)
    section["generated"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    section["commit"] = _git("rev-parse", "--short", "HEAD")
    return [section]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m compat.matrix", description=__doc__.split("\n\n")[0])
    parser.add_argument("--kafka-bootstrap", metavar="HOST:PORT|testcontainers",
                        help="run against this broker instead of an in-process kafka-shim")
    parser.add_argument("--no-run", action="store_true", help="print the matrix from the last matrix.json")
    parser.add_argument("--no-write", action="store_true", help="do not write MATRIX.md / matrix.json")
    parser.add_argument("--out", type=Path, default=HERE, help="where to write MATRIX.md and matrix.json")
    parser.add_argument("--target-name", metavar="TEXT",
                        help="what the broker under test is, for the header (default: its address)")
    parser.add_argument("--note", action="append", default=[], metavar="TEXT",
                        help="a line for the header, e.g. where the Spark connector jars came from (repeatable)")
    parser.add_argument("--no-peers", action="store_true",
                        help="leave out the client libraries' own suites (compat/peers)")
    parser.add_argument("--peers-only", action="store_true",
                        help="rerun only the client libraries' own suites; keep the scenario results of matrix.json")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    args = _parser().parse_args(argv)

    args.out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = args.out / "matrix.json", args.out / "MATRIX.md"
    if args.no_run:
        matrix = json.loads(json_path.read_text())
        print(table(matrix))
        return 0
    if args.peers_only:
        matrix = json.loads(json_path.read_text())
        matrix["peer_suites"] = peer_suites((args.kafka_bootstrap or os.environ.get("KAFKA_SHIM_TARGET") or "").strip())
        print(peer_summary(matrix) or "no client library's own suite ran")
        return _write(args, matrix, json_path, md_path)

    import pytest

    target = (args.kafka_bootstrap or os.environ.get("KAFKA_SHIM_TARGET") or "").strip()
    pytest_args = [str(HERE), "-q", "-p", "no:randomly", "-W", "ignore::DeprecationWarning"]
    if args.kafka_bootstrap:
        pytest_args += ["--kafka-bootstrap", args.kafka_bootstrap]
    collector = Collector()
    code = pytest.main(pytest_args + extra, plugins=[collector])
    if not collector.cells:
        print(f"no compat test was collected (pytest exit code {code})", file=sys.stderr)
        return 2
    description = {"": "kafka-shim (in-process, a fresh broker per test module)",
                   "shim": "kafka-shim (in-process, a fresh broker per test module)",
                   "testcontainers": "apache/kafka:3.9.1 (testcontainers)"}.get(target, f"the broker at {target}")
    matrix = build(collector, args.target_name or description, client_versions())
    matrix["notes"] = args.note
    if not args.no_peers:
        matrix["peer_suites"] = peer_suites(target)
    print()
    print(table(matrix))
    return _write(args, matrix, json_path, md_path)


def _write(args, matrix: dict, json_path: Path, md_path: Path) -> int:
    if args.no_write:
        return 0
    target = (args.kafka_bootstrap or os.environ.get("KAFKA_SHIM_TARGET") or "").strip()
    json_path.write_text(json.dumps(matrix, indent=1) + "\n")
    md_path.write_text(markdown(matrix, args.out.resolve()))
    if args.out == HERE and target in ("", "shim") and update_readme(matrix, ROOT / "README.md"):
        print("updated the matrix in README.md")
    print(f"\nwrote {md_path.relative_to(ROOT) if md_path.is_relative_to(ROOT) else md_path} and {json_path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
