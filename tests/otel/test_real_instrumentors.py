"""Traces written by the real instrumentors (issue 33, part 1): tests/data/traces, made by
scripts/generate_traces.py with the versions its expected.json records. Every rewrite step each app made
is found, with the query, latest message, history, turn, conversation and model the app sent; nothing
else becomes a record; and the correct rewrites there raise no finding."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.checks import current_versions
from monitor.checks.rules import load_rules
from monitor.checks.store import list_findings
from monitor.ingest.store.batches import ingest_bytes
from monitor.store.models import Event, Quarantine, Record
from monitor.worker.jobs import check_job
from tests.helpers import REPO

TRACES = REPO / "tests" / "data" / "traces"
EXPECTED: dict[str, Any] = json.loads((TRACES / "expected.json").read_text(encoding="utf-8"))
RECIPES = sorted(EXPECTED["recipes"])
FRAMEWORK_FIRST_TURNS = {"not_a_rewrite_trace": 2}  # two conversations
SKIPPED: dict[str, dict[str, int]] = {
    **{r: FRAMEWORK_FIRST_TURNS for r in RECIPES if r.startswith("openinference_")},
    # the openai client's GenAI spans are traces of their own under LangChain: 3 contextualize calls (no
    # condense template: not read as rewrites a second time) and 5 answer calls, beside the 2 first turns
    "openinference_langchain_history_aware_and_genai": {"not_a_rewrite_trace": 10},
    "genai_llamaindex_condense_question": {"not_a_rewrite_trace": 5},  # 5 answer calls
    "genai_openai_condense": {},  # the app sent the condense prompts only
}


def test_every_recipe_of_the_generator_has_its_trace_file() -> None:
    assert RECIPES == sorted(p.name.removesuffix(".otlp.jsonl") for p in TRACES.glob("*.otlp.jsonl"))
    assert len(RECIPES) == 9
    assert all(EXPECTED["versions"].values()), "expected.json names the instrumentor versions it came from"


def _records(session: Session) -> list[tuple[Record, dict[str, Any], dict[str, Any]]]:
    out = []
    for rec in session.scalars(select(Record).order_by(Record.id)):
        ctx = session.get(Event, rec.ctx_event_id)
        rw = session.get(Event, rec.rewrite_event_id)
        assert ctx is not None and rw is not None
        out.append((rec, ctx.raw, rw.raw))
    return out


@pytest.mark.parametrize("recipe", RECIPES)
def test_each_rewrite_the_app_made_is_found_as_it_sent_it(recipe: str, session: Session) -> None:
    path: Path = TRACES / f"{recipe}.otlp.jsonl"
    _found_as_sent(recipe, path, session)


def test_the_phoenix_export_of_a_trace_gives_the_same_rewrites(session: Session) -> None:
    """The LlamaIndex trace as Arize Phoenix exports spans (a ``.spans.json`` array written by Phoenix's
    own encoder: nested attributes, ISO times), read as a document, not as lines."""
    path = TRACES / "phoenix_openinference_llamaindex_condense_question.spans.json"
    assert path.read_text(encoding="utf-8").startswith("[\n")
    _found_as_sent("openinference_llamaindex_condense_question", path, session)


def _found_as_sent(recipe: str, path: Path, session: Session) -> None:
    summary = ingest_bytes(session, path.read_bytes(), origin=path.name)
    session.commit()
    assert (summary.rejected_total, summary.source_errors) == (0, [])
    assert session.scalars(select(Quarantine)).all() == []
    expected = EXPECTED["recipes"][recipe]
    got = _records(session)
    assert len(got) == len(expected) == 3  # none invented: first turns and answer calls are skipped
    genai_only = recipe.startswith("genai_")
    # the traces that hold no rewrite are counted: each conversation's first turn (no history, so no
    # condense call) and, under GenAI alone, each answer call, which is its own trace
    assert dict(summary.skipped) == SKIPPED[recipe]
    by_latest_and_history = {(e["latest"], json.dumps(e["history"])): e for e in expected}
    for rec, ctx, rw in got:
        history = [[m["role"], m["content"]] for m in ctx["messages"]]
        want = by_latest_and_history[(rw["latest"], json.dumps(history))]
        assert (rw["query"], rec.turn, rw["model"]) == (want["query"], want["turn"], want["model"])
        assert len(history) == 2 * (want["turn"] - 1)
        if genai_only:
            # GenAI spans carry no session: the record's conversation is its trace, and it says so
            assert rec.conv_id == ctx["otel"]["trace_id"] and ctx["otel"]["conv_id_from"] == "trace_id"
        else:
            assert rec.conv_id == want["conv_id"] and "conv_id_from" not in ctx["otel"]
    check_job(session=session, rules=load_rules())
    findings = [
        (f.request_id, f.kind, f.severity)
        for f in list_findings(session=session, checks=current_versions())
        if f.severity in ("medium", "high")
    ]
    assert findings == []
