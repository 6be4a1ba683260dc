# The two commands a newcomer needs: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEVSTAMP := $(VENV)/.installed-dev
DEMO_DIR ?= .demo/context

# Bytecode caches are written even where the environment turns them off (some container
# images set PYTHONDONTWRITEBYTECODE): without them every test worker compiles the package
# and rewrites every test module again (collection 16 s instead of 8 s per worker), and
# every CLI or worker process a test starts compiles the package too (a `contextfs write`
# 1.6 s instead of 1.0 s). An empty value is the same to Python as an unset one.
export PYTHONDONTWRITEBYTECODE :=

.PHONY: demo test stress bench lint format docs screenshots mutate clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# setuptools ends every editable install with a notice that a folder named like the package
# in the current directory takes precedence over it; README.md (Install) says what that means
# here, so the notice is left out of what make prints.
EDITABLE := PYTHONWARNINGS="ignore:Editable installation:UserWarning" $(BIN)/python -m pip install --quiet -e

$(STAMP): pyproject.toml | $(BIN)/python
	$(EDITABLE) .
	touch $@

$(DEVSTAMP): pyproject.toml | $(BIN)/python
	$(EDITABLE) '.[dev]'
	touch $@ $(STAMP)

demo: $(STAMP)
	rm -rf $(DEMO_DIR)
	$(BIN)/contextfs demo --dir $(DEMO_DIR)

test: $(DEVSTAMP)
	$(BIN)/python -m pytest -n 2 tests

# Thousands of hostile inputs, hundreds of kills, fleets of 8 and 16 syncing machines, a
# 200-turn agent conversation, and minutes of a person, two agents and the watcher on one
# root (make test runs a fast slice of each).
stress: $(DEVSTAMP)
	CONTEXTFS_STRESS=200 $(BIN)/python -m pytest -n 2 -q tests/reliability

# Mutation testing of the promise modules (tests/mutation.toml): about 45 minutes on two cores
# with the record of the last run in place, nearer two hours the first time
# (docs/development.md); one group, or SURVIVORS=1 after adding tests, takes minutes.
# One group: make mutate GROUP=files; JOBS=1 leaves a core free. Not part of make test.
MUTSTAMP := $(VENV)/.installed-mutation
$(MUTSTAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev,mutation]'
	touch $@ $(DEVSTAMP) $(STAMP)

mutate: $(MUTSTAMP)
	$(BIN)/python tests/mutate.py $(if $(GROUP),--group $(GROUP)) $(if $(SURVIVORS),--survivors) $(if $(TIMEOUTS),--timeouts) $(if $(EQUIVALENTS),--equivalents) $(if $(NICE),--nice $(NICE)) $(if $(JOBS),--jobs $(JOBS))

bench: $(DEVSTAMP)
	@for f in tests/benchmarks/bench_*.py; do echo "## $$f"; $(BIN)/python $$f || exit 1; done

# Formatting is ruff format's job (line length 100, [tool.ruff] in pyproject.toml); lint checks it.
format: $(DEVSTAMP)
	$(BIN)/ruff format contextfs scopes evolve integrations tests

docs: $(DEVSTAMP)
	$(BIN)/cog -r docs/cli.md docs/scopes.md

# docs/images/review-*.png, taken by the browser the page's tests drive (Debian's chromium).
screenshots: $(DEVSTAMP)
	cd tests && ../$(BIN)/python ui_screenshots.py ../docs/images

# mypy checks the package as installed (see [tool.mypy] in pyproject.toml): a plain copy in
# build/typecheck, whose paths in the report are mapped back to the source folders. pip builds
# in build/lib, which keeps files deleted from the source; clearing it keeps them out of the copy.
TYPECHECK := build/typecheck
lint: $(DEVSTAMP)
	$(BIN)/ruff check contextfs scopes evolve integrations tests
	$(BIN)/ruff format --check contextfs scopes evolve integrations tests
	@rm -rf $(TYPECHECK) build/lib build/bdist.*
	@mkdir -p build
	@$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation --target $(TYPECHECK) . \
		> $(TYPECHECK).log 2>&1 || { cat $(TYPECHECK).log; exit 1; }
	@MYPYPATH=$(TYPECHECK) $(BIN)/mypy -p contextfs > $(TYPECHECK).log 2>&1; status=$$?; \
		sed -E 's#^$(TYPECHECK)/contextfs/(scopes|evolve|integrations)/#\1/#; s#^$(TYPECHECK)/##' \
		$(TYPECHECK).log; exit $$status

clean:
	rm -rf $(VENV) .demo build dist *.egg-info .pytest_cache .hypothesis
