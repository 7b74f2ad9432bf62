"""Benchmark harness: kafka-shim against Tansu and noida-db, driven by librdkafka.

``python -m bench --help`` for usage; bench/README.md for the method and the latest results.
"""
