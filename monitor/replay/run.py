"""One replay of an eval set, as ``rewrite-monitor replay`` runs it: the inputs loaded and checked, every
case replayed through the rewriter and judged, the run priced and compared with an earlier one, and the
per-case results written for a later comparison.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from monitor.errors import ReplayError

# Modules, not their functions: the client is looked up at call time (tests swap ``make_client``).
from monitor.replay import client as rp_client
from monitor.replay import judge as rp_judge
from monitor.replay import prices as rp_prices
from monitor.replay import report as rp_report

if TYPE_CHECKING:
    from monitor.checks.rules import Rules
    from monitor.setting_groups import ReplaySettings
    from monitor.settings import Settings


@dataclass(frozen=True, slots=True)
class Comparison:
    """This run against an earlier one (``--compare``): the cases whose status changed and how many kept
    theirs (``monitor.replay.report.compare``)."""

    changes: list[rp_report.Change]
    same: int

    @property
    def regressions(self) -> int:
        """Cases that went from pass to fail (or error)."""
        return sum(c.regression for c in self.changes)

    @property
    def fixed(self) -> int:
        """Cases that went from fail (or error) to pass."""
        return sum(c.before in ("fail", "error") and c.after == "pass" for c in self.changes)

    @property
    def other(self) -> int:
        """Every other change (a case only on one side, fail to error, ...)."""
        return len(self.changes) - self.regressions - self.fixed


@dataclass(frozen=True, slots=True)
class ReplayRun:
    """What one replay did: the ``model`` replayed on, the ``cases`` and their ``results`` in order, the
    ``cost`` by the ``prices`` table, and the ``comparison`` when one was asked for."""

    model: str
    cases: list[dict[str, Any]]
    results: list[rp_judge.CaseResult]
    prices: rp_prices.PriceTable
    cost: rp_prices.Cost
    comparison: Comparison | None

    @property
    def failed(self) -> bool:
        """Whether the run fails CI: a case that went from pass to fail when compared, else any case
        that did not pass."""
        if self.comparison is not None:
            return self.comparison.regressions > 0
        return any(r.status != "pass" for r in self.results)


def replay(
    settings: Settings,
    cases_path: Path,
    *,
    model: str | None = None,
    prompt: Path | None = None,
    concurrency: int = 4,
    compare_path: Path | None = None,
    prices: Path | None = None,
    allow_empty: bool = False,
) -> ReplayRun:
    """Replay the eval set at ``cases_path`` through the rewriter (``model``, else the replay_model
    setting; system prompt ``prompt``, else the bundled contextualizer) and judge each new rewrite;
    ``compare_path`` (a replay's results or an eval set) is what the run is compared with.

    Every input is read before the first call. Raises ``ReplayError`` when no API key is set (checked
    before anything else), and for an unreadable or malformed eval set, prompt, price table or compared
    file (an empty one too, unless ``allow_empty``).
    """
    key = settings.anthropic_api_key
    # Before anything else: without a key there is nothing to replay against.
    if key is None or not key.get_secret_value():
        raise ReplayError("ANTHROPIC_API_KEY is not set: replay calls the Anthropic API (export the key)")
    from monitor.checks.nlp import use_model
    from monitor.checks.rules import load_rules

    use_model(settings.spacy_model)
    rules = load_rules(settings.rules_dir)
    price_table = rp_prices.load_prices(prices or settings.replay.prices_file)
    cases = rp_judge.load_cases(cases_path, allow_empty=allow_empty)
    system = rp_judge.read_text(prompt or rp_client.PROMPT_PATH, "prompt ")
    before = (
        rp_judge.load_results(compare_path, rules, allow_empty=allow_empty)
        if compare_path is not None
        else None
    )
    model_name = model or settings.replay.model
    results = asyncio.run(
        _replay_cases(
            cases,
            api_key=key.get_secret_value(),
            replay=settings.replay,
            model=model_name,
            system=system,
            concurrency=concurrency,
            rules=rules,
        )
    )
    comparison = Comparison(*rp_report.compare(before, results)) if before is not None else None
    cost = rp_prices.total_cost(results, price_table)
    return ReplayRun(model_name, cases, results, price_table, cost, comparison)


async def _replay_cases(
    cases: Sequence[dict[str, Any]],
    *,
    api_key: str,
    replay: ReplaySettings,
    model: str,
    system: str,
    concurrency: int,
    rules: Rules,
) -> list[rp_judge.CaseResult]:
    client = rp_client.make_client(api_key=api_key, max_retries=replay.max_retries)
    try:
        return await rp_client.replay_cases(
            cases,
            client=client,
            model=model,
            system=system,
            max_tokens=replay.max_tokens,
            timeout=replay.timeout_seconds,
            concurrency=concurrency,
            rules=rules,
        )
    finally:
        await client.close()


def write_results(results: Sequence[rp_judge.CaseResult], path: Path) -> None:
    """Per-case results as JSON Lines (``replay --out``), the file a later ``--compare`` reads."""
    with path.open("w", encoding="utf-8") as fh:
        for r in results:
            fh.write(json.dumps(r.as_dict(), ensure_ascii=False) + "\n")
