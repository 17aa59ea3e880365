# The whole set-up on a fresh machine: `make demo` and `make test` (each creates .venv when missing).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEMO_DB ?= sqlite:///demo.db

.PHONY: demo test lint bench clean

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

bench: $(BIN)/rewrite-monitor
	$(BIN)/python -m benchmarks.run

lint: $(BIN)/rewrite-monitor
	$(BIN)/ruff check monitor dashboard tests migrations benchmarks scripts
	$(BIN)/ruff format --check monitor dashboard tests migrations benchmarks scripts
	$(BIN)/mypy

clean:
	rm -rf $(VENV) demo.db demo.db-wal demo.db-shm .pytest_cache .mypy_cache
