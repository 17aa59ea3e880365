"""CLI commands of the review area: ``verdict``, ``review``, ``export`` and ``replay``.

``verdict`` and ``review`` call the same service functions as the dashboard
(``monitor.review.store.record_verdict`` / ``verdict_for_request``), so validation and claim rules
are the same everywhere. ``replay`` needs no database: it reads an exported eval set.
"""

from __future__ import annotations

import getpass
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

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
from monitor.text import counted, split_terms
from monitor.verdicts import Artifact, Label

if TYPE_CHECKING:
    from monitor.cases.export import ExportSummary
    from monitor.replay.run import Comparison, ReplayRun
    from monitor.review.evidence import Suggestion, TermChoice
    from monitor.review.walk import QueueWalk, WalkItem
    from monitor.stats.store import HeldCalibration

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
Reviewer = Annotated[
    str | None, typer.Option("--reviewer", help="Default: reviewer_name, else the login name.")
]
VerdictArtifact = Annotated[
    Artifact | None,
    typer.Option("--artifact", help="First wrong artifact; default: the one the label implies."),
]
CorrectedQuery = Annotated[str | None, typer.Option("--query", help="The corrected standalone query.")]
MustInclude = Annotated[
    list[str] | None,
    typer.Option("--must-include", metavar="TERM", help="A term a right rewrite has (repeatable)."),
]
MustNotInclude = Annotated[
    list[str] | None,
    typer.Option("--must-not-include", metavar="TERM", help="A term it must not have (repeatable)."),
]
Conversation = Annotated[
    str | None,
    typer.Option("--conv", help="The conversation, when the request id was logged in several."),
]
Adjudicate = Annotated[
    bool,
    typer.Option(
        "--adjudicate",
        help="Settle a disagreement between an item's reviewers (stats --agreement lists them): "
        "this verdict makes the regression case.",
    ),
]


def verdict_cmd(
    ctx: typer.Context,
    request_id: Annotated[str, typer.Argument(help="The rewrite's request id.")],
    label: Annotated[Label, typer.Option("--label", help="The verdict label.")],
    artifact: VerdictArtifact = None,
    query: CorrectedQuery = None,
    must_include: MustInclude = None,
    must_not_include: MustNotInclude = None,
    note: Annotated[str | None, typer.Option("--note", help="Free text.")] = None,
    reviewer: Reviewer = None,
    conv: Conversation = None,
    adjudicate: Adjudicate = False,
) -> None:
    """Record a verdict on one request (queued or not: a request from a support ticket is added to
    the queue and verdicted at once), through the dashboard's service function. `ok` and
    `false_alarm_synonym` go with artifact `none`, every other label with another artifact; a `--query`
    equal to the logged query is stored as none (no correction). On an item two reviewers judged,
    `--adjudicate` records the deciding verdict.

    Example: rewrite-monitor verdict cast2020-90_3 --label fabricated_constraint --must-not-include
    Boeing --query "How does the biggest commercial plane's fuel consumption compare to its competitors?"
    """
    from monitor.cases.store import no_case_why
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
        why = no_case_why(session=session, verdict_id=vid)
    what = "adjudication" if adjudicate else "verdict"
    uncased = f" (no regression case: {why})" if why else ""
    _say(f"{what} {vid} recorded on {request_id}: {label.value}{uncased}")


