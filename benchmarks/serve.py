"""``rewrite-monitor dashboard`` served for a real browser: the review benchmark
(``benchmarks.dashboard_review``) and the browser test (``tests/e2e/test_browser.py``) start it alike."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def dashboard(url: str, home: Path, reviewer: str, wait: float = 60.0) -> Iterator[str]:
    """``rewrite-monitor dashboard`` over the store at ``url`` on a free port, up and healthy: yields its
    base URL, and stops the command and the Streamlit server it started on exit.

    ``home`` is the process's ``HOME`` and working folder (no ``~/.streamlit/secrets.toml`` of the
    machine: it runs without auth, signing verdicts as ``reviewer``). Raises ``RuntimeError`` with the
    server's standard error when it does not answer ``/_stcore/health`` within ``wait`` seconds (the
    first page load imports pandas and altair) or exits before."""
    env = {**os.environ, "HOME": str(home), "REWRITE_MONITOR_REVIEWER_NAME": reviewer}
    env.pop("REWRITE_MONITOR_CONFIG", None)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "monitor", "--database-url", url, "dashboard", "--port", str(port)],
        cwd=home,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + wait
    try:
        while True:
            try:
                with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as resp:
                    if resp.read() == b"ok":
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                stderr = proc.stderr.read().decode() if proc.stderr else ""
                raise RuntimeError(f"the dashboard did not start within {wait:.0f} s: {stderr}")
            time.sleep(0.3)
        yield base
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        if proc.stderr:
            proc.stderr.close()


def press(driver: Any, *chord: str) -> None:
    """Press ``chord`` in the browser ``driver`` drives (a selenium WebDriver) as a reviewer would: the
    modifier keys held down (``Keys.CONTROL``, ``Keys.SHIFT``), the last key typed, then all released."""
    from selenium.webdriver.common.action_chains import ActionChains

    actions = ActionChains(driver)
    for k in chord[:-1]:
        actions.key_down(k)
    actions.send_keys(chord[-1])
    for k in reversed(chord[:-1]):
        actions.key_up(k)
    actions.perform()


def type_text(driver: Any, text: str) -> None:
    """Type ``text`` into whatever has the focus in the browser ``driver`` drives (a selenium WebDriver),
    key by key, as a reviewer would."""
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(driver).send_keys(text).perform()
