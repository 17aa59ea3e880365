"""Write the eval set: the current regression cases as JSON Lines, CSV or Parquet.

One case per line/row, in the shape of ``schemas/regression_case.schema.json`` (:func:`case_schema`),
oldest verdict first, so a later export appends new cases at the end and an unchanged store exports
the same bytes again (nothing in a line depends on when the export ran). CSV and Parquet hold the same
columns; the nested ones (``messages``, ``must_include``, ``must_not_include``, ``accepted_terms``,
``typed_terms``, ``logged``) are JSON text there, so the two tabular formats read back the same way.

``accepted_terms`` / ``typed_terms`` say where each assertion term came from (issue 35, part 4): accepted
from the findings' suggestions, or typed by the reviewer; both ``null`` for a case whose verdict was
stored before that was recorded (migration 0014).

Personal details are redacted by default (``monitor.privacy``); reviewer identity and source ids
(``source_request_id``, ``record_id``, ``verdict_id``) are kept, a request id the redactor finds personal
data in as its ``pid_`` hash (:func:`monitor.privacy.outbound_id`).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from monitor.bundled import bundled_file
from monitor.cases.store import (
    CaseRow,
    UncasedVerdict,
    list_cases,
    logged_rewrites,
    sync_cases,
    verdicts_without_case,
)
from monitor.privacy import NameFinder, redact_case
from monitor.verdicts import term_origins

FORMATS = ("jsonl", "csv", "parquet")
COLUMNS = (
    "id",
    "version",
    "label",
    "artifact",
    "source_request_id",
    "record_id",
    "verdict_id",
    "reviewer",
    "verdict_at",
    "prompt_version",
    "model",
    "messages",
    "latest",
    "expected_query",
    "must_include",
    "must_not_include",
    "accepted_terms",
    "typed_terms",
    "logged",
    "redacted",
)
NESTED = ("messages", "must_include", "must_not_include", "accepted_terms", "typed_terms", "logged")
EXPORT_SUFFIXES = {
    ".csv": "csv",
    ".parquet": "parquet",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
}
"""The format an ``--out`` file's suffix names, when ``--format`` is not given."""


def export_format(out_path: Path, fmt: str | None) -> str:
    """``--format`` when given, else the format ``out_path``'s suffix names (:data:`EXPORT_SUFFIXES`),
    else jsonl (standard output, other suffixes): ``--out cases.csv`` alone writes CSV."""
    if fmt is not None:
        return fmt
    return EXPORT_SUFFIXES.get(out_path.suffix.lower(), "jsonl") if str(out_path) != "-" else "jsonl"


@dataclass(frozen=True, slots=True)
class ExportSummary:
    """What one export wrote: ``cases`` lines/rows to ``path`` in ``format``; ``applied`` verdicts the
    sync step looked at (see ``monitor.cases.store.sync_cases``)."""

    path: Path
    format: str
    cases: int
    applied: int
    redacted: bool
    by_label: dict[str, int]
    without_case: tuple[UncasedVerdict, ...] = ()
    """The standing verdicts in the export's window that make no case, with why
    (``monitor.cases.store.verdicts_without_case``)."""


