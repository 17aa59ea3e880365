"""A scripted reviewer clears the queue in a real browser with the keyboard alone, on a large store.

Usage::

    python -m benchmarks.dashboard_review [--records 100000] [--items 40] [--url URL]

Seeds a store as ``benchmarks.dashboard_load`` does (default 100,000 checked rewrites, 40 queue items a
day), serves it with ``rewrite-monitor dashboard`` and drives Debian's headless Chromium (1440x900)
through ``chromedriver``. The reviewer presses N on the Queue page, then for each of ``--items`` items:
on a control item (nothing flagged) ``1`` (ok) and Ctrl+Enter; on a flagged one, alternately ``2`` (a
false alarm on a synonym) and Ctrl+Enter, or ``3`` (fabricated_constraint), Shift+2 (the rewrite), ``a``
(accept the suggested terms) and Ctrl+Enter (pressed again when the form refuses a verdict with nothing
to assert, as on an item with nothing suggested), each item looked at for 0.35 s first (keys within
300 ms of an item showing are dropped as typed ahead). It prints:

- keys per verdict, by kind of verdict (a chord such as Ctrl+Enter counts as one key), which issue 16
  bounds at 6 for ok and false alarms and at 8 for a flagged rewrite with a label and an artifact;
- the app's own waiting per item, in seconds (median, 90th percentile, max): from Ctrl+Enter until the
  next item shows its title, its label radio and its Submit button, plus from the label key until
  Submit is enabled (the page reruns on a radio click). The reviewer's own reading time is not in it;
- the Overview after the review, in the same browser: from the click on its link in the navigation
  until its last section ("Alerts raised") is drawn and the app has stopped running, in seconds; first
  its first visit of this server (cold: nothing of it cached yet), then again from the Queue page
  (warm). Issue 35 bounds the cold figure at 1.5 s on 100,000 rewrites.

Needs Chromium and chromedriver (``apt-get install chromium chromium-driver``) and selenium (the dev
extra). The waiting time is a benchmark figure, never a test assertion.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import serve
from benchmarks.dashboard_load import measured_on, seed_and_say
from benchmarks.serve import dashboard

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
WAIT = 60.0
# While a run draws the next item, the previous item's form stays on the page marked stale until its
# new elements arrive: only live elements count as the next item's.
LIVE = "[not(ancestor-or-self::*[@data-stale='true'])]"
SUBMIT = f"//button[.//p[normalize-space()='Submit and next']]{LIVE}"
REFUSED = f"//*[@data-testid='stAlert'][contains(normalize-space(), 'Not stored yet')]{LIVE}"
READ = 0.35
"""Seconds the scripted reviewer looks at an item before its first key (more than the 300 ms in which
the dashboard drops keys as typed ahead)."""


def _until(check: Callable[[], Any], timeout: float = WAIT) -> float:
    """Poll ``check`` until it returns a truthy value; the seconds it took. Raises on timeout."""
    from selenium.common.exceptions import WebDriverException

    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        try:
            if check():
                return time.perf_counter() - t0
        except WebDriverException:
            pass  # an element redrawn by a rerun: look again
        time.sleep(0.02)
    raise SystemExit(f"gave up after {timeout:.0f} s waiting for the page")


def review(base: str, items: int) -> dict[str, Any]:
    """Clear ``items`` queue items at ``base`` with the keyboard; the keys and waits (module docstring)."""
    from selenium import webdriver
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=1440,900"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(str(CHROMEDRIVER)))
    keys: dict[str, list[int]] = {"ok": [], "false alarm": [], "flagged": []}
    waits: list[float] = []
    try:
        driver.get(base)
        _until(lambda: driver.find_elements(By.XPATH, "//button[.//p[normalize-space()='Review next']]"))

        def press(*chord: str) -> None:
            serve.press(driver, *chord)

        def done() -> bool:
            return "Queue done" in driver.find_element(By.TAG_NAME, "h1").text

        def ready(previous: str | None) -> bool:
            if done():
                return True
            title = driver.find_element(By.TAG_NAME, "h1").text
            return (
                title != previous
                and bool(driver.find_elements(By.XPATH, SUBMIT))
                and bool(driver.find_elements(By.XPATH, f"//div[@data-testid='stRadio']{LIVE}//label"))
            )

        def enabled() -> bool:
            buttons = driver.find_elements(By.XPATH, SUBMIT)
            return bool(buttons) and buttons[0].is_enabled()

        press("n")
        _until(lambda: ready(None))
        flagged_turn = 0
        for _ in range(items):
            if done():
                break  # the queue ran out before --items
            # the reviewer looks at the item before a key: keys within 300 ms of it showing are dropped
            # as typed ahead (dashboard/keys.py); not the app's waiting
            time.sleep(READ)
            title = driver.find_element(By.TAG_NAME, "h1").text
            control = "control stratum" in driver.find_element(By.TAG_NAME, "body").text
            if control:
                kind, chords = "ok", [("1",)]
            elif flagged_turn % 2 == 0:
                kind, chords = "false alarm", [("2",)]
            else:
                # the label, the artifact, and A to accept the terms the findings suggest
                kind, chords = "flagged", [("3",), (Keys.SHIFT, "2"), ("a",)]
            if not control:
                flagged_turn += 1
            for chord in chords:
                press(*chord)
            label_wait = _until(enabled)
            press(Keys.CONTROL, Keys.ENTER)
            t0 = time.perf_counter()
            _until(lambda title=title: ready(title) or driver.find_elements(By.XPATH, REFUSED))
            sent = len(chords) + 1
            if driver.find_elements(By.XPATH, REFUSED):
                # nothing suggested to accept, so nothing a replay could fail: stored on a second press
                press(Keys.CONTROL, Keys.ENTER)
                sent += 1
                _until(lambda title=title: ready(title))
            keys[kind].append(sent)
            waits.append(time.perf_counter() - t0 + label_wait)
        overview = [
            _open_overview(driver),
            _open_page(driver, "Queue", "Review queue"),
            _open_overview(driver),
        ]
    finally:
        driver.quit()
    return {"keys": keys, "waits": waits, "overview": (overview[0], overview[2])}


def _open_page(driver: Any, link: str, title: str, last: str | None = None) -> float:
    """Seconds from a click on ``link`` in the page navigation until the page titled ``title`` shows
    ``last`` (a section heading; none: its title) and the app has stopped running."""
    from selenium.webdriver.common.by import By

    t0 = time.perf_counter()
    driver.find_element(
        By.XPATH, f"//a[@data-testid='stTopNavLink'][.//*[normalize-space()='{link}']]"
    ).click()
    wanted = f"//h3[normalize-space()='{last}']" if last else f"//h1[normalize-space()='{title}']"
    _until(
        lambda: (
            driver.find_element(By.TAG_NAME, "h1").text == title
            and driver.find_elements(By.XPATH, wanted)
            and not driver.find_elements(
                By.XPATH, "//*[@data-testid='stStatusWidget']//*[contains(., 'Running')]"
            )
        )
    )
    return time.perf_counter() - t0


def _open_overview(driver: Any) -> float:
    return _open_page(driver, "Overview", "Overview", "Alerts raised")


def _verdicts(url: str) -> int:
    """How many verdicts the scripted reviewer stored (each key press must have landed)."""
    from sqlalchemy import func, select

    from monitor.store.engine import make_engine, session_factory
    from monitor.store.models import Verdict

    engine = make_engine(url)
    try:
        with session_factory(engine)() as session:
            return int(session.scalar(select(func.count()).where(Verdict.reviewer == "bench")) or 0)
    finally:
        engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000, help="checked rewrites to seed (100,000)")
    parser.add_argument("--days", type=int, default=100, help="days they spread over (100)")
    parser.add_argument("--items", type=int, default=40, help="items to clear; fewer if the queue runs out")
    parser.add_argument("--url", help="an EMPTY database to fill (default: a temporary SQLite file)")
    args = parser.parse_args()
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        raise SystemExit("needs Chromium and chromedriver: apt-get install chromium chromium-driver")
    with tempfile.TemporaryDirectory() as tmp:
        url = args.url or f"sqlite:///{Path(tmp) / 'bench.db'}"
        seed_and_say(url, args.records, args.days)
        try:
            with dashboard(url, Path(tmp), "bench", WAIT) as base:
                got = review(base, args.items)
        except RuntimeError as exc:
            raise SystemExit(str(exc)) from None
        stored = _verdicts(url)
    waits = sorted(got["waits"])
    given = sum(len(c) for c in got["keys"].values())
    print(f"{given} items cleared with the keyboard alone; {stored} verdicts stored")
    for kind, counts in got["keys"].items():
        if counts:
            print(f"keys per verdict, {kind:<11}: {max(counts)} (N once to start; {len(counts)} verdicts)")
    if waits:
        p90 = waits[min(len(waits) - 1, int(0.9 * len(waits)))]
        print(
            f"app's waiting per item: median {statistics.median(waits):.2f} s, 90th percentile {p90:.2f} s, "
            f"max {waits[-1]:.2f} s"
        )
    cold, warm = got["overview"]
    print(f"Overview after the verdicts: cold {cold:.2f} s, warm {warm:.2f} s (navigation click to drawn)")
    print(measured_on(url))


if __name__ == "__main__":
    main()
