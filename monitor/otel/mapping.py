"""OpenTelemetry traces mapped to log format v1 events (issue 17, part 1; by structure since issue 33).

A team whose rewrite step is already traced (LangChain and LlamaIndex through OpenInference, or the
OpenTelemetry GenAI instrumentations) points rewrite-monitor at the traces instead of writing log format
v1. Ingest stores every span (:mod:`monitor.otel.spans`); once a trace's root span has arrived
(:func:`monitor.otel.spans.is_root`), :func:`map_trace` maps it to a ``ctx_input``, a ``rewrite`` and,
when a retriever span holds documents, a ``retrieve`` event.

The rewrite span is found by what the trace does, not by what a framework names it
(:func:`rewrite_span`), in this order:

1. the span with ``rewrite_monitor.step = "rewrite"`` (the app says so);
2. a span whose name matches a pattern of setting ``otel_rewrite_span_names`` (none by default);
3. the model call whose output is the query of a retriever span that starts after it: the rewrite is
   what the retriever searched for (the outermost such call when a framework nests one in another, as
   LlamaIndex's ``predict`` wraps its ``chat``);
4. a model call holding a condense prompt: template variables of a question and a chat history, or a
   rendered condense template (:mod:`monitor.otel.shapes`): a trace of GenAI instrumentation alone has
   no retriever span, each model call being its own trace.

A trace with none of these is not a rewrite (a first turn, an answer call): it is counted, not
quarantined (:data:`NOT_A_REWRITE`). The conversation is read by :func:`monitor.otel.shapes.conversation`
(template variables on the rewrite span or its ancestors first, never the model's last message when a
template holds the user's). Conventions read:

- **OTel GenAI**: ``gen_ai.input.messages`` / ``gen_ai.output.messages``, ``gen_ai.conversation.id``,
  ``gen_ai.request.model`` / ``gen_ai.response.model``, ``gen_ai.operation.name``; a retrieval span's
  ``gen_ai.retrieval.query.text`` and ``gen_ai.retrieval.documents``;
- **OpenInference**: ``openinference.span.kind`` (LLM, RETRIEVER, CHAIN), ``input.value`` /
  ``output.value``, ``llm.input_messages.{i}.message.*``, ``llm.prompts``,
  ``llm.prompt_template.variables`` and ``.version``, ``llm.model_name``, ``session.id``,
  ``retrieval.documents.{i}.document.id|score``;
- **rewrite_monitor.*** for what no convention names: ``request_id`` (default: the trace id),
  ``conv_id``, ``turn`` (default: the user turns received, plus one), ``client_turn_count``,
  ``digest``, ``prompt_version``. Without a client turn count or a digest the checks that need them
  are skipped, never passed.

Each mapped event carries ``otel``: ``trace_id``, ``span_id`` (the rewrite span), ``read_from`` (the
conversation's shape) and, when no conversation id was found, ``conv_id_from: "trace_id"`` (the record's
conversation is then the one trace: its earlier turns cannot be told apart from another conversation's).
A trace that cannot be mapped is quarantined with its trace id: ``ambiguous_rewrite_span`` (two
candidates of the same rule), ``content_not_captured`` (no text of the message or the query: GenAI
instrumentations record it only when asked to).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from monitor.otel.messages import decoded, flat_messages, messages_of
from monitor.otel.shapes import (
    CONDENSE_TEMPLATES,
    Conversation,
    conversation,
    rendered,
    variables_of,
)
from monitor.otel.spans import is_root, span_time

REWRITE_SPAN_NAMES: tuple[str, ...] = ()
"""Default shell patterns (case-insensitive) of the rewrite span's name: none, the structure finds it
(a pattern such as ``chat_retriever_chain`` is for a trace whose structure does not)."""
STEP_ATTRIBUTE = "rewrite_monitor.step"
LLM_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
"""GenAI ``gen_ai.operation.name`` values of a model call."""
NOT_A_REWRITE = "not_a_rewrite_trace"
"""The reason of a trace with no rewrite in it: counted as skipped, never quarantined."""
NO_MESSAGE_TEXT = "no_message_text"
"""The reason of a trace whose model calls carry no message text at all, so that no rewrite can be told
in it: counted as skipped like :data:`NOT_A_REWRITE`, under its own name, because a count of them says
that content capture is off (GenAI instrumentations record message text only when asked to:
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``)."""
SKIP_REASONS = frozenset({NOT_A_REWRITE, NO_MESSAGE_TEXT})
"""The :class:`TraceError` reasons that are counted, not quarantined."""


class TraceError(ValueError):
    """A trace that cannot be mapped: ``reason`` (a quarantine reason, or one of :data:`SKIP_REASONS`)
    and a message naming the trace."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True, slots=True)
