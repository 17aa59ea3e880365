"""Replay regression cases through a rewriter built on the anthropic SDK, and judge each new rewrite.

A case (``schemas/regression_case.schema.json``) passes when the rewriter's query

1. contains every ``must_include`` term and
2. no ``must_not_include`` term (both case-insensitive, whole words: ``(?<!\\w)term(?!\\w)`` after
   collapsing whitespace), and
3. for a positive case (label other than ``ok`` / ``false_alarm_synonym``), our own rewrite checks
   (families ``added_words``, ``qualifiers``, ``references``, ``intent``) raise no finding at medium
   or above. The ``chat_state`` family is left out: it judges the transcript, which a replay does not
   change. Negative cases skip this step: a reviewer has already judged our checks wrong on this
   prefix, and failing the rewriter for the checks' false alarm would invert the case.

A case whose call fails (timeout, API error after retries, output that is not the JSON object the
prompt asks for) is an ``error``, never a pass.

The rewriter: ``system`` = the contextualizer prompt (:data:`PROMPT_PATH`, or ``--prompt FILE``), one
user turn holding the numbered transcript and the latest message, ``max_tokens`` capped by the
``replay_max_tokens`` setting. Retries are the SDK's: 408/409/429/5xx (529 overloaded included) and
connection errors are retried ``replay_max_retries`` times with exponential backoff (0.5 s × 2^n, at
most 8 s, jittered) or after the server's ``retry-after``. The per-case timeout bounds the whole case,
retries included (``asyncio.wait_for``). ``concurrency`` cases run at once.

Nothing here logs transcripts; results carry the new query, which the eval set already holds.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from monitor.errors import ReplayError, utf8_fault
from monitor.review.labels import FINE_LABELS

if TYPE_CHECKING:
    import anthropic
    import httpx2
    from anthropic.types import Message as ApiMessage

    from monitor.checks.rules import Rules
    from monitor.record import RewriteRecord

PROMPT_PATH = Path(__file__).resolve().parent / "prompts" / "contextualizer.md"
PRICES_PATH = Path(__file__).resolve().parent / "prices.yaml"
REWRITE_FAMILIES = ("added_words", "qualifiers", "references", "intent")
MIN_SEVERITY = "medium"


# -- model output ------------------------------------------------------------------------------------
class _Resolved(BaseModel):
    model_config = ConfigDict(extra="ignore")
    surface: str
    antecedent: str
    turn: int | None = None


class ModelRewrite(BaseModel):
    """The JSON object the contextualizer prompt asks for: ``{query, rewritten, resolved, dropped}``."""

    model_config = ConfigDict(extra="ignore")
    query: str
    rewritten: bool
    resolved: list[_Resolved] = []
    dropped: list[str] = []


def parse_model_output(text: str) -> ModelRewrite:
    """Parse the model's answer: one JSON object, optionally inside a Markdown code fence.

    Raises ``ReplayError`` naming what is wrong (not JSON, not an object, a missing or mistyped field).
    """
    body = text.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", body, flags=re.S)
    if fenced:
        body = fenced.group(1)
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise ReplayError(f"model output is not JSON ({exc.msg} at char {exc.pos})") from None
    if not isinstance(data, dict):
        raise ReplayError(f"model output is JSON {type(data).__name__}, not an object")
    try:
        return ModelRewrite.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ReplayError(f"model output does not match the rewrite shape: {problems}") from None


# -- cases and results --------------------------------------------------------------------------------
@dataclass
class CaseResult:
    """The outcome of one case: ``status`` ``pass``, ``fail`` or ``error``; ``failures`` say why.

    ``query`` etc. are the rewrite judged (``None`` on error); tokens are what the API reported;
    ``seconds`` the wall time of the case, retries included.
    """

    id: str
    version: int
    label: str
    source_request_id: str
    status: str
    failures: list[str] = field(default_factory=list)
    query: str | None = None
    rewritten: bool | None = None
    resolved: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class _Usage(TypedDict, total=False):
    """What the API reported for a case, and its wall time (fields of :class:`CaseResult`)."""

    model: str | None
    input_tokens: int
    output_tokens: int
    seconds: float


class _Outcome(_Usage, total=False):
    """The optional fields of a :class:`CaseResult`."""

    failures: list[str]
    query: str | None
    rewritten: bool | None
    resolved: list[dict[str, Any]]
    dropped: list[str]


def read_text(path: Path, what: str = "") -> str:
    """The UTF-8 text of ``path``. Raises ``ReplayError``: ``cannot read [what ]path: reason``, or
    ``path:line: not UTF-8 text (byte 0x.. at column N)``."""
    try:
        # Decoded whole (not read_text): a decode error then holds every byte before the bad one, so
        # its line can be named.
        return path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise ReplayError(f"cannot read {what}{path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        line, reason = utf8_fault(exc)
        raise ReplayError(f"{path}:{line}: {reason}") from None


def load_cases(path: Path, *, allow_empty: bool = False) -> list[dict[str, Any]]:
    """Read an exported eval set (JSON Lines) and validate every line against the case schema.

    Raises ``ReplayError`` as ``path:line: reason`` for an unreadable or non-UTF-8 file, bad JSON or a
    case that does not match the schema, and ``no regression cases in PATH: nothing to replay`` for a
    file without a case unless ``allow_empty`` (an empty export must not pass a CI gate silently).
    """
    import jsonschema

    from monitor.cases.export import case_schema

    validator = jsonschema.Draft202012Validator(case_schema())
    lines = read_text(path).splitlines()
    cases = []
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ReplayError(f"{path}:{no}: not JSON ({exc.msg})") from None
        error = next(iter(sorted(validator.iter_errors(case), key=lambda e: list(e.path))), None)
        if error is not None:
            where = "/".join(map(str, error.path)) or "case"
            raise ReplayError(f"{path}:{no}: {where}: {error.message}")
        cases.append(case)
    if not cases and not allow_empty:
        raise ReplayError(f"no regression cases in {path}: nothing to replay")
    return cases


def contains_term(query: str, term: str) -> bool:
    """True when ``term`` occurs in ``query`` as whole words, ignoring case and runs of whitespace."""
    q = " ".join(query.split()).casefold()
    t = " ".join(term.split()).casefold()
    return re.search(rf"(?<!\w){re.escape(t)}(?!\w)", q) is not None


def render_user_turn(messages: Sequence[dict[str, str]], latest: str) -> str:
    """The user turn sent to the rewriter: the numbered transcript, then the latest message."""
    lines = ["Conversation so far (oldest first):"]
    lines += [f"[{i}] {m['role']}: {m['content']}" for i, m in enumerate(messages, 1)]
    lines += ["", "Latest user message:", latest]
    return "\n".join(lines)


def _record(case: dict[str, Any], rewrite: ModelRewrite) -> RewriteRecord:
    from monitor.record import ContextInput, Message, Resolution, RewriteRecord, transcript_digest

    msgs = tuple(Message(m["role"], m["content"]) for m in case["messages"])
    roles = {
        "user": sum(m.role == "user" for m in msgs),
        "assistant": sum(m.role == "assistant" for m in msgs),
    }
    context = ContextInput(
        request_id=case["source_request_id"],
        n_messages=len(msgs),
        roles=roles,
        digest=transcript_digest(msgs),
        messages=msgs,
    )
    return RewriteRecord(
        conv_id=f"replay:{case['id'][:12]}",
        request_id=case["source_request_id"],
        turn=roles["user"] + 1,
        latest=case["latest"],
        query=rewrite.query,
        rewritten=rewrite.rewritten,
        resolved=tuple(Resolution(r.surface, r.antecedent, r.turn) for r in rewrite.resolved),
        dropped=tuple(rewrite.dropped),
        context=context,
    )


def judge(case: dict[str, Any], rewrite: ModelRewrite, rules: Rules) -> list[str]:
    """Why ``rewrite`` fails ``case`` (empty: it passes); see the module docstring for the three tests."""
    if not rewrite.query.strip():
        return ["empty query"]
    failures = [f"missing {t!r}" for t in case["must_include"] if not contains_term(rewrite.query, t)]
    failures += [f"contains {t!r}" for t in case["must_not_include"] if contains_term(rewrite.query, t)]
    if case["label"] not in FINE_LABELS:
        from monitor.checks import REGISTRY, at_least, run_checks

        only = [s.id for s in REGISTRY.values() if s.family in REWRITE_FAMILIES]
        outcome = run_checks(_record(case, rewrite), rules, only=only)
        for f in outcome.findings:
            if at_least(f.severity, MIN_SEVERITY):
                words = f" ({', '.join(f.words)})" if f.words else ""
                failures.append(f"check {f.kind} [{f.severity}]{words}")
    return failures


def _result(case: dict[str, Any], status: str, **kw: Unpack[_Outcome]) -> CaseResult:
    return CaseResult(case["id"], case["version"], case["label"], case["source_request_id"], status, **kw)


def judged(case: dict[str, Any], rewrite: ModelRewrite, rules: Rules, **kw: Unpack[_Usage]) -> CaseResult:
    """A pass/fail :class:`CaseResult` for ``rewrite`` on ``case``."""
    failures = judge(case, rewrite, rules)
    return _result(
        case,
        "fail" if failures else "pass",
        failures=failures,
        query=rewrite.query,
        rewritten=rewrite.rewritten,
        resolved=[r.model_dump() for r in rewrite.resolved],
        dropped=list(rewrite.dropped),
        **kw,
    )


def evaluate_logged(cases: Iterable[dict[str, Any]], rules: Rules) -> list[CaseResult]:
    """Judge each case's logged rewrite (what the failing prompt and model produced) like a replay."""
    out = []
    for case in cases:
        logged = case.get("logged")
        if logged is None:
            out.append(_result(case, "error", failures=["no logged rewrite in the case"]))
            continue
        rewrite = ModelRewrite.model_validate(logged)
        out.append(judged(case, rewrite, rules, model=case.get("model")))
    return out


