# The whole set-up on a fresh machine: `make demo` and `make test` (each creates .venv when missing).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEMO_DB ?= sqlite:///demo.db
# The real TREC CAsT sample (examples/README.md); examples/otel holds synthetic traces, not demo data.
DEMO_LOGS := examples/cast2019_first_topics.jsonl.gz examples/cast2020.jsonl

.PHONY: demo test test-fast faults contracts wheel-smoke lint bench clean traces docs

$(BIN)/rewrite-monitor: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

demo: $(BIN)/rewrite-monitor
	$(BIN)/rewrite-monitor --database-url $(DEMO_DB) db upgrade
	$(BIN)/rewrite-monitor --database-url $(DEMO_DB) run $(DEMO_LOGS)

test: $(BIN)/rewrite-monitor
	$(BIN)/python -m pytest

# Everything but the tests marked `slow` (worker processes killed and restarted, the three-worker
# scale-out, concurrent runs, the browser, the real logs, hypothesis): under two minutes on 2 cores,
# for the edit-test loop. `make test` still runs all of them.
test-fast: $(BIN)/rewrite-monitor
	$(BIN)/python -m pytest -m "not slow"

# The fault suite at full size (tests/faults: SIGKILLs during rotation, split halves with three workers,
# a poison corpus, SQLite contention, secrets, redaction), printing its figures; `make test` runs it small.
faults: $(BIN)/rewrite-monitor
	$(BIN)/python -m tests.faults --size full

# The layering contracts between the pipeline stages (tests/test_layering.py), on their own.
contracts: $(BIN)/rewrite-monitor
	$(BIN)/python -m pytest -q tests/test_layering.py

# The built wheel in a fresh virtualenv outside the checkout, driven from an empty folder (needs no .venv).
wheel-smoke:
	PYTHON=$(PYTHON) bash scripts/wheel_smoke.sh

# Regenerate tests/data/traces with the real instrumentors (LangChain, LlamaIndex, OpenInference,
# OpenTelemetry GenAI) at the versions pinned in the [traces] extra, in a virtualenv of their own.
traces:
	test -x .venv-traces/bin/python || $(PYTHON) -m venv .venv-traces
	.venv-traces/bin/python -m pip install --quiet -e '.[traces]'
	.venv-traces/bin/python scripts/generate_traces.py
	test -x .venv-phoenix/bin/python || $(PYTHON) -m venv .venv-phoenix
	.venv-phoenix/bin/python -m pip install --quiet arize-phoenix==20.26.1
	.venv-phoenix/bin/python scripts/generate_traces.py --phoenix

# The parts of README.md and docs/ made from the code (the checks' tables, the settings, every command's
# --help, the demo's output, the accuracy table on ../shared/data): tests/test_docs.py fails when one is stale.
docs: $(BIN)/rewrite-monitor
	$(BIN)/python -m monitor.cli.docs

bench: $(BIN)/rewrite-monitor
	$(BIN)/python -m benchmarks.run

lint: $(BIN)/rewrite-monitor
	$(BIN)/ruff check monitor dashboard tests migrations benchmarks scripts
	$(BIN)/ruff format --check monitor dashboard tests migrations benchmarks scripts
	$(BIN)/mypy
	$(BIN)/python -m pytest -q tests/test_layering.py

clean:
	rm -rf $(VENV) .venv-traces .venv-phoenix demo.db demo.db-wal demo.db-shm .pytest_cache .mypy_cache
