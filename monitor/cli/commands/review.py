"""CLI commands of the review area: ``verdict``, ``review``, ``export`` and ``replay``.

``verdict`` and ``review`` call the same service functions as the dashboard
(``monitor.review.store.record_verdict`` / ``verdict_for_request``), so validation and claim rules
are the same everywhere. ``replay`` needs no database: it reads an exported eval set.
"""

from __future__ import annotations

import asyncio
import getpass
import json
import sys
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from monitor.cli.app import (
    State,
    current_checks,
    err,
    kind_choice,
    lazy_choice,
    open_engine,
    out,
    require_extra,
)
from monitor.errors import ReplayError
from monitor.text import counted, split_terms
from monitor.verdicts import Artifact, Label

LABEL_KEYS = {
    "o": "ok",
    "a": "false_alarm_synonym",
    "f": "fabricated_constraint",
    "d": "dropped_constraint",
    "w": "wrong_antecedent",
    "u": "unresolved_reference",
    "c": "over_carried",
    "n": "not_a_query",
    "t": "window_truncated",
    "m": "missing_assistant_turns",
    "x": "foreign_session",
    "r": "ranking",
    "g": "generation",
}
"""One key per label in ``review`` (``e`` note, ``v`` full text, ``b`` back, ``s`` skip, ``q`` quit:
:func:`review_loop`)."""


def _session(state: State) -> Any:
    """A session on the configured store; raises ``StorageError`` when it is not migrated. Its SQLite
    transactions take the write lock at BEGIN, so a verdict waits for a concurrent `run` to commit
    instead of failing (see ``monitor.store.engine.make_engine``)."""
    from monitor.store.engine import session_factory

    return session_factory(open_engine(state, writes=True))()


def _reviewer(state: State, given: str | None) -> str:
    return given or state.settings.reviewer_name or getpass.getuser()


def _lease(state: State) -> timedelta:
    return timedelta(minutes=state.settings.claim_lease_minutes)


def _say(renderable: Any) -> None:
    """Print without Rich markup: ids, labels and queries may hold brackets (``[over_carried]``).

    A string also has its control characters escaped (``monitor.text.visible``): request ids and
    replayed queries come from logs and a model, and an escape sequence in them must not reach the
    terminal. Renderables from ``monitor.cli.render`` are already made safe there.
    """
    from monitor.text import visible

    safe = visible(renderable) if isinstance(renderable, str) else renderable
    out.print(safe, markup=False, highlight=False)


# -- verdict -------------------------------------------------------------------------------------
def verdict_cmd(
    ctx: typer.Context,
    request_id: Annotated[str, typer.Argument(help="The rewrite's request id.")],
    label: Annotated[Label, typer.Option("--label", help="The verdict label.")],
    artifact: Annotated[
        Artifact | None,
        typer.Option("--artifact", help="First wrong artifact; default: the one the label implies."),
    ] = None,
    query: Annotated[str | None, typer.Option("--query", help="The corrected standalone query.")] = None,
    must_include: Annotated[
        list[str] | None,
        typer.Option("--must-include", metavar="TERM", help="A term a right rewrite has (repeatable)."),
    ] = None,
    must_not_include: Annotated[
        list[str] | None,
        typer.Option("--must-not-include", metavar="TERM", help="A term it must not have (repeatable)."),
    ] = None,
    note: Annotated[str | None, typer.Option("--note", help="Free text.")] = None,
    reviewer: Annotated[
        str | None, typer.Option("--reviewer", help="Default: reviewer_name, else the login name.")
    ] = None,
    conv: Annotated[
        str | None,
        typer.Option("--conv", help="The conversation, when the request id was logged in several."),
    ] = None,
    adjudicate: Annotated[
        bool,
        typer.Option(
            "--adjudicate",
            help="Settle a disagreement between an item's reviewers (stats --agreement lists them): "
            "this verdict makes the regression case.",
        ),
    ] = False,
) -> None:
    """Record a verdict on one request (queued or not: a request from a support ticket is added to
    the queue and verdicted at once), through the dashboard's service function. `ok` and
    `false_alarm_synonym` go with artifact `none`, every other label with another artifact; a `--query`
    equal to the logged query is stored as none (no correction). On an item two reviewers judged,
    `--adjudicate` records the deciding verdict.

    Example: rewrite-monitor verdict cast2020-90_3 --label fabricated_constraint --must-not-include
    Boeing --query "How does the biggest commercial plane's fuel consumption compare to its competitors?"
    """
    from monitor.review.store import verdict_for_request
    from monitor.verdicts import DEFAULT_ARTIFACT, FINE_LABELS

    if artifact is not None and (label.value in FINE_LABELS) != (artifact.value == "none"):
        # a usage error like any other wrong choice (exit 2), before the store is opened
        raise typer.BadParameter(
            f"label {label.value!r} does not go with artifact {artifact.value!r} "
            f"({'none' if label.value in FINE_LABELS else 'anything but none'} does)",
            param_hint="--artifact",
        )
    state: State = ctx.obj
    with _session(state) as session:
        vid = verdict_for_request(
            session=session,
            request_id=request_id,
            reviewer=_reviewer(state, reviewer),
            label=label.value,
            artifact=artifact.value if artifact is not None else DEFAULT_ARTIFACT[label],
            now=datetime.now(UTC),
            corrected_query=query,
            must_include=must_include or (),
            must_not_include=must_not_include or (),
            note=note,
            lease=_lease(state),
            conv_id=conv,
            adjudication=adjudicate,
        )
    what = "adjudication" if adjudicate else "verdict"
    _say(f"{what} {vid} recorded on {request_id}: {label.value}")