def load_results(path: Path, rules: Rules, *, allow_empty: bool = False) -> list[CaseResult]:
    """Results to compare with: a replay's ``--out`` file, or an eval set (then its logged rewrites are
    judged). Raises ``ReplayError`` for an unreadable or non-UTF-8 file, a line that is neither, and
    ``no results in PATH: nothing to compare with`` for an empty file unless ``allow_empty`` (with an
    empty baseline no case can go from pass to fail, so a CI gate would pass whatever the replay did).
    """
    numbered = [(no, ln) for no, ln in enumerate(read_text(path).splitlines(), 1) if ln.strip()]
    if not numbered and not allow_empty:
        raise ReplayError(f"no results in {path}: nothing to compare with")
    out = []
    for i, (no, line) in enumerate(numbered):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ReplayError(f"{path}:{no}: not JSON ({exc.msg})") from None
        if i == 0 and isinstance(obj, dict) and "messages" in obj:
            return evaluate_logged(load_cases(path), rules)
        try:
            out.append(CaseResult(**obj))
        except TypeError as exc:
            raise ReplayError(f"{path}:{no}: not a replay result ({exc})") from None
    return out


# -- the rewriter ---------------------------------------------------------------------------------
def make_client(
    *, api_key: str, max_retries: int, http_client: httpx2.AsyncClient | None = None
) -> anthropic.AsyncAnthropic:
    """An ``anthropic.AsyncAnthropic`` client (``http_client``: e.g. one over a mock transport)."""
    import anthropic

    return anthropic.AsyncAnthropic(api_key=api_key, max_retries=max_retries, http_client=http_client)


