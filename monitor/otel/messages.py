"""The message shapes traces carry, read as ``(role, text)`` pairs (issue 33).

GenAI ``{role, parts}``, ``{role, content}``, LangChain's serialised messages (``{type: human|ai,
data: {content}}`` as OpenInference writes them, ``{id: [..., "HumanMessage"], kwargs: {content}}``),
OpenInference's flattened ``llm.input_messages.{i}.message.role|content`` attributes, and a history
rendered as ``role: text`` lines. Roles are ``user``, ``assistant`` or ``system`` (``human`` and ``ai``
mapped). Pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

Message = tuple[str, str]
"""``(role, text)``."""


def decoded(value: object) -> Any:
    """``value`` parsed as JSON when it is a string that opens an object or array (instrumentors write
    structured attributes as JSON strings), else as given; an unparsable string stays a string."""
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def text_of(value: object) -> str | None:
    """Text of a message content: a string, or the text parts of a list of parts joined by newlines."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = [text_of(p) for p in value]
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
"""LangChain's message types (``human``, ``ai``, the class names) as conversation roles."""


def role_of(value: object) -> str | None:
    """A role name lower-cased, LangChain's types mapped (:data:`ROLE_ALIASES`); None if not a string."""
    if not isinstance(value, str):
        return None
    r = value.strip().lower()
    return ROLE_ALIASES.get(r, r) or None


def message_of(value: object) -> Message | None:
    """``(role, text)`` from one serialised message (the shapes of the module doc, or a ``[role, text]``
    pair); None for anything else."""
    if isinstance(value, list | tuple) and len(value) == 2 and isinstance(value[1], str):
        role = role_of(value[0])
        return (role, value[1]) if role else None
    if not isinstance(value, Mapping):
        return None
    if isinstance(value.get("kwargs"), Mapping):
        ids = value.get("id") if isinstance(value.get("id"), list) else []
        role = role_of(ids[-1] if ids else value["kwargs"].get("type"))
        text = text_of(value["kwargs"].get("content"))
        return (role, text) if role and text is not None else None
    if isinstance(value.get("data"), Mapping) and "content" in value["data"]:
        role = role_of(value.get("type") or value["data"].get("type"))
        text = text_of(value["data"].get("content"))
        return (role, text) if role and text is not None else None
    role = role_of(value.get("role") or value.get("type"))
    text = text_of(value.get("parts") if "parts" in value else value.get("content"))
    return (role, text) if role and text is not None else None


def messages_of(value: object) -> list[Message] | None:
    """The messages of a list (or its JSON), those it can read; None when ``value`` is not a list."""
    value = decoded(value)
    if not isinstance(value, list):
        return None
    return [m for m in (message_of(v) for v in value) if m is not None]


def flat_messages(a: Mapping[str, Any], prefix: str) -> list[Message]:
    """OpenInference's flattened ``{prefix}.{i}.message.role|content`` attributes, in index order."""
    found: dict[int, dict[str, str]] = {}
    pat = re.compile(rf"^{re.escape(prefix)}\.(\d+)\.message\.(role|content)$")
    for k, v in a.items():
        m = pat.match(k)
        if m and isinstance(v, str):
            found.setdefault(int(m.group(1)), {})[m.group(2)] = v
    out = []
    for i in sorted(found):
        role = role_of(found[i].get("role"))
        if role and "content" in found[i]:
            out.append((role, found[i]["content"]))
    return out


HISTORY_LINE_RE = re.compile(r"^(user|assistant|human|ai|system)\s*:\s?(.*)$", re.IGNORECASE)


def history_text(value: str) -> list[Message]:
    """A chat history rendered as ``role: text`` lines (LlamaIndex's ``user:``/``assistant:``, LangChain's
    ``Human:``/``AI:``/``Assistant:``); a line without a role continues the message before it, and text
    before the first role line is dropped."""
    out: list[list[str]] = []
    for line in value.splitlines():
        m = HISTORY_LINE_RE.match(line.strip())
        if m:
            out.append([role_of(m.group(1)) or "user", m.group(2)])
        elif out:
            out[-1][1] += "\n" + line
    return [(r, t.strip()) for r, t in out if t.strip()]


def history_of(value: object) -> list[Message]:
    """A chat history as a template variable or chain input holds it: rendered text or a message list."""
    value = decoded(value)
    if isinstance(value, str):
        return history_text(value)
    return messages_of(value) or []
