"""What a check returns: :class:`Finding`; how it declines: :class:`SkipCheck` -> :class:`Skipped`.

A check is a pure function ``check(record, rules) -> list[Finding]``. When the record lacks what the
check needs (no ``ctx_input``, no logged messages, no digest...), the check raises :class:`SkipCheck`
with a reason, and the runner records a :class:`Skipped`: skipped is never "passed".
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from monitor.checks.nlp import AliasIndex, Analyzer, Transcript
    from monitor.checks.rules import Rules
    from monitor.record import RewriteRecord

from monitor.severity import SEVERITIES, SEVERITY_RANK

FABRICATION_KINDS = ("added_content_word", "qualifier_conflict", "replaced_term")
"""Finding kinds that mean a possibly invented constraint: a word in no turn, a constraining value
other than the live one (the fabrication the added-word check misses; issue 3, section 2), or the head
of the user's compound swapped for one only an answer said (``monitor.checks.intent.check_replaced``).
The alert's fabrication rate, ``evaluate``'s ``fabricated`` label and the dashboard's query highlights
use them."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing a check found in one rewrite.

    - ``kind``: e.g. ``added_content_word``, ``window_truncated`` (one check may emit several kinds).
    - ``severity``: ``"high"`` | ``"medium"`` | ``"low"``; only medium and above reach the queue by default.
    - ``evidence``: JSON-serialisable dict. Words carry character spans into the query
      ``{"text", "start", "end", ...}`` (``end`` exclusive); transcript positions are
      ``{"message_index", "start", "end"}`` (0-based index into ``context.messages``; ``"latest"`` for the
      latest user message); plus counts, turn numbers and request ids.
    - ``reason``: one human line naming the word or signal and why it fired.
    - ``check_id`` / ``check_version``: the registered check that produced it.
    - ``step``: the id of the grading step that set ``severity``, one of the check's step table
      (``monitor.checks.steps``; ``run_checks`` refuses another).
    """

    kind: str
    severity: str
    evidence: dict[str, Any]
    reason: str
    check_id: str
    check_version: int
    step: str

    def __post_init__(self) -> None:
        if self.severity not in SEVERITY_RANK:
            raise ValueError(f"severity must be one of {SEVERITIES}, got {self.severity!r}")

    def __reduce__(self) -> tuple[type[Finding], tuple[Any, ...]]:
        # Pickled as a constructor call: a frozen slots dataclass's own state methods call fields()
        # per object, and sending outcomes back from the check processes (monitor.worker.pool) spent
        # 7% of a process's time there (py-spy, 20,000 non-repeating rewrites).
        return (
            Finding,
            (
                self.kind,
                self.severity,
                self.evidence,
                self.reason,
                self.check_id,
                self.check_version,
                self.step,
            ),
        )

    @property
    def words(self) -> list[str]:
        """The words this finding is about, as a reviewer needs them.

        The query words it flags (``evidence["words"][*]["text"]``); for a finding about something
        missing from the query, the missing words instead (``evidence["missing"][*]["text"]``, or the
        ``evidence["stated_at"]["text"]`` of a dropped qualifier). Possibly empty.
        """
        flagged = [w["text"] for w in self.evidence.get("words", [])]
        if flagged:
            return flagged
        missing = self.evidence.get("missing")
        if isinstance(missing, list) and missing:  # some checks keep a count under this key
            return [w["text"] for w in missing if isinstance(w, dict) and "text" in w]
        stated = self.evidence.get("stated_at")
        return [stated["text"]] if isinstance(stated, dict) and stated.get("text") else []

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-serialisable) with every field plus ``words``."""
        return {
            "kind": self.kind,
            "severity": self.severity,
            "evidence": self.evidence,
            "reason": self.reason,
            "check_id": self.check_id,
            "check_version": self.check_version,
            "step": self.step,
            "words": self.words,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class Skipped:
    """A check that did not run on a record, and why (e.g. ``"no ctx_input logged"``)."""

    check_id: str
    reason: str


class SkipCheck(Exception):  # noqa: N818  (it is a control-flow signal, not an error)
    """Raised inside a check when the record lacks what it needs; carries the human reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class CheckStatus:
    """Per-check outcome on one record: ``status`` ``"ran"`` or ``"skipped"`` (``reason`` says why)."""

    check_id: str
    version: int
    status: str
    reason: str | None = None
    n_findings: int = 0

    def __reduce__(self) -> tuple[type[CheckStatus], tuple[Any, ...]]:
        # as Finding's: eighteen of these per outcome
        return (CheckStatus, (self.check_id, self.version, self.status, self.reason, self.n_findings))


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    """All findings of one record plus one :class:`CheckStatus` per registered check, in registry order."""

    request_id: str
    rules_hash: str
    findings: tuple[Finding, ...]
    statuses: tuple[CheckStatus, ...] = field(default=())

    def __reduce__(self) -> tuple[type[CheckOutcome], tuple[Any, ...]]:
        # as Finding's
        return (CheckOutcome, (self.request_id, self.rules_hash, self.findings, self.statuses))

    @property
    def skipped(self) -> tuple[Skipped, ...]:
        return tuple(Skipped(s.check_id, s.reason or "") for s in self.statuses if s.status == "skipped")

    def by_kind(self, kind: str) -> list[Finding]:
        return [f for f in self.findings if f.kind == kind]


def at_least(severity: str, threshold: str) -> bool:
    """True when ``severity`` ranks at or above ``threshold`` (low < medium < high)."""
    return SEVERITY_RANK[severity] >= SEVERITY_RANK[threshold]


def message_texts(record: RewriteRecord) -> list[str]:
    """Contents of the logged messages, or raise :class:`SkipCheck` when none were logged."""
    ctx = record.context
    if ctx is None:
        raise SkipCheck("no ctx_input logged for this request")
    if ctx.messages is None:
        raise SkipCheck("ctx_input has no message list (signals only)")
    return [m.content for m in ctx.messages]


def analyzer() -> Analyzer:
    """The shared :class:`monitor.checks.nlp.Analyzer` (blank English + lookup lemmas)."""
    from monitor.checks.nlp import get_analyzer

    return get_analyzer()


def alias_index(rules: Rules) -> AliasIndex:
    """The rules' alias groups as a :class:`monitor.checks.nlp.AliasIndex` (built once per Rules object)."""
    from monitor.checks.nlp import build_alias_index

    got = rules._memo.alias_index
    if got is None:
        got = build_alias_index(((g.name, g.members) for g in rules.aliases.groups), analyzer())
        rules._memo.alias_index = got
    return got


def transcript(record: RewriteRecord) -> Transcript:
    """The analysed :class:`monitor.checks.nlp.Transcript` of ``record``; SkipCheck without messages."""
    from monitor.checks.nlp import build_transcript

    message_texts(record)
    assert record.context is not None and record.context.messages is not None  # message_texts checked
    return build_transcript(analyzer(), ((m.role, m.content) for m in record.context.messages), record.latest)
