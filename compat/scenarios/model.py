"""The matrix's clients and the shape of a scenario (compat/scenarios/)."""

from __future__ import annotations

from dataclasses import dataclass

CLIENTS: dict[str, str] = {
    "java": "Java kafka-clients 3.9.1 (producer, consumer, Admin)",
    "spark-pattern": "Spark 4.0 Kafka connector's calls, replayed in Java with kafka-clients 3.9.1",
    "spark": "PySpark 4.0 with spark-sql-kafka-0-10",
    "kcat": "kcat 1.7 (librdkafka)",
    "confluent-kafka": "confluent-kafka-python (librdkafka 2.x)",
    "kafka-python": "kafka-python 3.0",
    "aiokafka": "aiokafka 0.14",
}

PY = ("confluent-kafka", "kafka-python", "aiokafka")


@dataclass(frozen=True)
class Scenario:
    id: str
    title: str
    spec: str
    applies_to: tuple[str, ...]
