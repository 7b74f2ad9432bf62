# Two entry points: `make serve` starts a broker on 127.0.0.1:9092 over ./.kafka-shim,
# `make test` runs the whole test suite. Both create .venv and install what they need.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,java]'
	touch $(STAMP)

.PHONY: serve test
serve: $(STAMP)
	$(BIN)/kafka-shim serve

test: $(STAMP) kcat
	$(BIN)/python -m pytest -q

# kcat for compat/test_kcat_cli.py: installed with apt when missing and running as root;
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

$(BENCH_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -e '.[bench]'
	touch $(BENCH_STAMP)

.PHONY: bench
bench: $(BENCH_STAMP)
	$(BIN)/python -m bench $(BENCH_ARGS)