async def replay_case(
    case: dict[str, Any],
    *,
    client: anthropic.AsyncAnthropic,
    model: str,
    system: str,
    max_tokens: int,
    timeout: float,
    rules: Rules,
) -> CaseResult:
    """Rewrite one case with the model and judge it; errors become ``status="error"`` results."""
    import anthropic

    started = time.perf_counter()

    async def call() -> ApiMessage:
        return await client.messages.create(
            model=model,
            max_tokens=max_tokens,
            system=system,
            messages=[{"role": "user", "content": render_user_turn(case["messages"], case["latest"])}],
            timeout=timeout,
        )

    try:
        resp = await asyncio.wait_for(call(), timeout)
    except TimeoutError:
        return _result(
            case, "error", failures=[f"timed out after {timeout:g} s"], model=model, seconds=timeout
        )
    except anthropic.APIStatusError as exc:
        msg = f"API error {exc.status_code} after retries: {type(exc).__name__}"
        return _result(case, "error", failures=[msg], model=model, seconds=time.perf_counter() - started)
    except anthropic.APIConnectionError as exc:
        msg = f"API unreachable after retries: {type(exc).__name__}"
        return _result(case, "error", failures=[msg], model=model, seconds=time.perf_counter() - started)
    usage: _Usage = {
        "model": resp.model or model,
        "input_tokens": resp.usage.input_tokens,
        "output_tokens": resp.usage.output_tokens,
        "seconds": time.perf_counter() - started,
    }
    text = "".join(b.text for b in resp.content if isinstance(b, anthropic.types.TextBlock))
    try:
        rewrite = parse_model_output(text)
    except ReplayError as exc:
        reason = str(exc) + (" (output cut at max_tokens)" if resp.stop_reason == "max_tokens" else "")
        return _result(case, "error", failures=[reason], **usage)
    return judged(case, rewrite, rules, **usage)