class MappingRules:
    """What the user configures of the mapping: ``span_names`` (setting ``otel_rewrite_span_names``) and
    ``condense_templates`` (the built-ins, then setting ``otel_condense_templates``)."""

    span_names: tuple[str, ...] = REWRITE_SPAN_NAMES
    condense_templates: tuple[str, ...] = CONDENSE_TEMPLATES


DEFAULT_RULES = MappingRules()


@dataclass(frozen=True, slots=True)
class Mapped:
    """The log format v1 events of one trace (``retrieve`` None when no retriever span held documents)."""

    ctx_input: dict[str, Any]
    rewrite: dict[str, Any]
    retrieve: dict[str, Any] | None
    root: Mapping[str, Any]


def _kind(span: Mapping[str, Any]) -> str:
    """The span's role: "llm", "retriever", "chain" or "" (OpenInference kind, else GenAI operation)."""
    a = span["attributes"]
    oi = str(a.get("openinference.span.kind") or "").upper()
    if oi in ("LLM", "RETRIEVER", "CHAIN"):
        return oi.lower()
    op = a.get("gen_ai.operation.name")
    if op in LLM_OPERATIONS:
        return "llm"
    if op in ("retrieval", "retrieve") or "gen_ai.retrieval.query.text" in a:
        return "retriever"
    return ""


def _children(spans: Sequence[Mapping[str, Any]], span_id: str) -> list[Mapping[str, Any]]:
    """Every descendant of ``span_id``, in start order, each once: a span is visited at most once, so a
    cycle of parent links (A's parent B, B's parent A: a malformed trace) ends the walk instead of
    growing it without bound."""
    by_parent: dict[str | None, list[Mapping[str, Any]]] = {}
    for s in spans:
        by_parent.setdefault(s["parent_span_id"], []).append(s)
    out, todo, seen = [], [span_id], {span_id}
    while todo:
        for child in by_parent.get(todo.pop(), []):
            if child["span_id"] in seen:
                continue
            seen.add(child["span_id"])
            out.append(child)
            todo.append(child["span_id"])
    return sorted(out, key=lambda s: s["start_unix_nano"])


