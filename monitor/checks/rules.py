"""Load and validate ``rules/*.yaml`` into typed, hashed :class:`Rules`.

Three files, each validated by a pydantic model with ``extra="forbid"`` (schema: ``rules/README.md``):

- ``aliases.yaml``   -> :class:`AliasesFile`: groups of equivalent surface forms (scoped allow-list).
- ``neutral.yaml``   -> :class:`NeutralFile`: words never reported, framing words graded low, fillers.
- ``qualifiers.yaml`` -> :class:`QualifiersFile`: qualifier kinds with regex patterns.

Any problem raises :class:`monitor.errors.RulesError` with ``"<file>:<line>: <reason>"``; the line comes
from the YAML node that holds the offending value. ``Rules.hash`` is a sha256 (16 hex) over the
validated content (not the bytes), so comments and formatting do not trigger a re-check.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from monitor.bundled import bundled_dir
from monitor.checks.learned import LearnedTable
from monitor.checks.literals import Anchors, required_literals
from monitor.checks.profile import RewriterProfile
from monitor.errors import RulesError, utf8_fault
from monitor.text import match_key

if TYPE_CHECKING:
    from monitor.checks.nlp import AliasIndex

FILES = ("aliases.yaml", "neutral.yaml", "qualifiers.yaml")


class LocatedValueError(ValueError):
    """A validator error that knows the path of the offending value below the validated object, so the
    loader can report its YAML line (pydantic keeps the exception in ``error["ctx"]["error"]``)."""

    def __init__(self, message: str, loc: tuple[str | int, ...]) -> None:
        super().__init__(message)
        self.loc = loc


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AliasGroup(_Strict):
    """Equivalent surface forms: a query word in one is allowed when ANY member is in the transcript."""

    name: str = Field(min_length=1)
    members: list[str] = Field(min_length=2)
    note: str | None = None

    @field_validator("members")
    @classmethod
    def _non_empty(cls, v: list[str]) -> list[str]:
        for m in v:
            if not m.strip():
                raise ValueError("alias member must not be empty")
        return v


class AliasesFile(_Strict):
    version: Literal[1]
    groups: list[AliasGroup] = []

    @model_validator(mode="after")
    def _unique(self) -> AliasesFile:
        seen: dict[str, str] = {}
        names: set[str] = set()
        for gi, g in enumerate(self.groups):
            if g.name in names:
                raise LocatedValueError(f"group name {g.name!r} is used twice", ("groups", gi, "name"))
            names.add(g.name)
            for mi, m in enumerate(g.members):
                k = match_key(m)
                if k in seen and seen[k] != g.name:
                    raise LocatedValueError(
                        f"member {m!r} of group {g.name!r} is already in group {seen[k]!r}",
                        ("groups", gi, "members", mi),
                    )
                seen[k] = g.name
        return self


LABEL_SOURCE_RE = re.compile(
    r"_labels\b|\.jsonl?\b|shared/data|hand[- ]?label|label(?:l)?ed (?:file|data|items?|set|audit)"
    r"|\baudit\b|annotat|reviewers? marked",
    re.IGNORECASE,
)
"""What a word group's ``source`` may not cite: a word is never on a list because a labelled file held
it (the measured figures would then be fitted to the files they are measured on)."""


class WordGroup(_Strict):
    """Words of one kind with the published, non-data source that makes them that kind."""

    source: str = Field(min_length=10)
    words: list[str] = Field(min_length=1)

    @field_validator("source")
    @classmethod
    def _not_a_label_file(cls, v: str) -> str:
        if LABEL_SOURCE_RE.search(v):
            raise ValueError("a source must name a general reference, never a labelled data file")
        return v


class NeutralFile(_Strict):
    """``neutral``: never reported. ``framing``: reported at severity low. ``fillers``: discourse words
    of the latest message that carry no intent (ignored by ``intent_dropped``). All are lower-case lemmas,
    listed in groups ``{source, words}``: every word names the general reference its kind comes from.
    (Version 1, plain word lists without sources, is no longer read: add a source to each group.)
    """

    version: Literal[2]
    neutral: list[WordGroup] = []
    framing: list[WordGroup] = []
    fillers: list[WordGroup] = []

    @field_validator("neutral", "framing", "fillers")
    @classmethod
    def _lower(cls, v: list[WordGroup]) -> list[WordGroup]:
        for group in v:
            for w in group.words:
                if w != w.strip().lower() or not w:
                    raise ValueError(f"word {w!r} must be lower-case with no surrounding spaces")
        return v

    def words(self, name: str) -> list[str]:
        """The words of list ``name`` (``neutral``, ``framing`` or ``fillers``), groups flattened."""
        groups: list[WordGroup] = getattr(self, name)
        return [w for g in groups for w in g.words]


class QualifierKind(_Strict):
    """One qualifier kind. ``patterns`` are Python regexes; a named group ``value`` marks the value,
    otherwise the whole match is the value. ``values`` maps a canonical value to its other surface forms.
    ``persists: false`` marks values that constrain only the turn they are in (relative time: "today").
    ``exclude`` lists lower-case words that disqualify a match holding any of them as a word (a month
    or an event name caught by a capitalised-name pattern), so patterns stay readable.
    """

    kind: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    constrains: bool
    persists: bool = True
    case_sensitive: bool = False
    applies_to: list[str] = []
    patterns: list[str] = Field(min_length=1)
    values: dict[str, list[str]] = {}
    exclude: list[str] = []
    note: str | None = None

    @field_validator("exclude")
    @classmethod
    def _lower_words(cls, v: list[str]) -> list[str]:
        for w in v:
            if w != w.lower() or not w or w != w.strip() or " " in w:
                raise ValueError(f"exclude word {w!r} must be one lower-case word")
        return v

    @field_validator("patterns")
    @classmethod
    def _compile(cls, v: list[str]) -> list[str]:
        for p in v:
            try:
                re.compile(p)
            except re.error as exc:
                raise ValueError(f"invalid regex {p!r}: {exc}") from None
        return v


class QualifiersFile(_Strict):
    version: Literal[1]
    kinds: list[QualifierKind]

    @model_validator(mode="after")
    def _unique(self) -> QualifiersFile:
        names = [k.kind for k in self.kinds]
        for i, n in enumerate(names):
            if n in names[:i]:
                raise LocatedValueError(f"duplicate kind {n!r}", ("kinds", i, "kind"))
        return self


@dataclass(frozen=True)
class CompiledKind:
    """A :class:`QualifierKind` with compiled regexes and a surface -> canonical value map."""

    spec: QualifierKind
    regexes: tuple[re.Pattern[str], ...]
    canonical: dict[str, str]
    exclude: frozenset[str] = frozenset()
    anchors: tuple[Anchors | None, ...] = ()
    """Per regex, the strings a text it matches must hold (:func:`monitor.checks.literals.required_literals`):
    a text without them is not searched."""

    @property
    def kind(self) -> str:
        return self.spec.kind

    def canon(self, surface: str) -> str:
        """Canonical value of a matched surface (normalised; unknown surfaces are their own value)."""
        n = match_key(surface)
        return self.canonical.get(n, n)

    def surfaces(self, value: str) -> tuple[str, ...]:
        """All normalised surface forms of canonical ``value``."""
        return tuple(sorted({s for s, c in self.canonical.items() if c == value} | {value}))


@dataclass(frozen=True, slots=True)
class QualifierMatch:
    """A qualifier value in a text: ``kind``, canonical ``value``, surface ``text``, span ``[start, end)``."""

    kind: str
    value: str
    text: str
    start: int
    end: int
    constrains: bool


@dataclass
class RulesMemo:
    """What the checks derive from one :class:`Rules` object and keep on it (the rules are frozen)."""

    alias_index: AliasIndex | None = None
    qualifiers: dict[str, list[QualifierMatch]] = field(default_factory=dict)
    """Qualifier matches by text (``monitor.checks.qualifiers.qualifiers_in``)."""


@dataclass(frozen=True)
class Rules:
    """The loaded rules: validated file models, compiled qualifier kinds, and ``hash`` (16 hex).

    ``profile`` is the rewriter profile the check job learned from the store (``with_profile``); it is
    context like a record's peers, not part of the rules' identity, so it is not in ``hash``: each
    finding it changes says so in its evidence, with the figure.

    ``learned`` is the table the reviewers' verdicts taught (``with_learned``, ``monitor.checks.learned``):
    it *is* part of the identity, so ``hash`` covers it whenever it moves a grade; ``files_hash`` is the
    hash of the three files alone.
    """

    aliases: AliasesFile
    neutral: NeutralFile
    qualifiers: QualifiersFile
    hash: str
    kinds: tuple[CompiledKind, ...]
    neutral_words: frozenset[str]
    framing_words: frozenset[str]
    filler_words: frozenset[str]
    source: str = "<memory>"
    _memo: RulesMemo = field(default_factory=RulesMemo, compare=False, repr=False)
    profile: RewriterProfile | None = field(default=None, compare=False, repr=False)
    learned: LearnedTable | None = field(default=None, compare=False, repr=False)
    files_hash: str = ""

    def with_profile(self, profile: RewriterProfile | None) -> Rules:
        """These rules with ``profile`` for the checks (same hash, same compiled memo)."""
        return dataclasses.replace(self, profile=profile)

    def with_learned(self, table: LearnedTable | None) -> Rules:
        """These rules with the learned ``table`` (same compiled memo). ``hash`` is the files' hash when
        the table moves no grade (a fresh store: the rules as they were), else a sha256 (16 hex) over the
        files' hash and the table's."""
        base = self.files_hash or self.hash
        learned = table.hash if table is not None else ""
        combined = hashlib.sha256(f"{base}:{learned}".encode()).hexdigest()[:16] if learned else base
        return dataclasses.replace(self, learned=table, hash=combined, files_hash=base)


def build_rules(
    *, aliases: AliasesFile, neutral: NeutralFile, qualifiers: QualifiersFile, source: str = "<memory>"
) -> Rules:
    """Compile validated models into :class:`Rules` (tests use this to vary one file)."""
    kinds = []
    for k in qualifiers.kinds:
        flags = 0 if k.case_sensitive else re.IGNORECASE
        canonical: dict[str, str] = {}
        for value, syns in k.values.items():
            cv = match_key(value)
            canonical[cv] = cv
            for s in syns:
                canonical[match_key(s)] = cv
        regexes = tuple(re.compile(p, flags) for p in k.patterns)
        kinds.append(
            CompiledKind(
                k, regexes, canonical, frozenset(k.exclude), tuple(required_literals(rx) for rx in regexes)
            )
        )
    payload = json.dumps(
        {
            "aliases": aliases.model_dump(),
            "neutral": neutral.model_dump(),
            "qualifiers": qualifiers.model_dump(),
        },
        sort_keys=True,
    )
    digest = hashlib.sha256(payload.encode()).hexdigest()[:16]
    return Rules(
        aliases=aliases,
        neutral=neutral,
        qualifiers=qualifiers,
        hash=digest,
        files_hash=digest,
        kinds=tuple(kinds),
        neutral_words=frozenset(neutral.words("neutral")),
        framing_words=frozenset(neutral.words("framing")),
        filler_words=frozenset(neutral.words("fillers")),
        source=source,
    )


_MODELS: dict[str, type[BaseModel]] = {
    "aliases.yaml": AliasesFile,
    "neutral.yaml": NeutralFile,
    "qualifiers.yaml": QualifiersFile,
}


_Model = TypeVar("_Model", bound=BaseModel)


def _load_file(path: Path, model: type[_Model]) -> _Model:
    """Parse one YAML file and validate it; errors -> ``RulesError("<path>:<line>: reason")``."""
    label = f"rules/{path.name}" if path.parent == bundled_dir("rules") else str(path)
    try:
        # Decoded whole (not read_text): a decode error then holds every byte before the bad one, so
        # its line can be named.
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise RulesError(f"{label}:0: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        line, reason = utf8_fault(exc)
        raise RulesError(f"{label}:{line}: {reason}") from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 0
        problem = getattr(exc, "problem", None) or str(exc)
        # PyYAML marks where it noticed the fault, often the line after an unclosed bracket or quote;
        # the construct it was parsing (``context_mark``) is where the edit usually belongs.
        began = getattr(exc, "context_mark", None)
        context = getattr(exc, "context", None)
        if began is not None and context and began.line + 1 != line:
            problem += f" ({context} that starts at line {began.line + 1})"
        raise RulesError(f"{label}:{line}: invalid YAML: {problem}") from None
    if not isinstance(data, dict):
        raise RulesError(f"{label}:1: expected a mapping at the top level")
    dup = _duplicate_key(root)
    if dup is not None:
        key, first, again = dup
        # YAML keeps the last of two equal keys: a second "groups:" would silently replace the first list.
        raise RulesError(f"{label}:{again}: duplicate key {key!r} (first at line {first}); merge the two")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = tuple(err["loc"])
            cause = (err.get("ctx") or {}).get("error")
            if isinstance(cause, LocatedValueError):
                loc = loc + cause.loc
            where = ".".join(str(p) for p in loc) or "<top>"
            msg = err["msg"].removeprefix("Value error, ")
            problems.append(f"{label}:{_line_of(root, loc)}: {where}: {msg}")
        # Every problem of the file at once, one per line: fixing them should take one round.
        raise RulesError("\n".join(problems)) from None


def _duplicate_key(node: yaml.Node | None) -> tuple[str, int, int] | None:
    """The first key that appears twice in one mapping of ``node``: ``(key, first line, second line)``."""
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for k, v in node.value:
            line = k.start_mark.line + 1
            if isinstance(k, yaml.ScalarNode):
                if k.value in seen:
                    return k.value, seen[k.value], line
                seen[k.value] = line
            found = _duplicate_key(v)
            if found is not None:
                return found
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            found = _duplicate_key(item)
            if found is not None:
                return found
    return None


def _line_of(node: yaml.Node | None, loc: tuple[str | int, ...]) -> int:
    """1-based line of the YAML node at pydantic location ``loc`` (the deepest node found on the path)."""
    if node is None:
        return 1
    line = node.start_mark.line + 1
    for part in loc:
        nxt = None
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if k.value == str(part):
                    nxt = v
                    # an unknown key (extra="forbid") is reported at the key itself
                    line = k.start_mark.line + 1
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            nxt = node.value[part]
        if nxt is None:
            break
        node = nxt
        line = node.start_mark.line + 1
    return line


def load_rules(directory: Path | None = None) -> Rules:
    """Load ``aliases.yaml``, ``neutral.yaml`` and ``qualifiers.yaml`` from ``directory``.

    Default directory: the bundled rules (the repository's ``rules/``; see ``monitor.bundled``). Raises
    :class:`RulesError` (``file:line: reason``) on a missing, unparsable or invalid file.
    """
    d = Path(directory) if directory is not None else bundled_dir("rules")
    return build_rules(
        aliases=_load_file(d / "aliases.yaml", AliasesFile),
        neutral=_load_file(d / "neutral.yaml", NeutralFile),
        qualifiers=_load_file(d / "qualifiers.yaml", QualifiersFile),
        source=str(d),
    )


def validate_rules(directory: Path | None = None) -> list[str]:
    """Validate every rules file in ``directory``; return the error messages (empty when valid).

    Unlike :func:`load_rules` this checks all three files; each problem is one ``file:line: reason``.
    Default directory: the bundled rules, as for :func:`load_rules`.
    """
    d = Path(directory) if directory is not None else bundled_dir("rules")
    errors = []
    for name, model in _MODELS.items():
        try:
            _load_file(d / name, model)
        except RulesError as exc:
            errors.extend(str(exc).splitlines())
    return errors
