"""Finding rates per group: one grouping at a time and several from one pass agree, with exact counts."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.orm import Session

from monitor.checks import current_versions
from monitor.severity import SEVERITY_RANK
from monitor.stats.store import finding_rates, finding_rates_by
from tests.factories import ctx_input, ingest_checked, rewrite

INVENTED = (
    "What is the uptime SLA for the Dublin region on the enterprise plan?"  # "enterprise": said by nobody
)


# Four rewrites: two on 4 March (ctx-v1 clean, ctx-v2 invented), two on 5 March (ctx-v1 invented,
# ctx-v1 clean).
FOUR_REWRITES = [
    event
    for conv, day, version, query in (
        ("a", "2024-03-04", "ctx-v1", None),
        ("b", "2024-03-04", "ctx-v2", INVENTED),
        ("c", "2024-03-05", "ctx-v1", INVENTED),
        ("d", "2024-03-05", "ctx-v1", None),
    )
    for event in (
        ctx_input(conv, f"{conv}_2", ts=f"{day}T08:01:31Z"),
        rewrite(
            conv,
            f"{conv}_2",
            ts=f"{day}T08:01:31.420Z",
            prompt_version=version,
            **({"query": query} if query else {}),
        ),
    )
]


def added(rates: list) -> dict[str, tuple[int, int]]:
    return {r.group: (r.flagged, r.checked) for r in rates if r.kind == "added_content_word"}


def test_rates_per_day_and_prompt_version_from_one_pass(session: Session) -> None:
    ingest_checked(session, *FOUR_REWRITES)
    checks = current_versions()
    low = SEVERITY_RANK["low"]
    grouped = finding_rates_by(
        session=session, checks=checks, min_rank=low, groupings=("day", "prompt_version", None)
    )
    assert added(grouped["day"]) == {"2024-03-04": (1, 2), "2024-03-05": (1, 2)}
    assert added(grouped["prompt_version"]) == {"ctx-v1": (1, 3), "ctx-v2": (1, 1)}
    assert added(grouped[None]) == {"all": (2, 4)}
    for by in ("day", "prompt_version", None):
        assert grouped[by] == finding_rates(session=session, checks=checks, min_rank=low, by=by)
    later = finding_rates_by(
        session=session,
        checks=checks,
        min_rank=low,
        groupings=("day", "prompt_version"),
        since=datetime(2024, 3, 5),
    )
    assert added(later["day"]) == {"2024-03-05": (1, 2)}
    assert added(later["prompt_version"]) == {"ctx-v1": (1, 2)}
