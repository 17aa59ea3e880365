"""Every Queue-page filter holds for the whole run of "Review next" (issue 35, part 3), in headless Chromium.

A store of three shared logs (about 100 queue items: MTRAG sonnet45agg and Mixtral, CAsT 2020; three
models and prompt versions, three days, high, medium and control strata, six finding kinds); the items
with odd ids are made due tomorrow so that "Overdue only" has something to leave out. For each filter the
reviewer sets it on the Queue page as a reviewer would (a selectbox typed into, the day range typed, the
checkbox clicked), presses N, then judges 10 items in a row with the keyboard ("1", Ctrl+Enter). Every one
of the 10 items must match the filter, read back from the store; and each filter must matter: the first 10
items "Review next" hands out without it (most severe first, then oldest) include one it leaves out.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from benchmarks import serve
from benchmarks.serve import dashboard
from monitor.queue.store import claim_next
from monitor.store.models import QueueItem, Verdict
from tests.e2e.shared_store import SUBMIT, WAIT, make_store, reopen, until
from tests.helpers import CHROMEDRIVER, CHROMIUM, require_browser, store_session

RUN = 10

require_browser()
from selenium import webdriver  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    home = tmp_path_factory.mktemp("review-filters")
    yield make_store(home), home


def _items(url: str) -> list[QueueItem]:
    with store_session(url) as session:
        return list(session.scalars(select(QueueItem).order_by(QueueItem.id)))


def _reopen(url: str) -> None:
    """Every item back in the queue with no verdict, the odd ids due tomorrow (not overdue)."""
    reopen(url, due_odd=datetime.now(UTC).replace(tzinfo=None) + timedelta(days=1))


def _judged(url: str) -> list[QueueItem]:
    """The items given a verdict, in verdict order."""
    with store_session(url) as session:
        stmt = select(QueueItem).join(Verdict, Verdict.queue_item_id == QueueItem.id).order_by(Verdict.id)
        return list(session.scalars(stmt))


def _most_common(values: list[str]) -> str:
    return max(sorted(set(values)), key=values.count)


def _filters(
    items: list[QueueItem],
) -> dict[str, tuple[Callable[[object], None], Callable[[QueueItem], bool]]]:
    """Each filter: how the reviewer sets it (given the driver) and what an item it lets through holds.
    The values are the store's commonest ones that leave items out, read here rather than written in."""
    kind = _most_common([k for i in items for k in i.kinds])
    model = _most_common([str(i.model) for i in items if i.stratum != "high"])
    prompt = _most_common([str(i.prompt_version) for i in items if str(i.model) != model])
    day = min(
        {i.day for i in items}, key=lambda d: (-sum(i.day == d and i.stratum != "high" for i in items), d)
    )
    now = datetime.now(UTC).replace(tzinfo=None)
    return {
        f"finding kind {kind}": (lambda d: _choose(d, "Finding kind", kind), lambda i: kind in i.kinds),
        "severity medium": (lambda d: _choose(d, "Severity", "medium"), lambda i: i.stratum == "medium"),
        f"prompt version {prompt}": (
            lambda d: _choose(d, "Prompt version", prompt),
            lambda i: i.prompt_version == prompt,
        ),
        f"model {model}": (lambda d: _choose(d, "Model", model), lambda i: i.model == model),
        f"day {day}": (lambda d: _day(d, day), lambda i: i.day == day),
        "overdue only": (lambda d: _click(d, "Overdue only"), lambda i: i.due_at < now),
    }


def _widget(driver: object, testid: str, label: str) -> object:
    return driver.find_element(  # type: ignore[attr-defined]
        By.XPATH, f"//div[@data-testid='{testid}'][.//label//p[normalize-space()='{label}']]"
    )


def _choose(driver: object, label: str, option: str) -> None:
    """Pick ``option`` of the selectbox ``label`` by typing it, as a reviewer with a long list would."""
    box = _widget(driver, "stSelectbox", label).find_element(By.TAG_NAME, "input")  # type: ignore[attr-defined]
    box.click()
    box.send_keys(option)
    until(lambda: driver.find_elements(By.XPATH, f"//*[@role='option'][normalize-space()='{option}']"))  # type: ignore[attr-defined]
    box.send_keys(Keys.ENTER)