def case_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one exported case: the bundled
    ``schemas/regression_case.schema.json``, parsed.

    Raises ``ConfigError`` when the schemas are not installed (see ``monitor.bundled``).
    """
    schema: dict[str, Any] = json.loads(
        bundled_file("schemas", "regression_case.schema.json").read_text(encoding="utf-8")
    )
    return schema


def _iso(dt: datetime) -> str:
    return dt.isoformat() + "Z"  # stored as naive UTC


def case_dict(row: CaseRow, logged: dict[str, Any] | None) -> dict[str, Any]:
    """One case in the export shape (keys in :data:`COLUMNS` order), not redacted."""
    accepted, typed = term_origins(row.must_include, row.must_not_include, row.accepted_terms) or (None, None)
    return {
        "id": row.case_key,
        "version": row.version,
        "label": row.label,
        "artifact": row.artifact,
        "source_request_id": row.source_request_id,
        "record_id": row.record_id,
        "verdict_id": row.verdict_id,
        "reviewer": row.reviewer,
        "verdict_at": _iso(row.verdict_at),
        "prompt_version": row.prompt_version,
        "model": row.model,
        "messages": [{"role": m["role"], "content": m["content"]} for m in row.messages],
        "latest": row.latest,
        "expected_query": row.expected_query,
        "must_include": list(row.must_include),
        "must_not_include": list(row.must_not_include),
        "accepted_terms": accepted,
        "typed_terms": typed,
        "logged": logged,
        "redacted": False,
    }


def collect_cases(
    *,
    session: Session,
    since: datetime | None = None,
    label: str | None = None,
    redact: bool = True,
    finder: NameFinder | None = None,
) -> list[dict[str, Any]]:
    """The current cases as export dicts, oldest verdict first; redacted unless ``redact`` is False
    (with the source request id in the form :func:`monitor.privacy.outbound_id` gives it under
    ``hash_personal``).

    ``finder`` finds names for the redaction (``None``: names are not looked for, the patterns still
    apply). ``since`` bounds the verdict time (naive UTC).
    """
    from monitor.store.keys import outbound_ids

    rows = list_cases(session=session, since=since, label=label, limit=None, oldest_first=True)
    logged = logged_rewrites(session=session, record_ids=sorted({r.record_id for r in rows}))
    # a redacted case names its source request as an alert would: an id holding an e-mail or a phone
    # number as the store's pid_ hash, which `show` resolves
    ids = outbound_ids(session=session, mode="hash_personal") if redact else str
    out = []
    for row in rows:
        case = case_dict(row, logged.get(row.record_id))
        if redact:
            case = redact_case(case, finder)
            case["source_request_id"] = ids(case["source_request_id"])
        out.append(case)
    return out


def write_cases(cases: Sequence[dict[str, Any]], path: Path, fmt: str) -> None:
    """Write ``cases`` to ``path`` as ``jsonl`` (UTF-8, ``\\n`` line ends), ``csv`` or ``parquet``;
    ``path`` ``-`` is standard output (not for parquet, which is binary).

    Raises ``ValueError`` for another format, or for parquet to standard output.
    """
    to_stdout = str(path) == "-"
    if fmt == "jsonl":
        if to_stdout:
            for case in cases:
                sys.stdout.write(json.dumps(case, ensure_ascii=False) + "\n")
            sys.stdout.flush()
            return
        with path.open("w", encoding="utf-8", newline="\n") as fh:
            for case in cases:
                fh.write(json.dumps(case, ensure_ascii=False) + "\n")
        return
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if to_stdout and fmt == "parquet":
        raise ValueError("parquet is binary: write it to a file, not to standard output (-)")
    import pandas as pd

    flat = [
        {k: json.dumps(c[k], ensure_ascii=False) if k in NESTED else c[k] for k in COLUMNS} for c in cases
    ]
    df = pd.DataFrame(flat, columns=list(COLUMNS))
    if fmt == "csv":
        df.to_csv(sys.stdout if to_stdout else path, index=False, lineterminator="\n", encoding="utf-8")
    else:
        df.to_parquet(path, index=False, engine="pyarrow")


def export_cases(
    *,
    session: Session,
    path: Path,
    fmt: str = "jsonl",
    since: datetime | None = None,
    label: str | None = None,
    redact: bool = True,
    finder: NameFinder | None = None,
    now: datetime,
) -> ExportSummary:
    """Bring the cases up to date with the verdicts (commits), then write the eval set to ``path``; the
    summary lists the standing verdicts of the same window (``since``, ``label``) that made no case."""
    applied = sync_cases(session=session, now=now)
    cases = collect_cases(session=session, since=since, label=label, redact=redact, finder=finder)
    write_cases(cases, path, fmt)
    by_label: dict[str, int] = {}
    for c in cases:
        by_label[c["label"]] = by_label.get(c["label"], 0) + 1
    from monitor.store.keys import outbound_ids

    # named as the cases name their source request: a request id holding personal data by its pid_ hash
    ids = outbound_ids(session=session, mode="hash_personal") if redact else str
    uncased = [
        dataclasses.replace(u, request_id=ids(u.request_id))
        for u in verdicts_without_case(session=session, since=since, label=label)
    ]
    return ExportSummary(
        path, fmt, len(cases), applied, redact, dict(sorted(by_label.items())), tuple(uncased)
    )
