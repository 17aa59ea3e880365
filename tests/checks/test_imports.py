"""Importing monitor.checks must not pull in the DB, UI, LLM or scheduler stacks (STYLE.md)."""

from __future__ import annotations

import json
import subprocess
import sys

FORBIDDEN = ("sqlalchemy", "streamlit", "anthropic", "sentry_sdk", "apscheduler")


def test_importing_checks_and_running_them_loads_no_heavy_stack():
    code = (
        "import json, sys\n"
        "import monitor.checks\n"
        "from monitor.checks import run_checks\n"
        "from monitor.checks.rules import load_rules\n"
        "from monitor.record import RewriteRecord\n"
        "run_checks(RewriteRecord(conv_id='c', request_id='r', turn=2, latest='Why?', query='Why?',"
        " rewritten=False), load_rules())\n"
        f"print(json.dumps(sorted(m for m in {FORBIDDEN!r} if m in sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []
