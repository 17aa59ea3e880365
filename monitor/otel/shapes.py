"""Where each framework's trace holds the conversation a rewrite was made from (issue 33, part 2).

The rewrite span (:func:`monitor.otel.mapping.rewrite_span`) is a model call; what it was asked to rewrite
is read by the first of these shapes that holds it:

1. ``variables``: the nearest span, from the rewrite span up through its ancestors, whose prompt template
   variables (OpenInference ``llm.prompt_template.variables``) or chain input (``input.value`` as JSON)
   name the latest message (:data:`LATEST_KEYS`) beside a :data:`HISTORY_KEY`. LangChain's
   ``create_history_aware_retriever`` and LCEL chains pass ``input`` and ``chat_history`` down the chain;
   LlamaIndex's ``CondenseQuestionChatEngine`` gives its condense call ``question`` and ``chat_history``.
   Read here first because a prompt may put its own instruction after the user's message (LangChain's
   v0.1 quickstart ends on "Given the above conversation, generate a search query ..."): the last user
   message of a rendered template is not the latest message.
2. ``rendered_prompt``: the call's prompt text (its last user message, or OpenInference's ``llm.prompts``)
   matched against a condense template (:data:`CONDENSE_TEMPLATES`, plus the user's own: setting
   ``otel_condense_templates``): LlamaIndex's ``CondensePlusContextChatEngine`` passes no variables, and a
   trace of OpenTelemetry GenAI instrumentation alone (``opentelemetry-instrumentation-openai-v2``) holds
   only the rendered text.
3. ``messages``: the call's input messages (GenAI ``gen_ai.input.messages``, OpenInference's flattened
   ``llm.input_messages``): the last user message is the latest, the user and assistant messages before
   it the history (system instructions are not part of the conversation). Used only when no template was
   found by 1 or 2.

Pure: spans in, :class:`Conversation` out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from monitor.otel.messages import Message, decoded, flat_messages, history_of, messages_of

LATEST_KEYS = ("input", "question")
"""Template variables holding the latest message: LangChain's ``{input}``, LlamaIndex's ``{question}``."""
HISTORY_KEY = "chat_history"
"""The template variable holding the history (both frameworks)."""

CONDENSE_TEMPLATES: tuple[str, ...] = (
    "<Chat History>\n{chat_history}\n\n<Follow Up Message>\n{question}\n\n<Standalone question>",
    "Chat History:\n{chat_history}\nFollow Up Input: {question}\nStandalone question:",
)
"""The tails of the condense prompts the frameworks ship, from the history on (the instruction before
them varies by version and is not matched): LlamaIndex ``CondenseQuestionChatEngine``'s
``DEFAULT_TEMPLATE`` (``llama_index.core.chat_engine.condense_question``); LlamaIndex
``CondensePlusContextChatEngine``'s ``DEFAULT_CONDENSE_PROMPT_TEMPLATE``, which LangChain's
``CONDENSE_QUESTION_PROMPT`` (``langchain.chains.conversational_retrieval.prompts``) shares. Matched by
:func:`template_pattern`: case and whitespace free, anchored at the prompt's end."""


@dataclass(frozen=True, slots=True)
class Conversation:
    """What a rewrite was asked to rewrite: ``history`` ((role, text) user and assistant turns before the
    latest message), ``latest`` (None when the span holds no text of it), ``shape`` (the module doc's
    name of where it was read) and ``span_id`` (the span it was read from)."""

    history: list[Message]
    latest: str | None
    shape: str
    span_id: str


_PLACEHOLDER_RE = re.compile(r"\{(\w+)\}")


@lru_cache(maxsize=64)
def template_pattern(template: str) -> re.Pattern[str]:
    """A condense template (text with ``{chat_history}`` and ``{question}``, other ``{name}`` placeholders
    allowed) as a pattern searched in a rendered prompt: literal text matched word by word, any run of
    whitespace standing for any other, case ignored, ending at the prompt's end; the history is read as
    long as it can be (a turn may hold the separator), the follow-up as the rest. Raises ``ValueError``
    when the template lacks either placeholder or has no text between them."""
    names = _PLACEHOLDER_RE.findall(template)
    if HISTORY_KEY not in names or "question" not in names:
        raise ValueError(f"a condense template needs {{{HISTORY_KEY}}} and {{question}}: {template[:80]!r}")
    h, q = template.index("{" + HISTORY_KEY + "}"), template.index("{question}")
    between = template[min(h, q) : max(h, q)].replace("{" + HISTORY_KEY + "}", "").replace("{question}", "")
    if not _PLACEHOLDER_RE.sub("", between).strip():
        raise ValueError(
            f"a condense template needs text between {{{HISTORY_KEY}}} and {{question}} to tell them apart "
            f"(a label such as 'Follow Up Input:'): {template[:80]!r}"
        )
    out, at, captured = [], 0, set()
    for m in _PLACEHOLDER_RE.finditer(template):
        out.append(_literal(template[at : m.start()]))
        name = m.group(1)
        if name in (HISTORY_KEY, "question") and name not in captured:
            captured.add(name)
            # the history as long as it can be, the follow-up as short: a turn of the history may hold the
            # template's own separator ("Q: ..."), the follow-up is the text after its last occurrence
            out.append(f"(?P<{name}>.*)" if name == HISTORY_KEY else f"(?P<{name}>.*?)")
        else:  # another variable, or the same one again: any text
            out.append("(?:.*?)")
        at = m.end()
    out.append(_literal(template[at:]))
    return re.compile("".join(out) + r"\s*\Z", re.IGNORECASE | re.DOTALL)