# -- review --------------------------------------------------------------------------------------
_LEGEND = (
    "  ".join(f"{k} {v}" for k, v in LABEL_KEYS.items())
    + "  |  e note  v full text  b back (change the last verdict)  s skip  q quit"
)
"""The keys, shown under each item."""


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
    piped: bool = False,
) -> dict[str, int]:
    """Walk the pending queue: claim the next item, show it (compact), read a one-key label, record, next.

    Keys besides the labels (:data:`LABEL_KEYS`): ``e`` a note for this verdict, ``v`` the full text of
    the item, ``b`` back to the previous item to change its verdict (a new verdict version; giving it
    back without one keeps the earlier verdict), ``s`` skip, ``q`` (or end of input) release and stop.
    Each item is headed "item i of N" (N: what the reviewer has done this session plus what the queue
    can still hand them). Returns counts ``{verdicts, skipped}``. The readers are parameters so tests
    drive the loop with plain strings; ``piped``: they read a script, not a terminal (:func:`_ask_terms`).
    """
    from monitor.cases.store import no_case_why
    from monitor.review.evidence import TermChoice
    from monitor.review.walk import QueueWalk
    from monitor.stats.store import HeldCalibration
    from monitor.verdicts import FINE_LABELS

    walk = QueueWalk(
        session=session, reviewer=reviewer, lease=lease, kind=kind, checks=current_checks(), now=now
    )
    held = HeldCalibration(session=session, checks=walk.checks)
    while True:
        item = walk.next_item()
        if item is None:
            done = walk.done["verdicts"]
            show(f"the queue is empty: nothing left for {reviewer} ({done} verdicts this session)")
            return walk.done
        draw = _drawer(item, show, held)
        draw(True)
        # End the read transaction before waiting for the reviewer: on SQLite it holds the write lock
        # (BEGIN IMMEDIATE), and ingest, run, the worker and verdict would wait on an idle terminal.
        session.commit()
        with _given_back_on_error(walk, item):
            key, note = _read_choice(walk, read_key, read_line, draw, show)
        if key == "q":
            walk.give_back(item)
            return walk.done
        if key in ("b", "s"):
            (walk.go_back if key == "b" else walk.skip)(item)
            continue
        label = LABEL_KEYS[key]
        corrected, terms = None, TermChoice()
        with _given_back_on_error(walk, item):
            if label not in FINE_LABELS:
                corrected, terms = _ask_terms(label, item, read_line, show, piped)
            vid = walk.record(item, label, note=note, corrected=corrected, terms=terms)
        why = no_case_why(session=session, verdict_id=vid)
        again = " (replaces your earlier verdict)" if item.again else ""
        show(f"verdict {vid}: {label}{again}" + (f" (no regression case: {why})" if why else ""))


def _ask_terms(
    label: str,
    item: WalkItem,
    read_line: Callable[[str, str], str],
    show: Callable[[Any], None],
    piped: bool = False,
) -> tuple[str | None, TermChoice]:
    """The corrected query and terms of an error verdict. The terms the findings suggest
    (``monitor.review.evidence``, what the dashboard's form offers) are listed by number and stored only
    when accepted: ``a`` all, numbers those, Enter none; then the reviewer's own terms.

    What a replay could not fail (``monitor.verdicts.nothing_to_assert``, for the label's default
    artifact) is said, as the dashboard refuses a submit once: before the questions when even every
    suggestion would leave nothing to assert; after them when nothing was accepted or typed, with the
    acceptance asked once more at a terminal. Answered as they are, the verdict is stored (it still counts
    in the rates and precision) without a regression case.

    ``piped`` (input not from a terminal): always four lines, one per answer (corrected query,
    suggestions accepted, even when none is offered, must include, must not include), so that a script's
    lines never slide onto another question; an answer naming no suggestion raises ``typer.BadParameter``
    instead of being asked again."""
    from monitor.review.evidence import choose_terms, prefill, suggestions
    from monitor.review.evidence import corrected_query as stored_correction
    from monitor.verdicts import DEFAULT_ARTIFACT, nothing_to_assert

    def lacking(corrected: str | None, must: Sequence[str], must_not: Sequence[str]) -> str | None:
        logged = item.view.record.query if item.view is not None and item.view.record is not None else None
        return nothing_to_assert(
            label,
            DEFAULT_ARTIFACT[label],
            corrected=stored_correction(corrected, logged) is not None,  # the logged query is no correction
            must_include=must,
            must_not_include=must_not,
        )

    pre = prefill(label, item.findings)
    offered = suggestions(pre)
    missing = lacking(None, pre.must_include, pre.must_not_include)
    if missing:
        show(f"{missing} (Enter through: the verdict is stored without a case)")
    corrected = read_line("corrected query (Enter: none)", "").strip() or None
    if offered:
        show("suggested terms: " + "  ".join(f"{n}. {s}" for n, s in enumerate(offered, 1)))
    took = _accepted(read_line, show, len(offered), "Enter: none", piped)
    chosen = _typed_terms(read_line, show, [offered[n] for n in took], piped)
    must, must_not = list(chosen.typed_include), list(chosen.typed_exclude)
    missing = lacking(corrected, chosen.must_include, chosen.must_not_include)
    if missing and offered and not piped:
        show(f"{missing}: none of the suggested terms is accepted")
        took = _accepted(read_line, show, len(offered), "Enter: store without a case", piped)
        chosen = choose_terms([offered[n] for n in took], must, must_not)
    elif missing and offered:
        show(f"{missing}: none of the suggested terms is accepted (stored without a case)")
    return corrected, chosen


