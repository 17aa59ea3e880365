"""OpenTelemetry traces as rewrite logs: the Collector ``file`` exporter's OTLP JSON (issue 17, part 1).

A team whose rewrite step is already traced (LangChain, LlamaIndex, the OpenTelemetry GenAI
instrumentations) points rewrite-monitor at the traces instead of writing log format v1. One line of such
a file is one ``TracesData`` in the OTLP JSON encoding (the OpenTelemetry protocol specification, "JSON
Protobuf Encoding": lowerCamelCase names, 64-bit integers as decimal strings, hex trace and span ids,
attribute values as ``AnyValue`` objects). Ingest recognises the line by its ``resourceSpans`` key, so a
file, a directory, stdin and a tailed live file all take it, with the same cursors and crash safety as
JSON Lines.

Two steps, both pure here (``monitor.ingest.store.batches`` stores and joins):

1. :func:`spans_of` turns a line into one ``span`` event per span (attributes decoded, the resource's
   beside them), stored like any event, keyed by trace and span id: nothing of the trace is lost, and a
   trace whose spans arrive over several lines or batches is assembled from the store.
2. :func:`map_trace` maps a trace's spans, once its root span has arrived (:func:`is_root`: no parent,
   or an entry span whose parent lives in another service), to a ``ctx_input``,
   a ``rewrite`` and, when a retriever span holds documents, a ``retrieve`` event of log format v1. The
   rewrite span is, in this order: the span with ``rewrite_monitor.step = "rewrite"``; a span whose name
   matches a pattern (default :data:`REWRITE_SPAN_NAMES`: LangChain's ``create_history_aware_retriever``
   names its chain ``chat_retriever_chain``); an LLM span whose prompt template variables are a question
   and a chat history (LlamaIndex's condense-question engines); else the LLM span whose output is the
   input of the next retriever span. Read from it, by convention:

   - **OTel GenAI** (semantic conventions for generative AI): ``gen_ai.input.messages`` /
     ``gen_ai.output.messages`` (``{role, parts: [{type, content}]}``, structured or as a JSON string;
     system instructions are not part of the conversation), ``gen_ai.conversation.id``,
     ``gen_ai.request.model`` / ``gen_ai.response.model``; a retrieval span's
     ``gen_ai.retrieval.query.text`` and ``gen_ai.retrieval.documents``;
   - **OpenInference** (Arize Phoenix): ``openinference.span.kind`` (LLM, CHAIN, RETRIEVER),
     ``input.value`` / ``output.value``, ``llm.input_messages.{i}.message.role|content``,
     ``llm.prompt_template.variables`` and ``.version``, ``llm.model_name``, ``session.id``,
     ``retrieval.documents.{i}.document.id|score|content``;
   - **rewrite_monitor.*** for what no convention names: ``request_id`` (default: the trace id),
     ``conv_id``, ``turn`` (default: the user turns received, plus one), ``client_turn_count``,
     ``digest``, ``prompt_version``. Without a client turn count or a digest the checks that need them
     are skipped, never passed.

A trace that cannot be mapped is quarantined with its trace id: ``no_rewrite_span``,
``ambiguous_rewrite_span`` (two candidates of the same rule), ``content_not_captured`` (the rewrite span
carries no message text: GenAI instrumentations record it only when asked to). A trace is mapped once:
a span that arrives after its trace was mapped is stored and changes nothing, and one that completes a
trace quarantined at its root (its rewrite span read after the root, across a rotation) maps it then
and resolves the row (``monitor.ingest.store.traces``).
"""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

SPAN = "span"
"""The event kind of one stored span."""
TRACES_KEY = "resourceSpans"
REWRITE_SPAN_NAMES: tuple[str, ...] = ("chat_retriever_chain",)
"""Default shell patterns (case-insensitive) of the rewrite span's name: LangChain's history-aware
retriever chain (``langchain.chains.history_aware_retriever``, ``run_name="chat_retriever_chain"``)."""
STEP_ATTRIBUTE = "rewrite_monitor.step"
_HEX_RE = re.compile(r"^[0-9a-fA-F]+$")
LLM_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
"""GenAI ``gen_ai.operation.name`` values of a model call."""


