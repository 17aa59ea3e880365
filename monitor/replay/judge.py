"""Load an eval set and judge a rewrite of each case: the pass rule of a replay.

A case (``schemas/regression_case.schema.json``) passes when the rewriter's query

1. contains every ``must_include`` term and
2. no ``must_not_include`` term (both case-insensitive, whole words: ``(?<!\\w)term(?!\\w)`` after
   collapsing whitespace), and
3. for a positive case (label other than ``ok`` / ``false_alarm_synonym``), our own rewrite checks
   that run (:data:`REWRITE_FAMILIES`; a plugin's checks are not among them) raise no finding at medium
   or above. The ``chat_state`` family is left out: it judges the transcript, which a replay does not
   change. Negative cases skip this step: a reviewer has already judged our checks wrong on this
   prefix, and failing the rewriter for the checks' false alarm would invert the case.

A case whose call fails (timeout, API error after retries, output that is not the JSON object the
prompt asks for) is an ``error``, never a pass.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from pydantic import BaseModel, ConfigDict, ValidationError

from monitor.errors import ReplayError, utf8_fault
from monitor.verdicts import FINE_LABELS

if TYPE_CHECKING:
    from monitor.checks.rules import Rules
    from monitor.record import RewriteRecord


REWRITE_FAMILIES = ("added_words", "qualifiers", "references", "antecedents", "intent", "scope")


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


class Usage(TypedDict, total=False):
    """What the API reported for a case, and its wall time (fields of :class:`CaseResult`)."""

    model: str | None
    input_tokens: int
    output_tokens: int
    seconds: float


class Outcome(Usage, total=False):
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
        from monitor.checks import at_least, run_checks
        from monitor.checks.registry import active

        only = [s.id for s in active() if s.family in REWRITE_FAMILIES]
        outcome = run_checks(_record(case, rewrite), rules, only=only)
        for f in outcome.findings:
            if at_least(f.severity, MIN_SEVERITY):
                words = f" ({', '.join(f.words)})" if f.words else ""
                failures.append(f"check {f.kind} [{f.severity}]{words}")
    return failures


def case_result(case: dict[str, Any], status: str, **kw: Unpack[Outcome]) -> CaseResult:
    return CaseResult(case["id"], case["version"], case["label"], case["source_request_id"], status, **kw)


def judged(case: dict[str, Any], rewrite: ModelRewrite, rules: Rules, **kw: Unpack[Usage]) -> CaseResult:
    """A pass/fail :class:`CaseResult` for ``rewrite`` on ``case``."""
    failures = judge(case, rewrite, rules)
    return case_result(
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
            out.append(case_result(case, "error", failures=["no logged rewrite in the case"]))
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