def _typed_terms(
    read_line: Callable[[str, str], str], show: Callable[[Any], None], accepted: list[Suggestion], piped: bool
) -> TermChoice:
    """The ``accepted`` suggestions and the must-include and must-not-include terms the reviewer types,
    asked again at a terminal while a term is both (``monitor.verdicts.both_ways``: no rewrite could
    pass such a case); piped, that raises ``typer.BadParameter``."""
    from monitor.review.evidence import choose_terms
    from monitor.verdicts import both_ways

    while True:
        must = split_terms(read_line("must include, typed, comma-separated (Enter: none)", ""))
        must_not = split_terms(read_line("must not include, typed, comma-separated (Enter: none)", ""))
        chosen = choose_terms(accepted, must, must_not)
        clash = both_ways(chosen.must_include, chosen.must_not_include)
        if not clash:
            return chosen
        said = f"{', '.join(map(repr, clash))} both must and must not be included: no rewrite could pass"
        if piped:
            raise typer.BadParameter(said)
        show(f"{said}; type both again")


def _accepted(
    read_line: Callable[[str, str], str], show: Callable[[Any], None], count: int, empty: str, piped: bool
) -> tuple[int, ...]:
    """The indexes of the ``count`` numbered suggestions the reviewer accepts: at a terminal asked only
    when there are some, and again until the answer names only suggestions; ``piped``, always one line,
    and an answer naming anything else raises ``typer.BadParameter`` (its lines would be out of step)."""
    from monitor.review.evidence import accepted_numbers

    if piped:
        answer = read_line("accept", "")
        if not count and answer.strip():
            raise typer.BadParameter(
                f"nothing is suggested here: the accept line must be empty, not {answer!r}"
            )
        try:
            return accepted_numbers(answer, count)
        except ValueError as exc:
            raise typer.BadParameter(f"piped answer {answer.strip()!r}: {exc}") from None
    while count:
        try:
            return accepted_numbers(read_line(f"accept (a: all, numbers: those, {empty})", ""), count)
        except ValueError as exc:
            show(str(exc))
    return ()


def _drawer(item: WalkItem, show: Callable[[Any], None], held: HeldCalibration) -> Callable[[bool], None]:
    """What draws ``item``: its heading, its record and findings (``compact`` or in full, each with what
    the verdicts taught of its step, from the ``held`` calibration), the keys."""
    from monitor.cli.render import render_record

    rec = item.view.record if item.view is not None else None
    estimates = held.get().for_findings(
        rec.prompt_version if rec is not None else None, rec.model if rec is not None else None, item.findings
    )

    row, redo = item.row, ""
    if item.again:
        said = f"your verdict: {item.earlier.label}; " if item.earlier is not None else ""
        redo = f"  (back: {said}a new verdict replaces yours)"
    heading = (
        f"item {item.position} of {item.total} · {row.request_id} · {row.stratum} · "
        f"due {row.due_at:%Y-%m-%d %H:%M}{redo}"
    )

    def draw(compact: bool) -> None:
        show(heading)
        if item.view is not None:
            for block in render_record(item.view, item.findings, compact=compact, estimates=estimates):
                show(block)
        show(_LEGEND)

    return draw