# -- review --------------------------------------------------------------------------------------
def review_loop(
    *,
    session: Any,
    reviewer: str,
    lease: timedelta,
    kind: str | None,
    read_key: Callable[[], str],
    read_line: Callable[[str, str], str],
    show: Callable[[Any], None],
    now: Callable[[], datetime],
) -> dict[str, int]:
    """Walk the pending queue: claim the next item, show it (compact), read a one-key label, record, next.

    Keys besides the labels (:data:`LABEL_KEYS`): ``e`` a note for this verdict, ``v`` the full text of
    the item, ``b`` back to the previous item to change its verdict (a new verdict version; giving it
    back without one keeps the earlier verdict), ``s`` skip, ``q`` (or end of input) release and stop.
    Each item is headed "item i of N" (N: what the reviewer has done this session plus what the queue
    can still hand them). Returns counts ``{verdicts, skipped}``. The reader functions are parameters so
    tests drive the loop with plain strings.
    """
    from monitor.checks.store import list_findings
    from monitor.cli.render import render_record
    from monitor.ingest.store.records import get_record_view
    from monitor.queue.store import claim_next, keep_verdict, release, reopen, reviewable_count, skip
    from monitor.review.evidence import prefill
    from monitor.review.store import latest_verdict, record_verdict
    from monitor.verdicts import DEFAULT_ARTIFACT, FINE_LABELS

    legend = (
        "  ".join(f"{k} {v}" for k, v in LABEL_KEYS.items())
        + "  |  e note  v full text  b back (change the last verdict)  s skip  q quit"
    )
    done = {"verdicts": 0, "skipped": 0}
    history: list[int] = []  # items given a verdict in this session, newest last (``b`` pops one)
    back: Any = None  # the item ``b`` reopened, shown next
    while True:
        again = back is not None
        row = back or claim_next(session=session, reviewer=reviewer, now=now(), lease=lease, kind=kind)
        back = None
        if row is None:
            show(
                f"the queue is empty: nothing left for {reviewer} ({done['verdicts']} verdicts this session)"
            )
            return done
        position = len(history) + done["skipped"] + 1
        total = position + reviewable_count(session=session, reviewer=reviewer, now=now(), kind=kind)
        view = get_record_view(session=session, request_id=row.request_id, conv_id=row.conv_id)
        findings = list_findings(
            session=session, checks=current_checks(), request_id=row.request_id, conv_id=row.conv_id
        )

        redo = ""
        if again:
            earlier = latest_verdict(session=session, item_id=row.id, reviewer=reviewer)
            said = f"your verdict: {earlier.label}; " if earlier is not None else ""
            redo = f"  (back: {said}a new verdict replaces yours)"
        heading = (
            f"item {position} of {total} · {row.request_id} · {row.stratum} · "
            f"due {row.due_at:%Y-%m-%d %H:%M}{redo}"
        )

        def draw(compact: bool, heading: str = heading, view: Any = view, findings: Any = findings) -> None:
            show(heading)
            if view is not None:
                for block in render_record(view, findings, compact=compact):
                    show(block)
            show(legend)

        draw(compact=True)
        # End the read transaction before waiting for the reviewer: on SQLite it holds the write lock
        # (BEGIN IMMEDIATE), and ingest, run, the worker and verdict would wait on an idle terminal.
        session.commit()

        def give_back(row: Any = row, again: bool = again) -> None:
            # an item reopened with ``b`` keeps its earlier verdict; any other goes back to the queue
            if again:
                keep_verdict(session=session, item_id=row.id, reviewer=reviewer, now=now())
            else:
                release(session=session, item_id=row.id, reviewer=reviewer, now=now())

        note: str | None = None
        try:
            key = ""
            while key not in LABEL_KEYS:
                key = (read_key() or "q").lower()
                if key == "e":
                    note = read_line("note", note or "").strip() or None
                elif key == "v":
                    draw(compact=False)
                elif key == "b" and not history:
                    show("nothing to go back to yet in this session")
                elif key in ("b", "s", "q"):
                    break
        except BaseException:
            # Ctrl-C or a broken input must not leave the item locked for the whole lease.
            give_back()
            raise
        if key == "q":
            give_back()
            return done
        if key == "b":
            give_back()
            back = reopen(session=session, item_id=history.pop(), reviewer=reviewer, now=now(), lease=lease)
            continue
        if key == "s":
            if again:
                give_back()  # the reopened item keeps its verdict: nothing was skipped
            else:
                skip(session=session, item_id=row.id, reviewer=reviewer, now=now())
                done["skipped"] += 1
            continue
        label = LABEL_KEYS[key]
        corrected, must, must_not = None, [], []
        if label not in FINE_LABELS:
            # The same terms the dashboard's form starts from (monitor.review.evidence), for this label.
            pre = prefill(label, findings)
            try:
                corrected = read_line("corrected query (Enter: none)", "").strip() or None
                must = split_terms(read_line("must include, comma-separated", ", ".join(pre.must_include)))
                must_not = split_terms(
                    read_line("must not include, comma-separated", ", ".join(pre.must_not_include))
                )
            except BaseException:
                give_back()
                raise
        vid = record_verdict(
            session=session,
            item_id=row.id,
            reviewer=reviewer,
            label=label,
            artifact=DEFAULT_ARTIFACT[label],
            now=now(),
            corrected_query=corrected,
            must_include=must,
            must_not_include=must_not,
            note=note,
            lease=lease,
            again=again,
        )
        history.append(row.id)
        done["verdicts"] += 1
        show(f"verdict {vid}: {label}" + (" (replaces your earlier verdict)" if again else ""))


