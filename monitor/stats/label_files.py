"""Hand-label files, read for ``evaluate``: one :class:`LabelItem` per labelled rewrite.

Two formats (see ``../shared/data/README.md`` for their rules): item-level audits, whose ``fabricated`` and
``dropped_constraint`` are word lists and the other labels flags, and word-level LLM labels, whose
``candidates[].label`` names each fabricated word and whose ``note`` tags (``[drift]``) carry the rest.
:func:`parse_label_line` reads one object, :func:`read_labels` a file, each rejecting what it cannot
score with the file and line named.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from monitor.errors import LabelError, utf8_fault
from monitor.ingest.events import json_type


@dataclass(frozen=True, slots=True)
class LabelItem:
    """One labelled rewrite: ``truth[kind]`` is True/False, or absent when the file does not label it."""

    request_id: str
    truth: dict[str, bool]
    stratum: str | None = None
    words: dict[str, list[str]] = field(default_factory=dict)
    escaped: bool = False
    """The item is labelled ``escaped_fabrication``: a changed constraint no word of which is labelled."""


def _tags(note: str) -> set[str]:
    return {t.strip("[]") for t in note.split() if t.startswith("[") and t.endswith("]")}


ITEM_LABEL_FIELDS = (
    "fabricated",
    "dropped_constraint",
    "wrong_antecedent",
    "unresolved",
    "intent_drift",
    "ok",
)


WORD_FIELDS = ("fabricated", "dropped_constraint")
"""Label fields that list the labelled words (an empty list: none)."""
FLAG_FIELDS = ("wrong_antecedent", "unresolved", "intent_drift", "ok", "not_a_query", "escaped_fabrication")
"""Label fields that are true or false (``shared/data/README.md``)."""


def _check_types(obj: dict[str, Any]) -> None:
    """Raise ``TypeError`` naming the field whose value has the wrong JSON type: a string where a list of
    words belongs (``"fabricated": "Boeing"``) would otherwise be scored as a label."""
    for f in WORD_FIELDS:
        v = obj.get(f)
        if v is None:
            continue
        if not isinstance(v, list):
            raise TypeError(f"field {f!r} must be a list of words (strings), got {json_type(v)}")
        for i, w in enumerate(v):
            if not isinstance(w, str):
                raise TypeError(f"field {f!r} must be a list of words (strings): item {i} is {json_type(w)}")
    for f in FLAG_FIELDS:
        v = obj.get(f)
        if v is not None and not isinstance(v, bool):
            raise TypeError(f"field {f!r} must be true or false, got {json_type(v)}")
    for f in ("selection", "stratum"):
        v = obj.get(f)
        if v is not None and not isinstance(v, str):
            raise TypeError(f"field {f!r} must be a string, got {json_type(v)}")
    if "candidates" in obj:
        cands = obj["candidates"]
        if not isinstance(cands, list):
            raise TypeError("field 'candidates' must be a list")
        for i, c in enumerate(cands):
            if not isinstance(c, dict):
                raise TypeError(f"candidates[{i}] must be an object, got {json_type(c)}")
            for f in ("span", "label"):
                if f in c and not isinstance(c[f], str):
                    raise TypeError(f"candidates[{i}].{f} must be a string, got {json_type(c[f])}")


def parse_label_line(obj: dict[str, Any]) -> LabelItem:
    """Turn one label object (either format) into a :class:`LabelItem`.

    ``escaped_fabrication`` (a changed constraint made of logged words) makes the item ``fabricated``
    with no labelled words; ``not_a_query`` is read where the file has it (the LLM and MTRAG files).

    Raises ``KeyError`` when the object carries no label at all (a log event, say): counting it
    as a clean item would make every false-alarm rate look plausible and be wrong; ``TypeError`` naming
    the field when a value has the wrong JSON type, or when ``obj`` is no object.
    """
    if not isinstance(obj, dict):
        raise TypeError(f"a label line must be a JSON object, got {json_type(obj)}")
    if "request_id" in obj and not isinstance(obj["request_id"], str):
        raise TypeError(f"field 'request_id' must be a string, got {json_type(obj['request_id'])}")
    if "candidates" not in obj and not any(f in obj for f in ITEM_LABEL_FIELDS):
        raise KeyError(f"no label fields ({', '.join(ITEM_LABEL_FIELDS)} or candidates)")
    if "request_id" not in obj:
        raise KeyError("no 'request_id'")
    _check_types(obj)
    truth: dict[str, bool] = {}
    words: dict[str, list[str]] = {}
    if "candidates" in obj:  # word-level LLM labels
        fab = [c["span"] for c in obj["candidates"] if c.get("label") == "fabricated"]
        tags = _tags(obj.get("note", ""))
        truth["fabricated"] = bool(fab) or bool(obj.get("escaped_fabrication"))
        words["fabricated"] = fab
        truth["not_a_query"] = bool(obj.get("not_a_query"))
        truth["dropped_constraint"] = "dropped" in tags
        truth["unresolved"] = "unresolved" in tags
        truth["wrong_antecedent"] = "wrong_antecedent" in tags
        truth["intent_drift"] = "drift" in tags
        return LabelItem(
            obj["request_id"], truth, obj.get("stratum"), words, bool(obj.get("escaped_fabrication"))
        )
    truth["fabricated"] = bool(obj.get("fabricated"))
    words["fabricated"] = list(obj.get("fabricated") or [])
    truth["dropped_constraint"] = bool(obj.get("dropped_constraint"))
    words["dropped_constraint"] = list(obj.get("dropped_constraint") or [])
    truth["unresolved"] = bool(obj.get("unresolved"))
    truth["wrong_antecedent"] = bool(obj.get("wrong_antecedent"))
    truth["intent_drift"] = bool(obj.get("intent_drift"))
    if "not_a_query" in obj:
        truth["not_a_query"] = bool(obj.get("not_a_query"))
    return LabelItem(obj["request_id"], truth, obj.get("selection"), words)


def read_labels(path: Path) -> list[LabelItem]:
    """Read a label file (JSON Lines). Raises :class:`LabelError` naming the file and line (also for
    bytes that are not UTF-8: ``labels.jsonl:3: not UTF-8 text (byte 0xe9 at column 12)``), or the file
    when it holds no label."""
    try:
        # Decoded whole (not read_text): the error then holds every byte before the bad one, so its line
        # can be named.
        lines = path.read_bytes().decode("utf-8").splitlines()
    except OSError as exc:
        raise LabelError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        line, reason = utf8_fault(exc)
        raise LabelError(f"{path}:{line}: {reason}") from None
    items = []
    first: dict[str, int] = {}
    for n, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
            item = parse_label_line(obj)
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            why = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc  # no repr quotes
            raise LabelError(f"{path}:{n}: not a label object with a request_id ({why})") from exc
        if item.request_id in first:
            # counted twice, an item would double its weight and narrow every interval
            raise LabelError(
                f"{path}:{n}: request_id {item.request_id!r} is labelled again (first at line "
                f"{first[item.request_id]}): keep one label per item"
            )
        first[item.request_id] = n
        items.append(item)
    if not items:
        # Nothing to score: an empty table would read as a measurement.
        raise LabelError(f"{path}: no labels (the file is empty)")
    return items