@contextmanager
def _given_back_on_error(walk: QueueWalk, item: WalkItem) -> Iterator[None]:
    """Give ``item`` back when the block raises, then raise on."""
    try:
        yield
    except BaseException:
        # Ctrl-C or a broken input must not leave the item locked for the whole lease.
        walk.give_back(item)
        raise


def _read_choice(
    walk: QueueWalk,
    read_key: Callable[[], str],
    read_line: Callable[[str, str], str],
    draw: Callable[[bool], None],
    show: Callable[[Any], None],
) -> tuple[str, str | None]:
    """Keys until a label, ``b`` (with something to go back to), ``s`` or ``q``; with the note ``e``
    gave (``None``: none)."""
    note: str | None = None
    key = ""
    while key not in LABEL_KEYS:
        key = (read_key() or "q").lower()
        if key == "e":
            note = read_line("note", note or "").strip() or None
        elif key == "v":
            draw(False)
        elif key == "b" and not walk.history:
            show("nothing to go back to yet in this session")
        elif key in ("b", "s", "q"):
            break
    return key, note


PIPED_KEYS = frozenset((*LABEL_KEYS, "e", "v", "b", "s", "q"))
"""The keys a line of piped input may hold where a key is read."""


def _read_key() -> str:
    """One key: from the terminal, or the next line of piped input, which must hold exactly one key of
    :data:`PIPED_KEYS` (the end of the input: quit). A script out of step would otherwise have a word of
    a query taken for a label ("fine": fabricated_constraint), so any other line raises
    ``typer.BadParameter`` (exit 2; the item is given back)."""
    if sys.stdin.isatty():
        return typer.getchar()
    line = sys.stdin.readline()
    if not line:
        return "q"
    if line.strip().lower() not in PIPED_KEYS:
        raise typer.BadParameter(
            f"a key line holds one key ({', '.join(sorted(PIPED_KEYS))}), not {line.strip()!r}"
        )
    return line.strip().lower()


def _read_line(prompt: str, default: str) -> str:
    """A line: prompted on a terminal; from piped input otherwise (an empty line keeps the default). Piped
    input that ends before the answer raises ``typer.BadParameter`` (exit 2; the item is given back,
    nothing stored): a verdict is never stored from answers that were not given."""
    if sys.stdin.isatty():
        return str(typer.prompt(prompt, default=default, show_default=bool(default)))
    line = sys.stdin.readline()
    if not line:
        raise typer.BadParameter(f"the input ended before the answer to {prompt!r}")
    return line.rstrip("\r\n") or default


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
    wrong rewrite also asks for the corrected query, which of the terms the findings suggest to accept
    (a: all, 1 3: those, Enter: none; only accepted ones are stored) and your own terms. e adds a note,
    b goes back to change the last verdict (a new version; the old one is kept), s skips, q quits.
    Piped input works too: one key per line; after a wrong-rewrite label always four lines: corrected
    query, suggestions accepted (empty when none is offered), must include, must not include (empty: none).
    A key line that is not one key, an accept line naming no suggestion, or input ending before an
    answer stops with exit code 2, the item given back; the end of input at a key quits.

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
            piped=not sys.stdin.isatty(),
        )
    err.print(f"{done['verdicts']} verdicts, {done['skipped']} skipped")


# -- export --------------------------------------------------------------------------------------
def _formats() -> tuple[str, ...]:
    from monitor.cases.export import FORMATS

    return FORMATS


ExportOut = Annotated[Path, typer.Option("--out", help="File to write; - for standard output (jsonl, csv).")]
ExportFormat = Annotated[
    str | None,
    typer.Option(
        "--format",
        parser=lazy_choice(_formats),
        metavar="FORMAT",
        help="jsonl, csv or parquet; default: the --out file's suffix (.csv, .parquet), else jsonl.",
    ),
]
Since = Annotated[
    str | None, typer.Option("--since", help="Only verdicts on or after this day (YYYY-MM-DD, UTC).")
]
NoRedact = Annotated[
    bool, typer.Option("--no-redact", help="Keep personal details (emails, phones, names, ...).")
]