async def replay_cases(
    cases: Sequence[dict[str, Any]],
    *,
    client: anthropic.AsyncAnthropic,
    model: str,
    system: str,
    max_tokens: int,
    timeout: float,
    concurrency: int,
    rules: Rules,
) -> list[CaseResult]:
    """Replay every case, at most ``concurrency`` at a time; results in the order of ``cases``."""
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(case: dict[str, Any]) -> CaseResult:
        async with gate:
            return await replay_case(
                case,
                client=client,
                model=model,
                system=system,
                max_tokens=max_tokens,
                timeout=timeout,
                rules=rules,
            )

    return list(await asyncio.gather(*(one(c) for c in cases)))


# -- reports --------------------------------------------------------------------------------------
def by_label(results: Iterable[CaseResult]) -> dict[str, dict[str, int]]:
    """Per label: ``{cases, pass, fail, error}``, labels sorted."""
    table: dict[str, dict[str, int]] = {}
    for r in results:
        row = table.setdefault(r.label, {"cases": 0, "pass": 0, "fail": 0, "error": 0})
        row["cases"] += 1
        row[r.status] += 1
    return dict(sorted(table.items()))


@dataclass(frozen=True, slots=True)
class Change:
    """One case whose status differs between ``before`` (the compared file) and ``after`` (this run);
    ``None`` when the case is absent from that side."""

    id: str
    label: str
    source_request_id: str
    before: str | None
    after: str | None

    @property
    def regression(self) -> bool:
        return self.before == "pass" and self.after in ("fail", "error")


def compare(before: Sequence[CaseResult], after: Sequence[CaseResult]) -> tuple[list[Change], int]:
    """Cases whose status changed, in ``after`` order then those only in ``before``; and how many kept
    their status. Cases are matched by id (a case's id is the same in every version)."""
    old = {r.id: r for r in before}
    new_ids = {r.id for r in after}
    changes, same = [], 0
    for r in after:
        b = old.get(r.id)
        if b is not None and b.status == r.status:
            same += 1
        else:
            changes.append(Change(r.id, r.label, r.source_request_id, b.status if b else None, r.status))
    changes += [
        Change(r.id, r.label, r.source_request_id, r.status, None) for r in before if r.id not in new_ids
    ]
    return changes, same