def _read_key() -> str:
    """One key: from the terminal, or the first character of the next line of piped input (end: quit)."""
    if sys.stdin.isatty():
        return typer.getchar()
    line = sys.stdin.readline()
    return line.strip()[:1] if line else "q"


def _read_line(prompt: str, default: str) -> str:
    """A line: prompted on a terminal; from piped input otherwise (an empty line keeps the default)."""
    if sys.stdin.isatty():
        return str(typer.prompt(prompt, default=default, show_default=bool(default)))
    line = sys.stdin.readline()
    return line.rstrip("\n") or default if line else default


def review_cmd(
    ctx: typer.Context,
    kind: Annotated[
        str | None,
        typer.Option("--kind", parser=kind_choice, metavar="KIND", help="Only items with this finding kind."),
    ] = None,
    reviewer: Annotated[
        str | None, typer.Option("--reviewer", help="Default: reviewer_name, else the login name.")
    ] = None,
) -> None:
    """Walk the pending review queue in the terminal, "item 3 of 40" at a time: the four artifacts
    (older answers collapsed to their start and the lines around the flagged words; v shows the full
    text), then one key for the label (o ok, f fabricated_constraint, d dropped_constraint, ...); a
    wrong rewrite also asks for the corrected query and the terms, prefilled from the findings. e adds a
    note, b goes back to change the last verdict (a new version; the old one is kept), s skips, q quits.
    Piped input works too: one key per line, then one line per answer (an empty line keeps the
    prefilled value).

    Example: rewrite-monitor review --kind added_content_word
    """

    state: State = ctx.obj
    with _session(state) as session:
        done = review_loop(
            session=session,
            reviewer=_reviewer(state, reviewer),
            lease=_lease(state),
            kind=kind,
            read_key=_read_key,
            read_line=_read_line,
            show=_say,
            now=lambda: datetime.now(UTC),
        )
    err.print(f"{done['verdicts']} verdicts, {done['skipped']} skipped")