def export_cmd(
    ctx: typer.Context,
    out_path: ExportOut,
    fmt: ExportFormat = None,
    since: Since = None,
    label: Annotated[Label | None, typer.Option("--label", help="Only cases with this label.")] = None,
    no_redact: NoRedact = False,
) -> None:
    """Write the regression cases (the eval set) as JSON Lines (schemas/regression_case.schema.json),
    CSV or Parquet, personal details redacted unless --no-redact. The standing verdicts that made no
    case (an ok on an unflagged item, an error on the rewrite with nothing a replay can fail, a
    chat-state fault, no message list logged) are listed on stderr with the reason.

    Example: rewrite-monitor export --out evalset.jsonl --since 2024-03-01 --label fabricated_constraint
    """
    from monitor.cases.export import export_cases, export_format
    from monitor.privacy import name_finder

    fmt = export_format(out_path, fmt)
    if str(out_path) == "-" and fmt == "parquet":
        raise typer.BadParameter(
            "parquet is binary: write it to a file, not to standard output", param_hint="--out"
        )
    since_dt = _since_day(since)
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
    _say_exported(summary, out_path)


def _since_day(since: str | None) -> datetime | None:
    """``--since`` as the start of that day (naive UTC); a usage error when it is no day."""
    if since is None:
        return None
    try:
        return datetime.combine(date.fromisoformat(since), time.min)
    except ValueError:
        raise typer.BadParameter("must be a day, YYYY-MM-DD", param_hint="--since") from None


def _say_exported(summary: ExportSummary, out_path: Path) -> None:
    """The export's one-line summary: on stderr when the cases went to standard output."""
    labels = ", ".join(f"{k} {v}" for k, v in summary.by_label.items()) or "none"
    redacted = "redacted" if summary.redacted else "NOT redacted (--no-redact)"
    where = "standard output" if str(out_path) == "-" else summary.path
    line = (
        f"exported {counted(summary.cases, 'case')} to {where} ({summary.format}, {redacted}); "
        f"by label: {labels}"
    )
    if str(out_path) == "-":
        from monitor.text import visible

        err.print(visible(line), markup=False, highlight=False)  # the cases are on stdout
    else:
        _say(line)
    _say_uncased(summary)


UNCASED_SHOWN = 5
"""Request ids listed per reason a verdict made no case (the rest are counted)."""


def _say_uncased(summary: ExportSummary) -> None:
    """The standing verdicts that made no case, by reason, on stderr (the cases may be on stdout)."""
    from monitor.cases.store import NO_CASE
    from monitor.text import visible

    if not summary.without_case:
        return
    by_reason: dict[str, list[str]] = {}
    for u in summary.without_case:
        by_reason.setdefault(u.reason, []).append(f"{u.request_id} ({u.label})")
    err.print(f"{counted(len(summary.without_case), 'verdict')} made no case:", markup=False, highlight=False)
    for reason, ids in by_reason.items():
        more = len(ids) - UNCASED_SHOWN
        shown = ", ".join(ids[:UNCASED_SHOWN]) + (f", and {more} more" if more > 0 else "")
        err.print(visible(f"  {len(ids)}: {NO_CASE[reason]}: {shown}"), markup=False, highlight=False)


# -- replay --------------------------------------------------------------------------------------
CasesPath = Annotated[Path, typer.Argument(help="An eval set written by `export` (JSON Lines).")]
Model = Annotated[str | None, typer.Option("--model", help="Default: the replay_model setting.")]
Prompt = Annotated[
    Path | None, typer.Option("--prompt", help="System prompt file; default: the bundled contextualizer.")
]
Concurrency = Annotated[int, typer.Option("--concurrency", min=1, help="Cases in flight at once.")]
Junit = Annotated[Path | None, typer.Option("--junit", help="Write JUnit XML here (for CI).")]
Compare = Annotated[
    Path | None,
    typer.Option("--compare", help="A replay's --out file, or an eval set (its logged rewrites)."),
]
Results = Annotated[
    Path | None, typer.Option("--out", help="Write per-case results (JSON Lines) for a later --compare.")
]
Prices = Annotated[
    Path | None, typer.Option("--prices", help="Price table; default: the replay_prices_file setting.")
]
AllowEmpty = Annotated[
    bool,
    typer.Option("--allow-empty", help="Exit 0 on an eval set (or --compare file) without a case."),
]