class TraceError(ValueError):
    """A trace that cannot be mapped: ``reason`` (a quarantine reason) and a message naming the trace."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


# -- decoding ------------------------------------------------------------------------------------------


def any_value(value: object) -> Any:
    """A Python value from an OTLP JSON ``AnyValue`` (``{"stringValue": ...}``, ``intValue`` as a decimal
    string or number, ``doubleValue``, ``boolValue``, ``arrayValue``, ``kvlistValue``, ``bytesValue`` as
    base64); an empty or unknown one is None."""
    if not isinstance(value, Mapping):
        return None
    if "stringValue" in value:
        return value["stringValue"]
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return None
    if "doubleValue" in value:
        v = value["doubleValue"]
        return float(v) if isinstance(v, int | float | str) and str(v) not in ("NaN", "Infinity") else None
    if "arrayValue" in value:
        return [any_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return attributes((value["kvlistValue"] or {}).get("values", []))
    if "bytesValue" in value:
        try:
            return base64.b64decode(value["bytesValue"]).hex()
        except (ValueError, TypeError):
            return None
    return None


def attributes(kvs: object) -> dict[str, Any]:
    """``[{"key": k, "value": AnyValue}, ...]`` as a dict (entries without a string key are skipped)."""
    out: dict[str, Any] = {}
    if isinstance(kvs, list):
        for kv in kvs:
            if isinstance(kv, Mapping) and isinstance(kv.get("key"), str):
                out[kv["key"]] = any_value(kv.get("value"))
    return out


def is_traces(obj: Mapping[str, Any]) -> bool:
    """Whether a decoded log line is an OTLP ``TracesData``."""
    return TRACES_KEY in obj


MAX_UNIX_NANO = 253_402_300_799_999_999_999
"""The last nanosecond of year 9999 UTC: a later time has no ``datetime`` (year 10000 is out of its range),
so a span time past it is refused as a malformed field, as log format v1 refuses such a ``ts``."""


def _nanos(value: object) -> int | None:
    try:
        n = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return None
    return n if 0 < n <= MAX_UNIX_NANO else None


def _hex_id(value: object, length: int) -> str | None:
    if isinstance(value, str) and len(value) == length and _HEX_RE.match(value) and set(value) != {"0"}:
        return value.lower()
    return None


def spans_of(obj: Mapping[str, Any], errors: list[str] | None = None) -> list[dict[str, Any]]:
    """The spans of one ``TracesData`` line as ``span`` event dicts, in the line's order.

    Each: ``event`` "span", ``trace_id`` (32 hex), ``span_id`` (16 hex), ``parent_span_id`` (or None),
    ``name``, ``kind``, ``start_unix_nano`` / ``end_unix_nano`` (ints), ``attributes``, ``resource``
    (the resource's attributes), ``scope`` ({name, version}), ``status``. A malformed span is described
    by the path of its bad field (``resourceSpans[0].scopeSpans[1].spans[2].traceId: ...``): appended to
    ``errors`` when a list is given, so the line's other spans are kept, else raised as ``ValueError``.
    A malformed ``resourceSpans`` or ``scopeSpans`` list always raises: no span of it can be read.
    """
    out: list[dict[str, Any]] = []
    resource_spans = obj.get(TRACES_KEY)
    if not isinstance(resource_spans, list):
        raise ValueError(f"{TRACES_KEY}: expected a list")
    for ri, rs in enumerate(resource_spans):
        where_r = f"{TRACES_KEY}[{ri}]"
        if not isinstance(rs, Mapping):
            raise ValueError(f"{where_r}: expected an object")
        resource = attributes((rs.get("resource") or {}).get("attributes"))
        scope_spans = rs.get("scopeSpans", [])
        if not isinstance(scope_spans, list):
            raise ValueError(f"{where_r}.scopeSpans: expected a list")
        for si, ss in enumerate(scope_spans):
            where_s = f"{where_r}.scopeSpans[{si}]"
            if not isinstance(ss, Mapping) or not isinstance(ss.get("spans", []), list):
                raise ValueError(f"{where_s}.spans: expected a list")
            scope: Mapping[str, Any] = ss["scope"] if isinstance(ss.get("scope"), Mapping) else {}
            for pi, sp in enumerate(ss.get("spans", [])):
                try:
                    out.append(_span(sp, f"{where_s}.spans[{pi}]", resource, scope))
                except ValueError as exc:
                    if errors is None:
                        raise
                    errors.append(str(exc))
    return out


def _span(sp: object, where: str, resource: dict[str, Any], scope: Mapping[str, Any]) -> dict[str, Any]:
    """One span as a ``span`` event dict; raises ``ValueError`` naming the bad field's path."""
    if not isinstance(sp, Mapping):
        raise ValueError(f"{where}: expected an object")
    trace_id = _hex_id(sp.get("traceId"), 32)
    if trace_id is None:
        raise ValueError(f"{where}.traceId: expected 32 hex digits, not all zero")
    span_id = _hex_id(sp.get("spanId"), 16)
    if span_id is None:
        raise ValueError(f"{where}.spanId: expected 16 hex digits, not all zero")
    parent = sp.get("parentSpanId") or None
    if parent is not None and _hex_id(parent, 16) is None:
        raise ValueError(f"{where}.parentSpanId: expected 16 hex digits")
    if isinstance(parent, str) and parent.lower() == span_id:
        raise ValueError(f"{where}.parentSpanId: the span's own spanId (a span cannot be its own parent)")
    start = _nanos(sp.get("startTimeUnixNano"))
    if start is None:
        raise ValueError(f"{where}.startTimeUnixNano: expected a positive integer of year 9999 or before")
    end = sp.get("endTimeUnixNano")
    if end not in (None, "", 0, "0") and _nanos(end) is None:
        raise ValueError(f"{where}.endTimeUnixNano: expected a positive integer of year 9999 or before")
    return {
        "event": SPAN,
        "trace_id": trace_id,
        "span_id": span_id,
        "parent_span_id": parent.lower() if isinstance(parent, str) else None,
        "name": str(sp.get("name") or ""),
        "kind": sp.get("kind"),
        "start_unix_nano": start,
        "end_unix_nano": _nanos(sp.get("endTimeUnixNano")) or start,
        "attributes": attributes(sp.get("attributes")),
        "resource": resource,
        "scope": {"name": scope.get("name"), "version": scope.get("version")},
        "status": sp.get("status") if isinstance(sp.get("status"), Mapping) else None,
    }


SERVER_KINDS = frozenset({2, 5, "SPAN_KIND_SERVER", "SPAN_KIND_CONSUMER"})
"""OTLP span kinds of a service's entry span (SERVER, CONSUMER), as numbers or enum names."""


def is_root(span: Mapping[str, Any], span_ids: set[str]) -> bool:
    """Whether ``span`` is where this service's part of the trace starts: it has no parent, or it is an
    entry span (SERVER or CONSUMER) whose parent is not among the trace's ``span_ids``: a gateway or a
    frontend passed the trace on (``traceparent``) and its span went to another backend."""
    parent = span.get("parent_span_id")
    return not parent or (span.get("kind") in SERVER_KINDS and parent not in span_ids)


def span_key(trace_id: str, span_id: str) -> str:
    """The event key of a stored span (sha256 of kind, trace and span id)."""
    return hashlib.sha256(f"{SPAN}\x1f{trace_id}\x1f{span_id}".encode()).hexdigest()


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _time(nanos: int) -> str:
    """ISO-8601 UTC to the millisecond of a span time in nanoseconds, in integer arithmetic: a float
    division rounds the last microseconds of year 9999 up into year 10000, which has no ``datetime``."""
    at = _EPOCH + timedelta(microseconds=nanos // 1000)
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


# -- mapping ----------------------------------------------------------------------------------------------


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


def _json(value: object) -> Any:
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _text_of(value: object) -> str | None:
    """Text of a message content: a string, or the text parts of a list of parts."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = [_text_of(p) for p in value]
        joined = "\n".join(t for t in texts if t)
        return joined or None
    if isinstance(value, Mapping):
        content, text = value.get("content"), value.get("text")
        if value.get("type") in (None, "text") and isinstance(content, str):
            return content
        if isinstance(text, str):
            return text
    return None


ROLE_ALIASES = {"human": "user", "ai": "assistant", "humanmessage": "user", "aimessage": "assistant"}


def _role(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    r = value.strip().lower()
    return ROLE_ALIASES.get(r, r) or None


def _message(value: object) -> tuple[str, str] | None:
    """``(role, content)`` from the message shapes the conventions and LangChain serialise: GenAI
    ``{role, parts}``, ``{role, content}``, ``{type: human|ai, content}``, LangChain's serialised
    ``{id: [..., "HumanMessage"], kwargs: {content}}``, a ``[role, content]`` pair."""
    if isinstance(value, list | tuple) and len(value) == 2 and isinstance(value[1], str):
        role = _role(value[0])
        return (role, value[1]) if role else None
    if not isinstance(value, Mapping):
        return None
    if isinstance(value.get("kwargs"), Mapping):
        ids = value.get("id") if isinstance(value.get("id"), list) else []
        role = _role(ids[-1] if ids else value["kwargs"].get("type"))
        text = _text_of(value["kwargs"].get("content"))
        return (role, text) if role and text is not None else None
    role = _role(value.get("role") or value.get("type"))
    text = _text_of(value.get("parts") if "parts" in value else value.get("content"))
    return (role, text) if role and text is not None else None


def _messages(value: object) -> list[tuple[str, str]] | None:
    value = _json(value)
    if not isinstance(value, list):
        return None
    out = [m for m in (_message(v) for v in value) if m is not None]
    return out


def _flat_messages(a: Mapping[str, Any], prefix: str) -> list[tuple[str, str]]:
    """OpenInference's flattened ``{prefix}.{i}.message.role|content`` attributes, in index order."""
    found: dict[int, dict[str, str]] = {}
    pat = re.compile(rf"^{re.escape(prefix)}\.(\d+)\.message\.(role|content)$")
    for k, v in a.items():
        m = pat.match(k)
        if m and isinstance(v, str):
            found.setdefault(int(m.group(1)), {})[m.group(2)] = v
    out = []
    for i in sorted(found):
        role = _role(found[i].get("role"))
        if role and "content" in found[i]:
            out.append((role, found[i]["content"]))
    return out


HISTORY_LINE_RE = re.compile(r"^(user|assistant|human|ai|system)\s*:\s?(.*)$", re.IGNORECASE)


def _history_text(value: str) -> list[tuple[str, str]]:
    """A chat history rendered as ``role: text`` lines (LlamaIndex's condense prompt); a line without a
    role continues the message before it."""
    out: list[list[str]] = []
    for line in value.splitlines():
        m = HISTORY_LINE_RE.match(line.strip())
        if m:
            out.append([_role(m.group(1)) or "user", m.group(2)])
        elif out:
            out[-1][1] += "\n" + line
    return [(r, t.strip()) for r, t in out if t.strip()]


def _history(value: object) -> list[tuple[str, str]]:
    value = _json(value)
    if isinstance(value, str):
        return _history_text(value)
    return _messages(value) or []


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


def _norm(text: object) -> str:
    return " ".join(str(text).split()).casefold() if isinstance(text, str) else ""


def _template_vars(a: Mapping[str, Any]) -> Mapping[str, Any]:
    got = _json(a.get("llm.prompt_template.variables"))
    return got if isinstance(got, Mapping) else {}


def _output_text(a: Mapping[str, Any]) -> str | None:
    """The text an LLM span produced: GenAI output messages, OpenInference output messages or value."""
    msgs = _messages(a.get("gen_ai.output.messages"))
    if msgs:
        return msgs[-1][1]
    flat = _flat_messages(a, "llm.output_messages")
    if flat:
        return flat[-1][1]
    out = _json(a.get("output.value"))
    return out if isinstance(out, str) else None


def _retriever_query(a: Mapping[str, Any]) -> str | None:
    q = a.get("gen_ai.retrieval.query.text")
    if isinstance(q, str):
        return q
    value = _json(a.get("input.value"))
    if isinstance(value, Mapping):
        for key in ("query", "input", "query_str"):
            if isinstance(value.get(key), str):
                return str(value[key])
        return None
    return value if isinstance(value, str) else None


def rewrite_span(
    spans: Sequence[Mapping[str, Any]], names: Sequence[str] = REWRITE_SPAN_NAMES
) -> Mapping[str, Any]:
    """The trace's rewrite span by the rules of the module doc; raises :class:`TraceError`."""
    trace = spans[0]["trace_id"]
    ordered = sorted(spans, key=lambda s: s["start_unix_nano"])
    rules: list[tuple[str, list[Mapping[str, Any]]]] = [
        (
            f"{STEP_ATTRIBUTE} = rewrite",
            [s for s in ordered if s["attributes"].get(STEP_ATTRIBUTE) == "rewrite"],
        ),
        (
            "a rewrite span name",
            [s for s in ordered if any(fnmatch.fnmatch(s["name"].lower(), p.lower()) for p in names)],
        ),
        (
            "a condense prompt (question and chat_history)",
            [
                s
                for s in ordered
                if _kind(s) == "llm" and {"question", "chat_history"} <= set(_template_vars(s["attributes"]))
            ],
        ),
    ]
    for rule, found in rules:
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise TraceError(
                "ambiguous_rewrite_span",
                f"trace {trace}: {len(found)} spans match {rule} ("
                + ", ".join(repr(s["name"]) for s in found[:4])
                + ")",
            )
    retrievers = [s for s in ordered if _kind(s) == "retriever"]
    matches = []
    for s in ordered:
        if _kind(s) != "llm":
            continue
        out = _norm(_output_text(s["attributes"]))
        nxt = next((r for r in retrievers if r["start_unix_nano"] >= s["start_unix_nano"]), None)
        if out and nxt is not None and out == _norm(_retriever_query(nxt["attributes"])):
            matches.append(s)
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise TraceError(
            "ambiguous_rewrite_span",
            f"trace {trace}: {len(matches)} LLM spans whose output is the next retriever span's input",
        )
    raise TraceError(
        "no_rewrite_span",
        f"trace {trace}: no span marked {STEP_ATTRIBUTE}, named like {', '.join(names) or '(no pattern)'}, "
        "with a condense prompt, or whose output the next retriever span searched for",
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
        got = _json(a.get("gen_ai.retrieval.documents"))
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


def span_conversation(a: Mapping[str, Any]) -> tuple[list[tuple[str, str]], str | None, str] | None:
    """``(history, latest, shape)`` read from a rewrite span's own attributes: the user and assistant
    turns before the latest user message, the latest message, and which convention held them
    (``genai``: GenAI input messages; ``condense``: prompt template variables question and chat_history;
    ``chain``: a chain's ``input.value`` with input and chat_history; ``messages``: OpenInference's
    flattened input messages). None when the span holds none of them."""
    genai = _messages(a.get("gen_ai.input.messages"))
    if genai:
        convo = [m for m in genai if m[0] in ("user", "assistant")]
        last = max((i for i, m in enumerate(convo) if m[0] == "user"), default=None)
        return (convo[:last], convo[last][1], "genai") if last is not None else (convo, None, "genai")
    variables = _template_vars(a)
    if {"question", "chat_history"} <= set(variables):
        latest = variables["question"] if isinstance(variables["question"], str) else None
        return _history(variables["chat_history"]), latest, "condense"
    chain_input = _json(a.get("input.value"))
    if isinstance(chain_input, Mapping) and isinstance(chain_input.get("input"), str):
        return _history(chain_input.get("chat_history")), chain_input["input"], "chain"
    flat = [m for m in _flat_messages(a, "llm.input_messages") if m[0] in ("user", "assistant")]
    if flat:
        last = max((i for i, m in enumerate(flat) if m[0] == "user"), default=None)
        return (flat[:last], flat[last][1], "messages") if last is not None else (flat, None, "messages")
    return None


def span_history(a: Mapping[str, Any]) -> list[tuple[str, str]] | None:
    """The message history a rewrite span's attributes hold (:func:`span_conversation`), or None."""
    got = span_conversation(a)
    return got[0] if got is not None else None


def _int_attr(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def map_trace(spans: Sequence[Mapping[str, Any]], names: Sequence[str] = REWRITE_SPAN_NAMES) -> Mapped:
    """The log format v1 events of a trace whose root span has arrived (see the module doc).

    ``spans``: the trace's ``span`` event dicts (:func:`spans_of`), any order. Raises
    :class:`TraceError` when no root span is among them, or the trace cannot be mapped.
    """
    if not spans:
        raise ValueError("a trace has at least one span")
    trace = spans[0]["trace_id"]
    ids = {s["span_id"] for s in spans}
    roots = [s for s in spans if is_root(s, ids)]
    if not roots:
        raise TraceError("no_rewrite_span", f"trace {trace}: no root span")
    root = min(roots, key=lambda s: s["start_unix_nano"])
    rw = rewrite_span(spans, names)
    a = rw["attributes"]
    below = _children(spans, rw["span_id"])
    conversation = span_conversation(a)
    history, latest, shape = conversation if conversation is not None else ([], None, "")
    query: str | None = None
    if shape == "chain":
        retriever = next((s for s in below if _kind(s) == "retriever"), None)
        query = _retriever_query(retriever["attributes"]) if retriever is not None else None
        if query is None:
            llm = next((s for s in below if _kind(s) == "llm"), None)
            query = _output_text(llm["attributes"]) if llm is not None else None
        if query is None:
            out = _json(a.get("output.value"))
            query = out if isinstance(out, str) else None
    elif shape:
        query = _output_text(a)
    if latest is None or query is None:
        missing = "the user's message" if latest is None else "the rewritten query"
        raise TraceError(
            "content_not_captured",
            f"trace {trace}: the rewrite span {rw['name']!r} carries no text of {missing} "
            "(is message content capture on in the instrumentation?)",
        )
    ordered = [root, rw, *below, *spans]
    conv_id = _first(ordered, "rewrite_monitor.conv_id", "gen_ai.conversation.id", "session.id") or trace
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
    otel = {"trace_id": trace, "span_id": rw["span_id"]}
    ctx: dict[str, Any] = {
        "event": "ctx_input",
        "ts": _time(rw["start_unix_nano"]),
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
        "ts": _time(rw["end_unix_nano"]),
        "conv_id": str(conv_id),
        "request_id": str(request_id),
        "turn": turn,
        "latest": latest,
        "query": query,
        "rewritten": _norm(query) != _norm(latest),
        "otel": otel,
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
                    "ts": _time(s["end_unix_nano"]),
                    "conv_id": str(conv_id),
                    "request_id": str(request_id),
                    "hits": hits,
                    "otel": {"trace_id": trace, "span_id": s["span_id"]},
                }
            break
    return Mapped(ctx, rewrite, retrieve, root)