# -- export --------------------------------------------------------------------------------------
def _formats() -> tuple[str, ...]:
    from monitor.cases.export import FORMATS

    return FORMATS


EXPORT_SUFFIXES = {
    ".csv": "csv",
    ".parquet": "parquet",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
}
"""The format an ``--out`` file's suffix names, when ``--format`` is not given."""


def _export_format(out_path: Path, fmt: str | None) -> str:
    """``--format`` when given, else the format ``out_path``'s suffix names (:data:`EXPORT_SUFFIXES`),
    else jsonl (standard output, other suffixes): ``--out cases.csv`` alone writes CSV."""
    if fmt is not None:
        return fmt
    return EXPORT_SUFFIXES.get(out_path.suffix.lower(), "jsonl") if str(out_path) != "-" else "jsonl"


def export_cmd(
    ctx: typer.Context,
    out_path: Annotated[
        Path, typer.Option("--out", help="File to write; - for standard output (jsonl, csv).")
    ],
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            parser=lazy_choice(_formats),
            metavar="FORMAT",
            help="jsonl, csv or parquet; default: the --out file's suffix (.csv, .parquet), else jsonl.",
        ),
    ] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="Only verdicts on or after this day (YYYY-MM-DD, UTC).")
    ] = None,
    label: Annotated[Label | None, typer.Option("--label", help="Only cases with this label.")] = None,
    no_redact: Annotated[
        bool, typer.Option("--no-redact", help="Keep personal details (emails, phones, names, ...).")
    ] = False,
) -> None:
    """Write the regression cases (the eval set) as JSON Lines (schemas/regression_case.schema.json),
    CSV or Parquet, personal details redacted unless --no-redact.

    Example: rewrite-monitor export --out evalset.jsonl --since 2024-03-01 --label fabricated_constraint
    """
    from monitor.cases.export import export_cases
    from monitor.privacy import name_finder

    fmt = _export_format(out_path, fmt)
    if str(out_path) == "-" and fmt == "parquet":
        raise typer.BadParameter(
            "parquet is binary: write it to a file, not to standard output", param_hint="--out"
        )
    since_dt = None
    if since is not None:
        try:
            since_dt = datetime.combine(date.fromisoformat(since), time.min)
        except ValueError:
            raise typer.BadParameter("must be a day, YYYY-MM-DD", param_hint="--since") from None
    state: State = ctx.obj
    finder = None if no_redact else name_finder(state.settings.spacy_model)
    with _session(state) as session:
        summary = export_cases(
            session=session,
            path=out_path,
            fmt=fmt,
            since=since_dt,
            label=None if label is None else label.value,
            redact=not no_redact,
            finder=finder,
            now=datetime.now(UTC),
        )
    labels = ", ".join(f"{k} {v}" for k, v in summary.by_label.items()) or "none"
    redacted = "redacted" if summary.redacted else "NOT redacted (--no-redact)"
    where = "standard output" if str(out_path) == "-" else summary.path
    line = f"exported {counted(summary.cases, 'case')} to {where} ({fmt}, {redacted}); by label: {labels}"
    if str(out_path) == "-":
        from monitor.text import visible

        err.print(visible(line), markup=False, highlight=False)  # the cases are on stdout
    else:
        _say(line)