def replay_cmd(
    ctx: typer.Context,
    cases_path: CasesPath,
    model: Model = None,
    prompt: Prompt = None,
    concurrency: Concurrency = 4,
    junit: Junit = None,
    compare_path: Compare = None,
    results_path: Results = None,
    prices: Prices = None,
    allow_empty: AllowEmpty = False,
) -> None:
    """Replay an eval set through the rewriter (anthropic SDK) and judge each new rewrite: pass/fail per
    label, cost, JUnit XML; exit 1 when a case fails (with --compare: when a case went pass -> fail).
    An eval set without a case is an error (exit 5: an empty export must not pass a CI gate) unless
    --allow-empty.

    Example: rewrite-monitor replay evalset.jsonl --model claude-haiku-4-5 --junit replay.xml
    --compare baseline.jsonl
    """
    require_extra("anthropic", "replay", "replay")
    from monitor.replay.report import junit_xml
    from monitor.replay.run import replay, write_results

    state: State = ctx.obj
    run = replay(
        state.settings,
        cases_path,
        model=model,
        prompt=prompt,
        concurrency=concurrency,
        compare_path=compare_path,
        prices=prices,
        allow_empty=allow_empty,
    )
    _print_replay(run)
    if junit is not None:
        junit_xml(run.results, junit)
    if results_path is not None:
        write_results(run.results, results_path)
    if run.comparison is not None:
        _print_comparison(run.comparison, compare_path)
    if run.failed:
        raise typer.Exit(1)


def _print_replay(run: ReplayRun) -> None:
    """The counts by label, a line per case that did not pass, and the cost."""
    from monitor.replay.report import by_label

    table = Table(
        "label",
        "cases",
        "pass",
        "fail",
        "error",
        title=f"replay of {counted(len(run.cases), 'case')} on {run.model}",
    )
    for lab, row in by_label(run.results).items():
        table.add_row(lab, str(row["cases"]), str(row["pass"]), str(row["fail"]), str(row["error"]))
    out.print(table)
    for r in run.results:
        if r.status != "pass":
            _say(f"{r.status.upper()} {r.id[:12]} {r.source_request_id} [{r.label}]: {'; '.join(r.failures)}")
    cost = run.cost
    dollars = (
        f"${cost.dollars:.4f}"
        if cost.dollars is not None
        else f"unknown (no price for {', '.join(cost.unpriced)})"
    )
    _say(
        f"cost: {cost.input_tokens:,} input + {cost.output_tokens:,} output tokens = {dollars}"
        f" (prices: {run.prices.source})"
    )


def _print_comparison(comparison: Comparison, compare_path: Path | None) -> None:
    """The cases whose status changed since the compared run, and the counts of each change."""
    ct = Table("case", "request", "label", "before", "after", title=f"compared with {compare_path}")
    for c in comparison.changes:
        ct.add_row(
            *(Text(v) for v in (c.id[:12], c.source_request_id, c.label, c.before or "-", c.after or "-"))
        )
    out.print(ct)
    regressions, fixed, same, other = (
        comparison.regressions,
        comparison.fixed,
        comparison.same,
        comparison.other,
    )
    _say(f"pass -> fail: {regressions}; fail -> pass: {fixed}; unchanged: {same}; other: {other}")


def register(app: typer.Typer) -> None:
    """Register this module's commands on the root ``app`` (``monitor.cli.main`` calls it)."""
    app.command("verdict")(verdict_cmd)
    app.command("review")(review_cmd)
    app.command("export")(export_cmd)
    app.command("replay")(replay_cmd)
