# The whole set-up on a fresh machine: `make demo` and `make test` (each creates .venv when missing).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEMO_DB ?= sqlite:///demo.db

.PHONY: demo test wheel-smoke lint bench clean

$(BIN)/rewrite-monitor: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

demo: $(BIN)/rewrite-monitor
	$(BIN)/rewrite-monitor --database-url $(DEMO_DB) db upgrade
	$(BIN)/rewrite-monitor --database-url $(DEMO_DB) run examples/

test: $(BIN)/rewrite-monitor
	$(BIN)/python -m pytest

# The built wheel in a fresh virtualenv outside the checkout, driven from an empty folder (needs no .venv).
wheel-smoke:
	PYTHON=$(PYTHON) bash scripts/wheel_smoke.sh

bench: $(BIN)/rewrite-monitor
	$(BIN)/python -m benchmarks.run

lint: $(BIN)/rewrite-monitor
	$(BIN)/ruff check monitor dashboard tests migrations benchmarks scripts
	$(BIN)/ruff format --check monitor dashboard tests migrations benchmarks scripts

clean:
	rm -rf $(VENV) demo.db demo.db-wal demo.db-shm .pytest_cache