# -- replay --------------------------------------------------------------------------------------
def replay_cmd(
    ctx: typer.Context,
    cases_path: Annotated[Path, typer.Argument(help="An eval set written by `export` (JSON Lines).")],
    model: Annotated[str | None, typer.Option("--model", help="Default: the replay_model setting.")] = None,
    prompt: Annotated[
        Path | None, typer.Option("--prompt", help="System prompt file; default: the bundled contextualizer.")
    ] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="Cases in flight at once.")] = 4,
    junit: Annotated[Path | None, typer.Option("--junit", help="Write JUnit XML here (for CI).")] = None,
    compare_path: Annotated[
        Path | None,
        typer.Option("--compare", help="A replay's --out file, or an eval set (its logged rewrites)."),
    ] = None,
    results_path: Annotated[
        Path | None, typer.Option("--out", help="Write per-case results (JSON Lines) for a later --compare.")
    ] = None,
    prices: Annotated[
        Path | None, typer.Option("--prices", help="Price table; default: the replay_prices_file setting.")
    ] = None,
    allow_empty: Annotated[
        bool,
        typer.Option("--allow-empty", help="Exit 0 on an eval set (or --compare file) without a case."),
    ] = False,
) -> None:
    """Replay an eval set through the rewriter (anthropic SDK) and judge each new rewrite: pass/fail per
    label, cost, JUnit XML; exit 1 when a case fails (with --compare: when a case went pass -> fail).
    An eval set without a case is an error (exit 5: an empty export must not pass a CI gate) unless
    --allow-empty.

    Example: rewrite-monitor replay evalset.jsonl --model claude-haiku-4-5 --junit replay.xml
    --compare baseline.jsonl
    """
    require_extra("anthropic", "replay", "replay")
    from monitor.replay import client as rp_client
    from monitor.replay import judge as rp_judge
    from monitor.replay import prices as rp_prices
    from monitor.replay import report as rp_report

    state: State = ctx.obj
    settings = state.settings
    # Before anything else: without a key there is nothing to replay against.
    if settings.anthropic_api_key is None or not settings.anthropic_api_key.get_secret_value():
        raise ReplayError("ANTHROPIC_API_KEY is not set: replay calls the Anthropic API (export the key)")
    from monitor.checks.nlp import use_model
    from monitor.checks.rules import load_rules

    use_model(settings.spacy_model)
    rules = load_rules(settings.rules_dir)
    replay = settings.replay
    price_table = rp_prices.load_prices(prices or replay.prices_file)
    cases = rp_judge.load_cases(cases_path, allow_empty=allow_empty)
    system_path = prompt or rp_client.PROMPT_PATH
    system = rp_judge.read_text(system_path, "prompt ")
    before = (
        rp_judge.load_results(compare_path, rules, allow_empty=allow_empty)
        if compare_path is not None
        else None
    )
    model_name = model or replay.model

    async def run() -> list[rp_judge.CaseResult]:
        client = rp_client.make_client(
            api_key=settings.anthropic_api_key.get_secret_value(),  # type: ignore[union-attr]
            max_retries=replay.max_retries,
        )
        try:
            return await rp_client.replay_cases(
                cases,
                client=client,
                model=model_name,
                system=system,
                max_tokens=replay.max_tokens,
                timeout=replay.timeout_seconds,
                concurrency=concurrency,
                rules=rules,
            )
        finally:
            await client.close()

    results = asyncio.run(run())
    table = Table(
        "label",
        "cases",
        "pass",
        "fail",
        "error",
        title=f"replay of {counted(len(cases), 'case')} on {model_name}",
    )
    for lab, row in rp_report.by_label(results).items():
        table.add_row(lab, str(row["cases"]), str(row["pass"]), str(row["fail"]), str(row["error"]))
    out.print(table)
    for r in results:
        if r.status != "pass":
            _say(f"{r.status.upper()} {r.id[:12]} {r.source_request_id} [{r.label}]: {'; '.join(r.failures)}")
    cost = rp_prices.total_cost(results, price_table)
    dollars = (
        f"${cost.dollars:.4f}"
        if cost.dollars is not None
        else f"unknown (no price for {', '.join(cost.unpriced)})"
    )
    _say(
        f"cost: {cost.input_tokens:,} input + {cost.output_tokens:,} output tokens = {dollars}"
        f" (prices: {price_table.source})"
    )
    if junit is not None:
        rp_report.junit_xml(results, junit)
    if results_path is not None:
        with results_path.open("w", encoding="utf-8") as fh:
            for r in results:
                fh.write(json.dumps(r.as_dict(), ensure_ascii=False) + "\n")
    failed = any(r.status != "pass" for r in results)
    if before is not None:
        changes, same = rp_report.compare(before, results)
        ct = Table("case", "request", "label", "before", "after", title=f"compared with {compare_path}")
        for c in changes:
            ct.add_row(
                *(Text(v) for v in (c.id[:12], c.source_request_id, c.label, c.before or "-", c.after or "-"))
            )
        out.print(ct)
        regressions = sum(c.regression for c in changes)
        fixed = sum(c.before in ("fail", "error") and c.after == "pass" for c in changes)
        other = len(changes) - regressions - fixed
        _say(f"pass -> fail: {regressions}; fail -> pass: {fixed}; unchanged: {same}; other: {other}")
        failed = regressions > 0
    if failed:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Register this module's commands on the root ``app`` (``monitor.cli.main`` calls it)."""
    app.command("verdict")(verdict_cmd)
    app.command("review")(review_cmd)
    app.command("export")(export_cmd)
    app.command("replay")(replay_cmd)