def _day(driver: object, day: date) -> None:
    """The one-day range ``day`` typed into the date input's start and end fields (digits fill the year,
    month and day segments in turn), then a click outside it, which sends the range."""
    for end in ("start", "end"):
        segment = driver.find_element(  # type: ignore[attr-defined]
            By.XPATH,
            f"//div[@data-testid='stDateInput']//div[@data-range-field='{end}']//span[@data-type='year']",
        )
        segment.click()
        serve.type_text(driver, f"{day:%Y%m%d}")
    driver.find_element(By.TAG_NAME, "h1").click()  # type: ignore[attr-defined]  # the range is sent on leaving


def _click(driver: object, label: str) -> None:
    _widget(driver, "stCheckbox", label).find_element(By.TAG_NAME, "label").click()  # type: ignore[attr-defined]


def _open_items(driver: object) -> str:
    metric = _widget(driver, "stMetric", "Open items")
    return str(metric.find_element(By.XPATH, ".//div[@data-testid='stMetricValue']").text)  # type: ignore[attr-defined]


def _unfiltered_run(url: str) -> list[QueueItem]:
    """The first :data:`RUN` items "Review next" hands out with no filter (claimed, then finished, in a
    row), before the store is reopened."""
    out: list[QueueItem] = []
    with store_session(url) as session:
        for _ in range(RUN):
            row = claim_next(
                session=session, reviewer="probe", now=datetime.now(UTC), lease=timedelta(minutes=5)
            )
            assert row is not None
            item = session.get_one(QueueItem, row.id)
            item.state = "done"
            session.commit()
            out.append(item)
    _reopen(url)
    return out


def _review_within(
    driver: object, base: str, set_filter: Callable[[object], None], total: int, shown: int
) -> None:
    """On the Queue page at ``base`` (``total`` open items), set the filter (``shown`` items left), press
    N and judge :data:`RUN` items ``ok`` by key, each once it has shown."""
    d: Any = driver
    d.get(base)
    until(lambda: _open_items(d) == str(total))
    set_filter(d)
    try:
        until(lambda: _open_items(d) == str(shown), timeout=20)
    except AssertionError:
        raise AssertionError(f"the Queue page lists {_open_items(d)} items, not {shown}") from None
    time.sleep(0.3)
    d.find_element(By.TAG_NAME, "h1").click()  # out of the filter's field: N is not typed into it
    serve.press(d, "n")
    title = "Review queue"
    for _ in range(RUN):
        until(
            lambda t=title: (
                d.find_element(By.TAG_NAME, "h1").text != t and bool(d.find_elements(By.XPATH, SUBMIT))
            )
        )
        title = d.find_element(By.TAG_NAME, "h1").text
        assert "Queue done" not in title, title
        time.sleep(0.4)  # keys within 300 ms of a new item are dropped as typed ahead
        serve.press(d, "1")
        time.sleep(0.15)
        serve.press(d, Keys.CONTROL, Keys.ENTER)
    until(lambda t=title: d.find_element(By.TAG_NAME, "h1").text != t)


@pytest.mark.slow
def test_every_filter_holds_over_ten_consecutive_items(store: tuple[str, Path]) -> None:
    url, home = store
    _reopen(url)
    items = _items(url)
    unfiltered = _unfiltered_run(url)
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=1440,900"):
        options.add_argument(flag)
    broken: dict[str, list[str]] = {}
    for name, (set_filter, holds) in _filters(items).items():
        matching = [i for i in items if holds(i)]
        assert len(matching) >= RUN, (name, len(matching))
        # the filter matters: without it, "Review next" hands out items it leaves out
        assert not all(holds(i) for i in unfiltered), name
        _reopen(url)
        with dashboard(url, home, "filterer", WAIT) as base:
            driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(str(CHROMEDRIVER)))
            try:
                _review_within(driver, base, set_filter, len(items), len(matching))
            finally:
                driver.quit()
        until(lambda: len(_judged(url)) == RUN)
        judged = _judged(url)
        assert len(judged) == RUN, name
        broken[name] = [i.request_id for i in judged if not holds(i)]
    assert broken == {name: [] for name in broken}