def junit_xml(results: Sequence[CaseResult], path: Path, suite: str = "rewrite-monitor replay") -> None:
    """Write JUnit XML: one ``testcase`` per case (``classname`` ``replay.<label>``), ``failure`` for a
    failed case and ``error`` for one that could not be judged, the reasons and query in the text."""
    fails = sum(r.status == "fail" for r in results)
    errors = sum(r.status == "error" for r in results)
    total_time = f"{sum(r.seconds for r in results):.3f}"
    root = ET.Element(
        "testsuites", name=suite, tests=str(len(results)), failures=str(fails), errors=str(errors)
    )
    ts = ET.SubElement(
        root, "testsuite", name=suite, tests=str(len(results)), failures=str(fails), errors=str(errors)
    )
    ts.set("time", total_time)
    for r in results:
        tc = ET.SubElement(
            ts,
            "testcase",
            classname=f"replay.{r.label}",
            name=f"{r.id[:12]} v{r.version} {r.source_request_id}",
            time=f"{r.seconds:.3f}",
        )
        if r.status in ("fail", "error"):
            el = ET.SubElement(
                tc, "failure" if r.status == "fail" else "error", message="; ".join(r.failures)
            )
            el.text = "\n".join([*r.failures, f"query: {r.query}" if r.query is not None else "no query"])
    ET.indent(root)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


# -- prices ---------------------------------------------------------------------------------------
class _Price(BaseModel):
    model_config = ConfigDict(extra="forbid")
    input: float = Field(ge=0)
    output: float = Field(ge=0)


class PriceTable(BaseModel):
    """A price table file (``monitor/prices.yaml`` shape): dollars per ``per_tokens`` tokens per model."""

    model_config = ConfigDict(extra="forbid")
    source: str
    currency: str = "USD"
    per_tokens: int = Field(default=1_000_000, gt=0)
    models: dict[str, _Price]

    def price(self, model: str) -> _Price | None:
        """The exact model's price, else that of its longest listed prefix followed by ``-``."""
        if model in self.models:
            return self.models[model]
        prefixes = [k for k in self.models if model.startswith(k + "-")]
        return self.models[max(prefixes, key=len)] if prefixes else None

    def cost(self, model: str, input_tokens: int, output_tokens: int) -> float | None:
        """Dollars for the tokens, or ``None`` when the model has no price."""
        p = self.price(model)
        if p is None:
            return None
        return (input_tokens * p.input + output_tokens * p.output) / self.per_tokens


def load_prices(path: Path | None = None) -> PriceTable:
    """Read a price table (default :data:`PRICES_PATH`). Raises ``ReplayError`` naming the file."""
    p = path or PRICES_PATH
    text = read_text(p, "price table ")
    try:
        return PriceTable.model_validate(yaml.safe_load(text))
    except (yaml.YAMLError, ValidationError) as exc:
        raise ReplayError(f"{p}: invalid price table: {exc}") from None


@dataclass(frozen=True, slots=True)
class Cost:
    """Tokens over all cases and their cost; ``dollars`` is ``None`` when a model had no price
    (``unpriced`` names those models)."""

    input_tokens: int
    output_tokens: int
    dollars: float | None
    unpriced: tuple[str, ...]


def total_cost(results: Iterable[CaseResult], prices: PriceTable) -> Cost:
    """Sum the tokens of ``results`` and price them per model."""
    tin = tout = 0
    dollars = 0.0
    unpriced: set[str] = set()
    for r in results:
        tin += r.input_tokens
        tout += r.output_tokens
        if r.input_tokens or r.output_tokens:
            c = prices.cost(r.model or "", r.input_tokens, r.output_tokens)
            if c is None:
                unpriced.add(r.model or "(unknown)")
            else:
                dollars += c
    return Cost(tin, tout, None if unpriced else dollars, tuple(sorted(unpriced)))
