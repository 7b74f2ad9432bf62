"""Client libraries' own integration suites, run unchanged against kafka-shim.

``runner`` does what every such suite needs (the sdist from PyPI, cached; a ``kafka-shim serve``
subprocess; the suite as a pytest subprocess; per-test outcomes from its JUnit XML; the comparison
with a committed expected-results file); ``kafka_python`` is kafka-python's suite. How to run them
alone, against another broker, and how to update the expected lists: compat/README.md.
"""
