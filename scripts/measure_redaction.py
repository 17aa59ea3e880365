"""Measure the export redaction (``monitor.privacy.redact_case``) on the repository's test set
(issue 38, part 3): how many personal details survive, and how many product and place strings it wrongly
redacts, per kind.

Usage::

    python scripts/measure_redaction.py [CASES.json] [--json] [--show]

``CASES.json`` (default ``tests/data/redaction/cases.json``) holds ``details`` (``kind``, ``text``,
``sentence``: invented personal details inside a support-chat sentence) and ``keep`` (product and place
strings in a sentence, which must come out unchanged). Each detail is put in one case per exported text
field (a user message, the latest message, the corrected query, a must-include and a must-not-include
term, the logged query, a resolved antecedent, a dropped qualifier), with its sentence also in a user
message, as a real case holds what its conversation said; it is *leaked* when its text survives, in any
case of letters, in any field of any of those cases. Each keep string is put in every field of one case;
it is *redacted* when it does not come out verbatim in all of them.

Prints a table per kind (``--json``: ``{"details": {KIND: {"n", "leaked", "rate", "fields", "items"}},
"keep": {KIND: {"n", "redacted", "rate", "items"}}, "leaked_rate", "redacted_rate", "n_details",
"n_keep"}``, ``items`` the leaked details or redacted strings with the fields they were in); ``--show``
also lists them. Exit 0; 2 for a test set that is missing, not JSON, or empty.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT = REPO / "tests" / "data" / "redaction" / "cases.json"
FIELDS = (
    "messages",
    "latest",
    "expected_query",
    "must_include",
    "must_not_include",
    "logged.query",
    "logged.resolved",
    "logged.dropped",
)
"""The exported text fields a detail is put in (``monitor.cases.export.COLUMNS``)."""
NEUTRAL = "What should I do next?"


def case_with(sentence: str, text: str, fields: tuple[str, ...]) -> dict[str, Any]:
    """An exported case (``monitor.cases.export`` shape) whose conversation holds ``sentence`` and whose
    ``fields`` hold it too (``text`` alone in the term fields)."""
    put = set(fields)
    return {
        "id": "c1",
        "label": "fabricated_constraint",
        "messages": [
            {"role": "user", "content": sentence},
            {"role": "assistant", "content": "Noted."},
            *([{"role": "user", "content": f"About that: {sentence}"}] if "messages" in put else []),
        ],
        "latest": sentence if "latest" in put else NEUTRAL,
        "expected_query": sentence if "expected_query" in put else NEUTRAL,
        "must_include": [text] if "must_include" in put else [],
        "must_not_include": [text] if "must_not_include" in put else [],
        "logged": {
            "query": sentence if "logged.query" in put else NEUTRAL,
            "resolved": [{"surface": "it", "antecedent": text}] if "logged.resolved" in put else [],
            "dropped": [text] if "logged.dropped" in put else [],
        },
    }


def _texts(case: dict[str, Any], field: str) -> list[str]:
    """The strings of ``field`` in a (redacted) case."""
    if field == "messages":
        return [m["content"] for m in case["messages"]]
    if field.startswith("logged."):
        value = case["logged"][field.split(".", 1)[1]]
        if field == "logged.resolved":
            return [x["antecedent"] for x in value]
        return value if isinstance(value, list) else [value]
    value = case[field]
    return value if isinstance(value, list) else [value]


def measure(path: Path) -> dict[str, Any]:
    """The figures of the module doc for the test set at ``path``."""
    from monitor.privacy import name_finder, redact_case

    finder = name_finder()
    data = json.loads(path.read_text(encoding="utf-8"))
    details: dict[str, dict[str, Any]] = defaultdict(lambda: {"n": 0, "leaked": 0, "fields": {}, "items": []})
    for d in data["details"]:
        row = details[d["kind"]]
        row["n"] += 1
        where = []
        for field in FIELDS:
            out = redact_case(case_with(d["sentence"], d["text"], (field,)), finder)
            low = d["text"].lower()
            if any(low in t.lower() for f in FIELDS for t in _texts(out, f)):
                where.append(field)
                row["fields"][field] = row["fields"].get(field, 0) + 1
        if where:
            row["leaked"] += 1
            row["items"].append({"text": d["text"], "fields": where})
    keep: dict[str, dict[str, Any]] = defaultdict(lambda: {"n": 0, "redacted": 0, "items": []})
    for k in data["keep"]:
        row = keep[k["kind"]]
        row["n"] += 1
        case = case_with(k["sentence"], k["text"], FIELDS)
        out = redact_case(case, finder)
        lost = [
            f
            for f in FIELDS
            if any(
                k["text"] in a and k["text"] not in b
                for a, b in zip(_texts(case, f), _texts(out, f), strict=True)
            )
        ]
        if lost:
            row["redacted"] += 1
            row["items"].append({"text": k["text"], "fields": lost})
    n_details = sum(r["n"] for r in details.values())
    n_keep = sum(r["n"] for r in keep.values())
    for r in details.values():
        r["rate"] = round(r["leaked"] / r["n"], 4)
    for r in keep.values():
        r["rate"] = round(r["redacted"] / r["n"], 4)
    return {
        "details": dict(sorted(details.items())),
        "keep": dict(sorted(keep.items())),
        "leaked_rate": round(sum(r["leaked"] for r in details.values()) / n_details, 4),
        "redacted_rate": round(sum(r["redacted"] for r in keep.values()) / n_keep, 4),
        "n_details": n_details,
        "n_keep": n_keep,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="?", type=Path, default=DEFAULT, help="the test set (JSON)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--show", action="store_true", help="list each leaked detail and redacted string")
    args = parser.parse_args(argv)
    if not args.cases.is_file():
        parser.error(f"{args.cases}: no such file")
    try:
        data = json.loads(args.cases.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        parser.error(f"{args.cases}: not a JSON test set ({exc})")
    if not isinstance(data, dict) or not data.get("details") or not data.get("keep"):
        parser.error(f"{args.cases}: needs non-empty 'details' and 'keep' lists")
    got = measure(args.cases)
    if args.json:
        print(json.dumps(got, indent=2, ensure_ascii=False))
        return 0
    print("| personal detail | n | leaked | rate |\n| --- | ---: | ---: | ---: |")
    for kind, r in got["details"].items():
        print(f"| {kind} | {r['n']} | {r['leaked']} | {r['rate']:.1%} |")
    print(f"| all | {got['n_details']} | | {got['leaked_rate']:.1%} |\n")
    print("| must survive | n | redacted | rate |\n| --- | ---: | ---: | ---: |")
    for kind, r in got["keep"].items():
        print(f"| {kind} | {r['n']} | {r['redacted']} | {r['rate']:.1%} |")
    print(f"| all | {got['n_keep']} | | {got['redacted_rate']:.1%} |")
    if args.show:
        for part in ("details", "keep"):
            for kind, r in got[part].items():
                for item in r["items"]:
                    print(f"{part} {kind}: {item['text']!r} in {', '.join(item['fields'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
