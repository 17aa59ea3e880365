#!/usr/bin/env bash
# Build the wheel, install it into a fresh virtualenv outside the checkout, and drive the installed
# `rewrite-monitor` from an empty folder: what an operator who runs `pip install` gets, with nothing of
# the checkout at hand. One line per step; the first failing step prints the end of its output and
# the script exits 1. Everything lives in one temporary folder, removed on exit.
#
#   scripts/wheel_smoke.sh    # or `make wheel-smoke`; PYTHON=python3.12 picks the interpreter,
#                             # SMOKE_WHEELHOUSE=DIR where the dependencies' wheels are kept
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-python3}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/rewrite-monitor-smoke.XXXXXX")
case "$TMP/" in
"$REPO"/*)
    echo "wheel smoke: the temporary folder $TMP is inside the checkout; set TMPDIR elsewhere" >&2
    exit 2
    ;;
esac
DASHBOARD_PID=""

# stop PID SECONDS: SIGTERM to this shell's child PID, SIGKILL if it is still running after SECONDS;
# returns its exit status (137 when it had to be killed). Polled, since bash's wait has no timeout.
stop() {
    local i rc=0
    kill "$1" 2>/dev/null || return 0
    for ((i = 0; i < $2 * 10; i++)); do
        case $(ps -o stat= -p "$1" 2>/dev/null) in
        "" | Z*) break ;; # gone, or exited and waiting to be reaped
        esac
        sleep 0.1
    done
    kill -9 "$1" 2>/dev/null || true # no effect on a process that has exited
    wait "$1" || rc=$?
    return "$rc"
}

cleanup() {
    if [ -n "$DASHBOARD_PID" ]; then
        stop "$DASHBOARD_PID" 5 || true
    fi
    rm -rf "$TMP"
}
trap cleanup EXIT

# The caller's own settings (a config file, a database URL) must not leak into the installed tool:
# every step runs on the defaults and its own flags. Nor may a checkout on PYTHONPATH stand in for it.
while read -r name; do unset "$name"; done < <(compgen -e | grep -E '^(REWRITE_MONITOR_|DATABASE_URL$)' || true)
unset PYTHONPATH

SRC=$TMP/src VENV=$TMP/venv WORK=$TMP/work LOGS=$TMP/logs
# The dependencies' wheels, kept between runs: pip's own cache is not always written (not on this
# project's machines), and downloading some 350 MB of wheels each time would double the run. Remove
# the folder to install the newest releases again.
WHEELHOUSE=${SMOKE_WHEELHOUSE:-${XDG_CACHE_HOME:-$HOME/.cache}/rewrite-monitor/smoke-wheelhouse}
DB="sqlite:///$TMP/s.db"
RM=$VENV/bin/rewrite-monitor
mkdir -p "$SRC" "$WORK" "$LOGS" "$WHEELHOUSE"
STARTED=$SECONDS
STEPS=0

# step NAME COMMAND...: run COMMAND (a function or a program) in the empty folder, its output in a
# log, and print one line; on failure print the log's end and exit 1.
step() {
    local name=$1 rc=0 start=$SECONDS
    shift
    STEPS=$((STEPS + 1))
    # The subshell keeps errexit (bash ignores it in a function called from `if` or `||`), so a
    # multi-command step stops at its first failing command.
    set +e
    (
        set -e
        cd "$WORK"
        "$@"
    ) >"$LOGS/$STEPS.log" 2>&1
    rc=$?
    set -e
    report "$name" "$rc" "$start"
}

# step_here NAME FUNCTION: as step, but in this shell, for the steps that start or stop the dashboard
# (a server started in a subshell would not be this shell's child to wait for). FUNCTION returns
# non-zero itself on failure.
step_here() {
    local name=$1 rc=0 start=$SECONDS
    STEPS=$((STEPS + 1))
    cd "$WORK"
    "$2" >"$LOGS/$STEPS.log" 2>&1 || rc=$?
    report "$name" "$rc" "$start"
}

report() {
    if [ "$2" -ne 0 ]; then
        printf 'FAIL  %-40s exit %d; the end of its output:\n' "$1" "$2"
        tail -n 40 "$LOGS/$STEPS.log" | sed 's/^/      /'
        exit 1
    fi
    printf 'ok    %-40s %3ds\n' "$1" $((SECONDS - $3))
}

build_wheel() {
    # From a copy: setuptools' build/ keeps files deleted from the source and would ship them.
    tar -C "$REPO" --exclude=./.git --exclude=./.venv --exclude=./build --exclude=./dist \
        --exclude='*.egg-info' --exclude=__pycache__ --exclude=.pytest_cache --exclude=.ruff_cache \
        --exclude=.mypy_cache --exclude=.hypothesis --exclude='*.db' --exclude='*.db-*' -cf - . |
        tar -C "$SRC" -xf -
    "$PYTHON" -m pip wheel --no-deps --quiet --wheel-dir "$TMP/dist" "$SRC"
    ls "$TMP"/dist/rewrite_monitor-*.whl
}

install_wheel() {
    local wheel
    wheel=$(ls "$TMP"/dist/rewrite_monitor-*.whl)
    "$PYTHON" -m venv "$VENV"
    # Offline from the wheelhouse when it holds every dependency; else fill it from the package index
    # first (the first run, or a requirement the kept wheels no longer meet).
    # [all]: the server and every optional part (the base install is the client alone: see client_only).
    if ! "$VENV/bin/python" -m pip install --quiet --no-index --find-links "$WHEELHOUSE" "$wheel[all]"; then
        echo "filling the wheelhouse $WHEELHOUSE"
        "$VENV/bin/python" -m pip wheel --quiet --wheel-dir "$WHEELHOUSE" "$wheel[all]"
        rm -f "$WHEELHOUSE"/rewrite_monitor-*.whl
        "$VENV/bin/python" -m pip install --quiet --no-index --find-links "$WHEELHOUSE" "$wheel[all]"
    fi
    # The tool must come from the virtualenv, not from a checkout on sys.path.
    "$VENV/bin/python" -c 'import monitor, sys; print(monitor.__file__); sys.exit(sys.prefix not in monitor.__file__)'
}

CLIENT=$TMP/client

client_only() {
    # The base install is the client: no dependency at all, monitor.instrument on the standard library,
    # and a command line that names the extra to install instead of a traceback.
    local wheel rc=0
    wheel=$(ls "$TMP"/dist/rewrite_monitor-*.whl)
    "$PYTHON" -m venv "$CLIENT"
    "$CLIENT/bin/python" -m pip install --quiet --no-index "$wheel"
    "$CLIENT/bin/python" -m pip list --format=freeze 2>/dev/null | grep -v -E '^(pip|setuptools)==' >"$TMP/client.txt"
    cat "$TMP/client.txt"
    test "$(cut -d= -f1 "$TMP/client.txt")" = "rewrite-monitor"
    "$CLIENT/bin/python" -c '
import sys
import monitor.instrument
extra = {m.split(".")[0] for m in sys.modules} - set(sys.stdlib_module_names) - {"monitor", "__main__", "_distutils_hack"}
sys.exit(f"monitor.instrument imported {sorted(extra)}" if extra else 0)
'
    "$CLIENT/bin/rewrite-monitor" queue 2>"$TMP/client.err" || rc=$?
    cat "$TMP/client.err"
    test "$rc" -eq 2 && grep -q "pip install 'rewrite-monitor\[server\]'" "$TMP/client.err"
}

traced_app() {
    # The README's traced app, with the client and the OpenTelemetry SDK only: its two events parse, and it
    # imports nothing but the standard library, OpenTelemetry (and the typing_extensions it needs) and
    # monitor.instrument.
    if ! "$CLIENT/bin/python" -m pip install --quiet --no-index --find-links "$WHEELHOUSE" opentelemetry-sdk; then
        "$CLIENT/bin/python" -m pip wheel --quiet --wheel-dir "$WHEELHOUSE" opentelemetry-sdk
        "$CLIENT/bin/python" -m pip install --quiet --no-index --find-links "$WHEELHOUSE" opentelemetry-sdk
    fi
    cp "$REPO/examples/traced_app.py" "$WORK/traced_app.py"
    "$CLIENT/bin/python" -c '
import json, runpy, sys
runpy.run_path("traced_app.py", run_name="__main__")
allowed = {"monitor", "opentelemetry", "typing_extensions", "importlib_metadata", "zipp", "__main__", "_distutils_hack"}
extra = {m.split(".")[0] for m in sys.modules} - set(sys.stdlib_module_names) - allowed
sys.exit(f"the traced app imported {sorted(extra)}" if extra else 0)
' >"$TMP/events.jsonl" 2>"$TMP/spans.txt"
    "$CLIENT/bin/python" -c '
import json, sys
events = [json.loads(line)["event"] for line in open(sys.argv[1])]
assert events == ["ctx_input", "rewrite"], events
assert "rewrite_monitor.request_id" in open(sys.argv[2]).read()
' "$TMP/events.jsonl" "$TMP/spans.txt"
}

run_examples() {
    cp -r "$REPO/examples" "$WORK/examples"
    "$RM" --database-url "$DB" run examples/cast2019_first_topics.jsonl.gz examples/cast2020.jsonl
}

ingest_traces() {
    # OpenTelemetry traces (examples/otel): every fixture shape maps to a rewrite, nothing quarantined.
    "$RM" --database-url "sqlite:///$TMP/traces.db" db upgrade
    "$RM" --database-url "sqlite:///$TMP/traces.db" ingest --json examples/otel/ >"$TMP/traces.json"
    "$VENV/bin/python" -c 'import json,sys; s=json.load(open(sys.argv[1])); sys.exit(not (s["stored_by_kind"]["rewrite"] == 4 and s["rejected_total"] == 0))' "$TMP/traces.json"
}

export_cases() {
    # A verdict makes the one regression case the export and replay's reader then see.
    "$RM" --database-url "$DB" verdict cast2020-90_3 --label fabricated_constraint --reviewer smoke \
        --must-not-include Boeing \
        --query "How does the biggest commercial plane's fuel consumption compare to its competitors?"
    "$RM" --database-url "$DB" export --out "$TMP/evalset.jsonl"
    test "$(wc -l <"$TMP/evalset.jsonl")" -eq 1
}

validate_export() {
    # replay's own reader: jsonschema against the bundled schemas/regression_case.schema.json.
    "$VENV/bin/python" -c '
import sys
from pathlib import Path
from monitor.replay.judge import load_cases
cases = load_cases(Path(sys.argv[1]))
assert [c["label"] for c in cases] == ["fabricated_constraint"], cases
' "$TMP/evalset.jsonl"
}

export_schemas() {
    "$RM" schema export "$WORK/schemas"
    # What the installed tool generates is what it ships.
    local bundled f
    bundled=$("$VENV/bin/python" -c 'from monitor.bundled import bundled_dir; print(bundled_dir("schemas"))')
    for f in "$WORK"/schemas/*.schema.json; do
        cmp "$f" "$bundled/${f##*/}"
    done
}