def _literal(text: str) -> str:
    words = text.split()
    return r"\s*" + r"\s+".join(re.escape(w) for w in words) + r"\s*" if words else r"\s*"


def parse_condense(
    text: str, templates: Iterable[str] = CONDENSE_TEMPLATES
) -> tuple[list[Message], str] | None:
    """``(history, latest)`` of a rendered condense prompt, by the first template that matches it; None
    when none does or the follow-up is empty. The history is read as ``role: text`` lines
    (:func:`monitor.otel.messages.history_text`)."""
    for template in templates:
        m = template_pattern(template).search(text)
        if m is None:
            continue
        latest = m.group("question").strip()
        if latest:
            return history_of(m.group(HISTORY_KEY)), latest
    return None


def variables_of(a: Mapping[str, Any]) -> Mapping[str, Any]:
    """A span's template variables, else its chain input when that is a JSON object, else empty."""
    got = decoded(a.get("llm.prompt_template.variables"))
    if isinstance(got, Mapping):
        return got
    chain_input = decoded(a.get("input.value"))
    return chain_input if isinstance(chain_input, Mapping) else {}


def _from_variables(a: Mapping[str, Any]) -> tuple[list[Message], str] | None:
    v = variables_of(a)
    if HISTORY_KEY not in v:
        return None
    for key in LATEST_KEYS:
        if isinstance(v.get(key), str):
            return history_of(v[HISTORY_KEY]), v[key]
    return None


def prompt_texts(a: Mapping[str, Any]) -> list[str]:
    """The texts a model call's prompt may be rendered in, most likely first: its last user message
    (GenAI, then OpenInference's flattened messages), OpenInference's ``llm.prompts``, a string input."""
    out: list[str] = []
    for msgs in (messages_of(a.get("gen_ai.input.messages")) or [], flat_messages(a, "llm.input_messages")):
        users = [t for r, t in msgs if r == "user"]
        if users:
            out.append(users[-1])
    prompts = decoded(a.get("llm.prompts"))
    if isinstance(prompts, list):
        out.extend(p for p in reversed(prompts) if isinstance(p, str))
    value = a.get("input.value")
    if isinstance(value, str) and value[:1] not in "[{":
        out.append(value)
    return out


def rendered(
    a: Mapping[str, Any], templates: Sequence[str] = CONDENSE_TEMPLATES
) -> tuple[list[Message], str] | None:
    """``(history, latest)`` from a model call's rendered condense prompt (shape 2), or None."""
    for text in prompt_texts(a):
        got = parse_condense(text, templates)
        if got is not None:
            return got
    return None


def _from_messages(a: Mapping[str, Any]) -> tuple[list[Message], str | None] | None:
    msgs = messages_of(a.get("gen_ai.input.messages")) or flat_messages(a, "llm.input_messages")
    convo = [m for m in msgs if m[0] in ("user", "assistant")]
    if not convo:
        return None
    last = max((i for i, m in enumerate(convo) if m[0] == "user"), default=None)
    return (convo[:last], convo[last][1]) if last is not None else (convo, None)


def conversation(
    rewrite: Mapping[str, Any],
    ancestors: Sequence[Mapping[str, Any]],
    templates: Sequence[str] = CONDENSE_TEMPLATES,
) -> Conversation | None:
    """The conversation of ``rewrite`` (a span event dict) by the module doc's order; ``ancestors`` are
    its ancestors nearest first. None when no shape holds it."""
    for span in (rewrite, *ancestors):
        got = _from_variables(span["attributes"])
        if got is not None:
            return Conversation(got[0], got[1], "variables", span["span_id"])
    got_r = rendered(rewrite["attributes"], templates)
    if got_r is not None:
        return Conversation(got_r[0], got_r[1], "rendered_prompt", rewrite["span_id"])
    got_m = _from_messages(rewrite["attributes"])
    if got_m is not None:
        return Conversation(got_m[0], got_m[1], "messages", rewrite["span_id"])
    return None


def span_history(a: Mapping[str, Any], templates: Sequence[str] = CONDENSE_TEMPLATES) -> list[Message] | None:
    """The history one span's own attributes hold (variables, rendered prompt, messages), or None: what
    a ``rewrite_monitor.digest`` on that span was computed over."""
    got = _from_variables(a) or rendered(a, templates)
    if got is not None:
        return got[0]
    got_m = _from_messages(a)
    return got_m[0] if got_m is not None else None
