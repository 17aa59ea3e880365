"""Every item opens on its evidence (issue 35, parts 1 to 3), in headless Chromium over the shared logs.

A reviewer walks 40 items of a store of three shared logs (long MTRAG transcripts, keyword-expansion
queries with dozens of findings, CAsT) at 1280x720 and at 1440x900, judging each ``ok`` with the keyboard
("1", Ctrl+Enter). On opening each item, with no scroll position touched by the test, the rewrite's
heading, the last user message the rewriter received (the turn it rewrote from), the first finding and
Submit must be in view: inside the window and inside the column that scrolls them. Once, "1, Ctrl+Enter"
is pressed twice 50 ms apart: the second press must not judge the next item, which nobody saw. Once, a
verdict the form refuses (``not_a_query`` with nothing a replay can fail): its error and Submit in view.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks import serve
from benchmarks.serve import dashboard
from tests.e2e.shared_store import LIVE, SUBMIT, WAIT, make_store, reopen, until
from tests.helpers import CHROMEDRIVER, CHROMIUM, count_verdicts, require_browser

ITEMS = 40

require_browser()
from selenium import webdriver  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

REWRITE = f"//h3[contains(normalize-space(), '3. Rewrite')]{LIVE}"
EVIDENCE = "//div[contains(@class, 'st-key-rm-evidence')]"
LAST_USER_TURN = f"{EVIDENCE}//div[contains(@class, 'rm-latest-user')]{LIVE}"
FIRST_FINDING = f"(//div[@class='rm-finding']{LIVE})[1]"
REFUSED = f"//*[@data-testid='stAlert'][contains(normalize-space(), 'Not stored yet')]{LIVE}"
# In view: inside the window and inside every ancestor that clips it (the scrolling columns).
IN_VIEW = """
const el = arguments[0];
const r = el.getBoundingClientRect();
let top = Math.max(r.top, 0), bottom = Math.min(r.bottom, window.innerHeight);
for (let p = el.parentElement; p; p = p.parentElement) {
  if (/(auto|scroll|hidden)/.test(getComputedStyle(p).overflowY)) {
    const q = p.getBoundingClientRect();
    top = Math.max(top, q.top);
    bottom = Math.min(bottom, q.bottom);
  }
}
return bottom - top >= Math.min(r.height, 20) - 1;
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    home = tmp_path_factory.mktemp("first-screen")
    yield make_store(home), home


@pytest.mark.slow
@pytest.mark.parametrize("size", [(1280, 720), (1440, 900)], ids=["1280x720", "1440x900"])
def test_every_item_opens_with_its_evidence_in_view(store: tuple[str, Path], size: tuple[int, int]) -> None:
    url, home = store
    reopen(url)
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", f"--window-size={size[0]},{size[1]}"):
        options.add_argument(flag)
    out_of_view: list[tuple[str, str]] = []
    with dashboard(url, home, f"walker{size[0]}", WAIT) as base:
        driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(str(CHROMEDRIVER)))
        try:
            driver.set_window_size(*size)

            def press(*chord: str) -> None:
                serve.press(driver, *chord)

            def title() -> str:
                return str(driver.find_element(By.TAG_NAME, "h1").text)

            def opened(previous: str | None) -> bool:
                return title() != previous and bool(driver.find_elements(By.XPATH, SUBMIT))

            driver.get(base)
            until(lambda: driver.find_elements(By.XPATH, "//button[.//p[normalize-space()='Review next']]"))
            press("n")
            until(lambda: opened(None))
            for n in range(ITEMS):
                now = title()
                assert "Queue done" not in now, f"the queue ran out after {n} items"
                time.sleep(0.6)  # the item has shown for a moment, as a reviewer's eye needs
                for what, xpath in (
                    ("rewrite", REWRITE),
                    ("last user turn", LAST_USER_TURN),
                    ("first finding", FIRST_FINDING),
                    ("Submit", SUBMIT),
                ):
                    found = driver.find_elements(By.XPATH, xpath)
                    if what in ("last user turn", "first finding") and not found:
                        continue  # a first turn has no earlier user message; a control item no finding
                    assert found, (now, what)
                    if not driver.execute_script(IN_VIEW, found[0]):
                        out_of_view.append((now, what))
                before = count_verdicts(url)
                if n == 3:
                    # a verdict the form refuses (not_a_query on the rewrite, nothing a replay can fail):
                    # its error and Submit in view; the second press stores it
                    press("8")
                    time.sleep(0.3)
                    press(Keys.SHIFT, "2")
                    time.sleep(0.3)
                    press(Keys.CONTROL, Keys.ENTER)
                    until(lambda: driver.find_elements(By.XPATH, REFUSED))
                    time.sleep(0.3)
                    for what, xpath in (("the refusal", REFUSED), ("Submit after a refusal", SUBMIT)):
                        if not driver.execute_script(IN_VIEW, driver.find_element(By.XPATH, xpath)):
                            out_of_view.append((now, what))
                    assert count_verdicts(url) == before
                    press(Keys.CONTROL, Keys.ENTER)
                    until(lambda now=now: opened(now))
                    assert count_verdicts(url) == before + 1
                    continue
                press("1")
                time.sleep(0.15)
                press(Keys.CONTROL, Keys.ENTER)
                if n == 5:
                    # typed ahead: the same keys again 50 ms later, before the next item has shown
                    time.sleep(0.05)
                    press("1")
                    press(Keys.CONTROL, Keys.ENTER)
                until(lambda now=now: opened(now))
                if n == 5:
                    time.sleep(1.0)  # a press that would land on this item has had time to
                    assert count_verdicts(url) == before + 1, "a key typed ahead judged the next item"
        finally:
            driver.quit()
    assert out_of_view == [], out_of_view