render_dashboard() {
    # The installed app's first page under Streamlit's test runner: its plain-name imports
    # (`import reads`, `from resources import ...`) and pages resolve inside site-packages.
    REWRITE_MONITOR_DATABASE_URL=$DB "$VENV/bin/python" -c '
from streamlit import config
from streamlit.testing.v1 import AppTest
from monitor.cli.commands.dashboard import app_path
# as `rewrite-monitor dashboard` starts it: bound to the loopback address (the app refuses any other
# address without a login, and an empty folder has no .streamlit/config.toml to say so)
config.set_option("server.address", "127.0.0.1")
at = AppTest.from_file(str(app_path()), default_timeout=60).run()
assert not at.exception, [e.value for e in at.exception]
assert not at.error, [e.value for e in at.error]
print(app_path())
'
}

serve_dashboard() {
    local port _
    port=$("$VENV/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') ||
        return 1
    REWRITE_MONITOR_DASHBOARD_ADDRESS=127.0.0.1 "$RM" --database-url "$DB" dashboard --port "$port" \
        >"$LOGS/dashboard.log" 2>&1 &
    DASHBOARD_PID=$!
    for _ in $(seq 1 120); do
        if ! kill -0 "$DASHBOARD_PID" 2>/dev/null; then
            cat "$LOGS/dashboard.log"
            echo "the dashboard exited before answering"
            return 1
        fi
        if "$VENV/bin/python" -c 'import sys, urllib.request as u; sys.exit(u.urlopen(sys.argv[1], timeout=2).read() != b"ok")' \
            "http://127.0.0.1:$port/_stcore/health" 2>/dev/null; then
            echo "health ok on 127.0.0.1:$port"
            return 0
        fi
        sleep 0.5
    done
    cat "$LOGS/dashboard.log"
    echo "no answer from http://127.0.0.1:$port/_stcore/health within 60 s"
    return 1
}

stop_dashboard() {
    local pid=$DASHBOARD_PID rc=0
    DASHBOARD_PID=""
    stop "$pid" 15 || rc=$?
    echo "exit status $rc after SIGTERM"
    # Which status Streamlit gives on SIGTERM is not the point; that it goes, unforced, is.
    [ "$rc" -ne 137 ]
}

echo "wheel smoke test in $TMP (python: $("$PYTHON" -c 'import sys; print(sys.version.split()[0])'))"
step "build the wheel" build_wheel
step "client install: the standard library only" client_only
step "the README's traced app on the client" traced_app
step "install it into a fresh virtualenv ([all])" install_wheel
step "db upgrade" "$RM" --database-url "$DB" db upgrade
step "run on a copy of examples/" run_examples
step "ingest the OpenTelemetry traces of examples/otel" ingest_traces
step "queue" "$RM" --database-url "$DB" queue
step "verdict, then export" export_cases
step "the export passes replay's schema check" validate_export
step "rules validate (bundled rules)" "$RM" rules validate
step "schema export" export_schemas
step "replay --help" "$RM" replay --help
step "dashboard app renders (AppTest)" render_dashboard
step_here "dashboard answers /_stcore/health" serve_dashboard
step_here "dashboard stops on SIGTERM" stop_dashboard
echo "wheel smoke test passed: $STEPS steps in $((SECONDS - STARTED)) s"
