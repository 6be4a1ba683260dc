# The two commands a newcomer needs: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEVSTAMP := $(VENV)/.installed-dev
DEMO_DIR ?= .demo/context

.PHONY: demo test stress bench lint docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(DEVSTAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(STAMP)

demo: $(STAMP)
	rm -rf $(DEMO_DIR)
	$(BIN)/contextfs demo --dir $(DEMO_DIR)

test: $(DEVSTAMP)
	$(BIN)/python -m pytest -n 2 tests

# Thousands of hostile inputs and hundreds of kills (make test runs a fast slice of each).
stress: $(DEVSTAMP)
	CONTEXTFS_STRESS=200 $(BIN)/python -m pytest -n 2 -q tests/test_reliability_crash.py \
		tests/test_hostile_inputs.py tests/test_security_repo.py tests/test_security_clone.py \
		tests/test_integrations_hostile.py

bench: $(DEVSTAMP)
	@for f in tests/benchmarks/bench_*.py; do echo "## $$f"; $(BIN)/python $$f || exit 1; done

docs: $(DEVSTAMP)
	$(BIN)/cog -r docs/cli.md

lint: $(DEVSTAMP)
	$(BIN)/ruff check contextfs scopes evolve integrations tests

clean:
	rm -rf $(VENV) .demo build dist *.egg-info .pytest_cache .hypothesis
