# Two entry points: `make serve` starts a broker on 127.0.0.1:9092 over ./.kafka-shim,
# `make test` runs the whole test suite. Both create .venv and install what they need:
# serve only kafka-shim itself, test also the clients, the Java jars, Docker Compose and kcat.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

SOURCES := pyproject.toml setup.py codecs/kafka_codecs/_walk.c codecs/kafka_codecs/_produce.c

# pip is upgraded once, when the venv is made (an order-only prerequisite: a later change of the
# sources only reinstalls)
$(BIN)/python:
	$(PYTHON) -m venv $(VENV) && $(BIN)/pip install --quiet --upgrade pip

$(STAMP): $(SOURCES) | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $(STAMP)

# The test installs include kafka-shim itself, in the same pip run: each run resolves every
# requirement and builds the C extension again, so a first `make test` pays for one, not two.
$(TEST_STAMP): $(SOURCES) | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test,java,java4]'
	touch $(STAMP) $(TEST_STAMP)

# PySpark (~300 MB) for compat/test_spark*.py, only when its connector jars are given:
# KAFKA_SHIM_SPARK_JARS=<dir> or KAFKA_SHIM_SPARK_PACKAGES=<maven coordinates> (compat/README.md);
# .ci/run sets KAFKA_SHIM_SPARK_JARS to shared/spark-jars beside the repository when it exists
SPARK_STAMP := $(VENV)/.installed-spark
# with PySpark, one pip run installs every extra (each run resolves all and builds the extensions again)
TEST_DEPS := $(TEST_STAMP)
ifneq ($(strip $(KAFKA_SHIM_SPARK_JARS)$(KAFKA_SHIM_SPARK_PACKAGES)),)
TEST_DEPS := $(SPARK_STAMP)
endif

$(SPARK_STAMP): $(SOURCES) | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test,java,java4,spark]'
	touch $(STAMP) $(TEST_STAMP) $(SPARK_STAMP)

.PHONY: serve test
serve: $(STAMP)
	@# bytecode, as a regular install has it (an editable one does not): a faster start
	@$(BIN)/python -m compileall -q shim codecs/kafka_codecs >/dev/null
	$(BIN)/kafka-shim serve

# tests/ and compat/ but their serial tests on two pytest-xdist workers (each module on one worker),
# then one session of the serial tests (see conftest.py); both always run, and either failing fails
# `make test`
test: $(TEST_DEPS) kcat
	$(BIN)/python -m pytest -q -n 2 --dist loadfile -m "not serial" tests compat; parallel=$$?; \
	$(BIN)/python -m pytest -q -m serial; serial=$$?; \
	test $$parallel -eq 0 && test $$serial -eq 0

# kcat for compat/test_kcat_cli.py and the benchmark's C-client consume phases: installed with apt when missing and running as root;
# otherwise those tests are skipped and say why.
.PHONY: kcat
kcat:
	@command -v kcat >/dev/null 2>&1 || command -v kafkacat >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing kcat with apt-get"; \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq kcat; } >/dev/null 2>&1 \
	      || echo "apt-get could not install kcat: the kcat compat tests will be skipped"; \
	  else \
	    echo "kcat is missing and cannot be installed here (needs root and apt-get): the kcat compat tests will be skipped"; \
	  fi; }

# `make bench` runs the benchmark harness (bench/README.md); BENCH_ARGS are passed through,
# e.g. make bench BENCH_ARGS=--smoke
BENCH_STAMP := $(VENV)/.installed-bench

$(BENCH_STAMP): pyproject.toml setup.py codecs/kafka_codecs/_walk.c codecs/kafka_codecs/_produce.c
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -e '.[bench,java]'
	touch $(BENCH_STAMP)

.PHONY: bench
bench: $(BENCH_STAMP) kcat
	$(BIN)/python -m bench $(BENCH_ARGS)
