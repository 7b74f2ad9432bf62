"""Regenerate ``kafka39.json``, the catalogue of Apache Kafka 3.9's topic and broker configs.

Source: the config reference Kafka generates from its own ``ConfigDef``s (``TopicConfig``/``LogConfig``,
``KafkaConfig`` and its ``*Configs`` classes) for its documentation, published in the apache/kafka-site
repository as ``39/generated/topic_config.html`` and ``39/generated/kafka_config.html``. Each entry keeps
the name, type, default, valid values, importance, documentation, and for topic configs the broker
property that supplies the default ("Server Default Property"), for broker configs the update mode
(read-only, per-broker, cluster-wide: ``DynamicBrokerConfig``).

    git clone --depth 1 https://github.com/apache/kafka-site
    python -m shim.configs.generate kafka-site/39/generated > shim/configs/kafka39.json

The later releases are deltas over 3.9's (``catalogue.py``). ``kafka4x.json``, the broker configs each adds,
comes from the same references, each release's against the one before it; the other changes (removed
configs, defaults, validators, update modes, types) are printed to stderr for ``catalogue.py``'s tables:

    python -m shim.configs.generate --added kafka-site/{39,40,41}/generated > shim/configs/kafka4x.json
"""

from __future__ import annotations

import html
import json
import re
import sys
from pathlib import Path

_ITEM = re.compile(r"<li>\s*<h4>.*?>([^<>]+)</a></h4>\s*<p>(.*?)</p>\s*<table><tbody>(.*?)</tbody></table>", re.S)
_ROW = re.compile(r"<tr><th>([^<]+):</th><td>(.*?)</td></tr>", re.S)
_NICE_UNIT = re.compile(r"^(-?\d+) \([^)]*\)$")  # "86400000 (1 day)", "4096 (4 kibibytes)"


def _default(text: str, type_: str) -> str | None:
    text = html.unescape(text)
    if text in ("null", ""):  # "": no default at all (a required config: ConfigDef.NO_DEFAULT_VALUE)
        return None
    if text == '""':
        return ""
    m = _NICE_UNIT.match(text)
    return m.group(1) if m and type_ in ("int", "long") else text


def parse(page: str, kind: str) -> list[dict]:
    entries = []
    for name, doc, table in _ITEM.findall(page):
        rows = dict(_ROW.findall(table))
        type_ = rows["Type"]
        entry = {"name": name, "type": type_, "default": _default(rows["Default"], type_),
                 "valid": html.unescape(rows.get("Valid Values", "")), "importance": rows["Importance"],
                 "doc": doc}
        if kind == "topic":
            synonym = rows.get("Server Default Property")
            entry["synonym"] = None if synonym in (None, "null") else synonym
        else:
            entry["update_mode"] = rows["Update Mode"]
        entries.append(entry)
    return entries


def _release(folder: Path) -> str:
    digits = folder.parent.name  # kafka-site/41/generated -> 4.1
    return f"{digits[0]}.{digits[1:]}"


def added(folders: list[Path], report=sys.stderr) -> dict:
    """The broker configs each release adds over the one before it; the rest of its changes to ``report``."""
    pages = [{e["name"]: e for e in parse((f / "kafka_config.html").read_text(), "broker")} for f in folders]
    out = {}
    for prev, cur, folder in zip(pages, pages[1:], folders[1:]):
        release = _release(folder)
        out[release] = [cur[n] for n in sorted(cur) if n not in prev]
        for name in sorted(prev):
            if name not in cur:
                print(f"{release} removed {name}", file=report)
                continue
            for field in ("type", "default", "valid", "importance", "update_mode"):
                if prev[name][field] != cur[name][field]:
                    print(f"{release} {field} {name}: {prev[name][field]!r} -> {cur[name][field]!r}", file=report)
    return out


def main(argv: list[str]) -> int:
    if argv[1] == "--added":
        folders = [Path(a) for a in argv[2:]]
        data = {"source": "apache/kafka-site " + " and ".join(f"{f.parent.name}/generated/kafka_config.html"
                                                               for f in folders[1:]) + ": the broker configs each "
                          "release adds", "broker": added(folders)}
        json.dump(data, sys.stdout, indent=1, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    folder = Path(argv[1])
    data = {
        "source": "apache/kafka-site 39/generated/topic_config.html and kafka_config.html (Apache Kafka 3.9)",
        "topic": parse((folder / "topic_config.html").read_text(), "topic"),
        "broker": parse((folder / "kafka_config.html").read_text(), "broker"),
    }
    json.dump(data, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
