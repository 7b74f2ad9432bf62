"""How compat/spark_support.py picks the Kafka connector jars for the installed PySpark (no Spark
needed): PySpark's exact version when the directory has it, else the highest patch release of the
same minor version, never another minor version; and the skip says what to set."""

from __future__ import annotations

import pytest

from compat.spark_support import CONNECTOR_JARS, connector_config, pick_jar

SQL, TOKEN = CONNECTOR_JARS


def jars(tmp_path, *names):
    for name in names:
        (tmp_path / name).write_bytes(b"")
    return tmp_path


def test_exact_version_preferred(tmp_path):
    d = jars(tmp_path, f"{SQL}-4.0.0.jar", f"{SQL}-4.0.1.jar", f"{SQL}-4.0.3.jar")
    assert pick_jar(d, SQL, "4.0.1") == d / f"{SQL}-4.0.1.jar"


def test_same_minor_highest_patch(tmp_path):
    d = jars(tmp_path, f"{SQL}-4.0.0.jar", f"{SQL}-4.0.2.jar", f"{SQL}-4.0.10.jar", f"{SQL}-4.1.0.jar",
             f"{SQL}-4.0.9-sources.jar")
    assert pick_jar(d, SQL, "4.0.5") == d / f"{SQL}-4.0.10.jar"


def test_no_other_minor_version(tmp_path):
    d = jars(tmp_path, f"{SQL}-4.1.0.jar", f"{SQL}-3.5.1.jar", f"{TOKEN}-4.0.0.jar")
    assert pick_jar(d, SQL, "4.0.5") is None
    assert pick_jar(d, TOKEN, "4.0.5") == d / f"{TOKEN}-4.0.0.jar"


def test_config_takes_both_connector_jars_and_commons_pool2(tmp_path, monkeypatch):
    d = jars(tmp_path, f"{SQL}-4.0.0.jar", f"{TOKEN}-4.0.0.jar", "commons-pool2-2.12.0.jar", "kafka-clients-3.9.1.jar")
    monkeypatch.delenv("KAFKA_SHIM_SPARK_PACKAGES", raising=False)
    monkeypatch.setenv("KAFKA_SHIM_SPARK_JARS", str(d))
    assert connector_config("4.0.5")["spark.jars"].split(",") == [
        str(d / f"{SQL}-4.0.0.jar"), str(d / f"{TOKEN}-4.0.0.jar"), str(d / "commons-pool2-2.12.0.jar"),
        str(d / "kafka-clients-3.9.1.jar")]


def test_missing_jar_skips_saying_what_to_set(tmp_path, monkeypatch):
    d = jars(tmp_path, f"{SQL}-4.0.0.jar", "commons-pool2-2.12.0.jar")
    monkeypatch.delenv("KAFKA_SHIM_SPARK_PACKAGES", raising=False)
    monkeypatch.setenv("KAFKA_SHIM_SPARK_JARS", str(d))
    with pytest.raises(pytest.skip.Exception, match=f"lacks {TOKEN}-4.0.x.jar"):
        connector_config("4.0.5")
