# Two entry points: `make serve` starts a broker on 127.0.0.1:9092 over ./.kafka-shim,
# `make test` runs the whole test suite. Both create .venv and install what they need.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

.PHONY: serve test
serve: $(STAMP)
	$(BIN)/kafka-shim serve

test: $(STAMP)
	$(BIN)/python -m pytest -q