def _ancestors(spans: Sequence[Mapping[str, Any]], span: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The span's ancestors, nearest first; a cycle of parent links ends the walk."""
    by_id = {s["span_id"]: s for s in spans}
    out, seen = [], {span["span_id"]}
    parent = span.get("parent_span_id")
    while parent in by_id and parent not in seen:
        seen.add(parent)
        out.append(by_id[parent])
        parent = by_id[parent].get("parent_span_id")
    return out


def _norm(text: object) -> str:
    return " ".join(str(text).split()).casefold() if isinstance(text, str) else ""


def _output_text(a: Mapping[str, Any]) -> str | None:
    """The text a model call produced: GenAI output messages, OpenInference output messages or value."""
    msgs = messages_of(a.get("gen_ai.output.messages"))
    if msgs:
        return msgs[-1][1]
    flat = flat_messages(a, "llm.output_messages")
    if flat:
        return flat[-1][1]
    out = decoded(a.get("output.value"))
    return out if isinstance(out, str) else None


def _retriever_query(a: Mapping[str, Any]) -> str | None:
    q = a.get("gen_ai.retrieval.query.text")
    if isinstance(q, str):
        return q
    value = decoded(a.get("input.value"))
    if isinstance(value, Mapping):
        for key in ("query", "input", "query_str"):
            if isinstance(value.get(key), str):
                return str(value[key])
        return None
    return value if isinstance(value, str) else None


def _outermost(spans: Sequence[Mapping[str, Any]], found: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """``found`` less the spans nested in another of them (LlamaIndex's ``predict`` span wraps the
    ``chat`` span of the same call, both with the same output)."""
    ids = {s["span_id"] for s in found}
    return [s for s in found if not any(a["span_id"] in ids for a in _ancestors(spans, s))]


def _condense_call(span: Mapping[str, Any], templates: Sequence[str]) -> bool:
    a = span["attributes"]
    v = variables_of(a) if "llm.prompt_template.variables" in a else {}
    return ("chat_history" in v and any(isinstance(v.get(k), str) for k in ("question", "input"))) or (
        rendered(a, templates) is not None
    )


def rewrite_span(
    spans: Sequence[Mapping[str, Any]], rules: MappingRules = DEFAULT_RULES
) -> tuple[Mapping[str, Any], str]:
    """The trace's rewrite span and the rule that found it (the module doc's order: "step", "name",
    "retriever_input", "condense_prompt"). Raises :class:`TraceError`: ``ambiguous_rewrite_span`` when
    a rule finds more than one, :data:`NO_MESSAGE_TEXT` when none finds any and no model call of the
    trace carries text, else :data:`NOT_A_REWRITE`."""
    trace = spans[0]["trace_id"]
    ordered = sorted(spans, key=lambda s: s["start_unix_nano"])
    llms = [s for s in ordered if _kind(s) == "llm"]
    retrievers = [s for s in ordered if _kind(s) == "retriever"]
    feeding = []
    for s in llms:
        out = _norm(_output_text(s["attributes"]))
        if out and any(
            r["start_unix_nano"] >= s["start_unix_nano"] and out == _norm(_retriever_query(r["attributes"]))
            for r in retrievers
        ):
            feeding.append(s)
    found_by: list[tuple[str, str, list[Mapping[str, Any]]]] = [
        (
            "step",
            f"{STEP_ATTRIBUTE} = rewrite",
            [s for s in ordered if s["attributes"].get(STEP_ATTRIBUTE) == "rewrite"],
        ),
        (
            "name",
            "a rewrite span name",
            [
                s
                for s in ordered
                if any(fnmatch.fnmatch(s["name"].lower(), p.lower()) for p in rules.span_names)
            ],
        ),
        ("retriever_input", "a model call whose output a retriever searched for", _outermost(spans, feeding)),
        (
            "condense_prompt",
            "a model call with a condense prompt",
            _outermost(spans, [s for s in llms if _condense_call(s, rules.condense_templates)]),
        ),
    ]
    for how, rule, found in found_by:
        if len(found) == 1:
            return found[0], how
        if len(found) > 1:
            raise TraceError(
                "ambiguous_rewrite_span",
                f"trace {trace}: {len(found)} spans match {rule} ("
                + ", ".join(repr(s["name"]) for s in found[:4])
                + ")",
            )
    if llms and not any(_has_text(s["attributes"]) for s in llms):
        raise TraceError(
            NO_MESSAGE_TEXT,
            f"trace {trace}: its {len(llms)} model call(s) carry no message text (is content capture on?)",
        )
    raise TraceError(
        NOT_A_REWRITE,
        f"trace {trace}: no span marked {STEP_ATTRIBUTE}, named like a rewrite span, whose output a "
        "retriever searched for, or with a condense prompt",
    )


TEXT_ATTRIBUTES = (
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "llm.prompts",
    "llm.prompt_template.variables",
    "input.value",
    "output.value",
)
"""The attributes in which the conventions record what a model call was sent or returned; with the
flattened ``llm.input_messages.*`` / ``llm.output_messages.*``, what content capture writes."""


def _has_text(a: Mapping[str, Any]) -> bool:
    """Whether a model call's attributes hold any text of what it was sent or returned (by which
    attributes are there: nothing is parsed)."""
    return any(k in a for k in TEXT_ATTRIBUTES) or any(
        k.startswith(("llm.input_messages.", "llm.output_messages.")) for k in a
    )


def _first(spans: Iterable[Mapping[str, Any]], *keys: str) -> Any:
    for s in spans:
        for k in keys:
            v = s["attributes"].get(k)
            if v not in (None, ""):
                return v
            v = s["resource"].get(k)
            if v not in (None, ""):
                return v
    return None


def _hits(a: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The documents of a retriever span: OpenInference's flattened ``retrieval.documents.{i}.document.*``,
    or GenAI's ``gen_ai.retrieval.documents`` (a list of ``{id, score, ...}``, or its JSON)."""
    found: dict[int, dict[str, Any]] = {}
    pat = re.compile(r"^retrieval\.documents\.(\d+)\.document\.(id|score|content|metadata)$")
    for k, v in a.items():
        m = pat.match(k)
        if m:
            found.setdefault(int(m.group(1)), {})[m.group(2)] = v
    docs: list[Mapping[str, Any]] = [found[i] for i in sorted(found)]
    if not docs:
        got = decoded(a.get("gen_ai.retrieval.documents"))
        docs = [d for d in got if isinstance(d, Mapping)] if isinstance(got, list) else []
    hits = []
    for rank, d in enumerate(docs, 1):
        doc_id = d.get("id") or d.get("document_id")
        if doc_id in (None, ""):
            continue
        hit: dict[str, Any] = {"rank": rank, "doc_id": str(doc_id)}
        score = d.get("score")
        if isinstance(score, int | float) and not isinstance(score, bool):
            hit["score"] = float(score)
        hits.append(hit)
    return hits


def _int_attr(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def _query_below(span: Mapping[str, Any], below: Sequence[Mapping[str, Any]]) -> str | None:
    """The rewritten query of a rewrite span that is not itself a model call (a chain the app marked or
    named): the first retriever's query below it, else the first model call's output below it, else the
    chain's own output."""
    retriever = next((s for s in below if _kind(s) == "retriever"), None)
    query = _retriever_query(retriever["attributes"]) if retriever is not None else None
    if query is None:
        llm = next((s for s in below if _kind(s) == "llm"), None)
        query = _output_text(llm["attributes"]) if llm is not None else None
    if query is None:
        out = decoded(span["attributes"].get("output.value"))
        query = out if isinstance(out, str) else None
    return query


def map_trace(spans: Sequence[Mapping[str, Any]], rules: MappingRules = DEFAULT_RULES) -> Mapped:
    """The log format v1 events of a trace whose root span has arrived (see the module doc).

    ``spans``: the trace's ``span`` event dicts (:func:`monitor.otel.spans.spans_of`), any order. Raises
    :class:`TraceError` when no root span is among them, the trace holds no rewrite, or it cannot be
    mapped.
    """
    if not spans:
        raise ValueError("a trace has at least one span")
    trace = spans[0]["trace_id"]
    ids = {s["span_id"] for s in spans}
    roots = [s for s in spans if is_root(s, ids)]
    if not roots:
        raise TraceError(NOT_A_REWRITE, f"trace {trace}: no root span")
    root = min(roots, key=lambda s: s["start_unix_nano"])
    rw, _how = rewrite_span(spans, rules)
    below = _children(spans, rw["span_id"])
    convo: Conversation | None
    if _kind(rw) == "llm":
        convo = conversation(rw, _ancestors(spans, rw), rules.condense_templates)
        query = _output_text(rw["attributes"])
    else:
        # a chain the app marked or named: the model call inside it, if any, holds the prompt
        inner = next((s for s in below if _kind(s) == "llm"), None)
        convo = conversation(
            inner if inner is not None else rw, _ancestors(spans, inner or rw), rules.condense_templates
        )
        query = _query_below(rw, below)
    latest = convo.latest if convo is not None else None
    if latest is None or query is None:
        missing = "the user's message" if latest is None else "the rewritten query"
        raise TraceError(
            "content_not_captured",
            f"trace {trace}: the rewrite span {rw['name']!r} carries no text of {missing} "
            "(is message content capture on in the instrumentation?)",
        )
    assert convo is not None  # latest is not None
    history = convo.history
    ordered = [root, rw, *below, *spans]
    conv_attr = _first(ordered, "rewrite_monitor.conv_id", "gen_ai.conversation.id", "session.id")
    conv_id = conv_attr or trace
    request_id = _first(ordered, "rewrite_monitor.request_id") or trace
    turn = _int_attr(_first([rw, root], "rewrite_monitor.turn"))
    if turn is None:
        turn = sum(1 for r, _ in history if r == "user") + 1
    model = _first([rw, *below], "gen_ai.response.model", "gen_ai.request.model", "llm.model_name")
    prompt_version = _first(
        [rw, *below, root], "rewrite_monitor.prompt_version", "llm.prompt_template.version"
    )
    roles = {
        "user": sum(1 for r, _ in history if r == "user"),
        "assistant": sum(1 for r, _ in history if r == "assistant"),
    }
    otel: dict[str, Any] = {"trace_id": trace, "span_id": rw["span_id"], "read_from": convo.shape}
    if not conv_attr:
        otel["conv_id_from"] = "trace_id"
    ctx: dict[str, Any] = {
        "event": "ctx_input",
        "ts": span_time(rw["start_unix_nano"]),
        "conv_id": str(conv_id),
        "request_id": str(request_id),
        "turn": turn,
        "n_messages": len(history),
        "roles": roles,
        "messages": [{"role": r, "content": c} for r, c in history],
        "otel": otel,
    }
    ctc = _int_attr(_first([rw, root], "rewrite_monitor.client_turn_count"))
    if ctc is not None:
        ctx["client_turn_count"] = ctc
    digest = _first([rw, root], "rewrite_monitor.digest")
    if isinstance(digest, str):
        ctx["digest"] = digest
    rewrite: dict[str, Any] = {
        "event": "rewrite",
        "ts": span_time(rw["end_unix_nano"]),
        "conv_id": str(conv_id),
        "request_id": str(request_id),
        "turn": turn,
        "latest": latest,
        "query": query,
        "rewritten": _norm(query) != _norm(latest),
        "otel": dict(otel),
    }
    if isinstance(model, str):
        rewrite["model"] = model[:255]
    if isinstance(prompt_version, str):
        rewrite["prompt_version"] = prompt_version[:255]
    latency = (rw["end_unix_nano"] - rw["start_unix_nano"]) / 1e6
    if latency >= 0:
        rewrite["latency_ms"] = round(latency, 3)
    retrieve = None
    for s in sorted(spans, key=lambda s: s["start_unix_nano"]):
        if _kind(s) == "retriever" and s["start_unix_nano"] >= rw["start_unix_nano"]:
            hits = _hits(s["attributes"])
            if hits:
                retrieve = {
                    "event": "retrieve",
                    "ts": span_time(s["end_unix_nano"]),
                    "conv_id": str(conv_id),
                    "request_id": str(request_id),
                    "hits": hits,
                    "otel": {"trace_id": trace, "span_id": s["span_id"]},
                }
            break
    return Mapped(ctx, rewrite, retrieve, root)
