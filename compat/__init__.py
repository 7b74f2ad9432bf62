"""Compatibility suites: stock Kafka clients against kafka-shim (or any broker), scenario by scenario.

``compat/scenarios/`` is the catalogue, ``python -m compat.matrix`` runs the suites and writes
``compat/MATRIX.md``; see ``compat/README.md``.
"""
