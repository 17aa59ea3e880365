"""Every grading step earns its place on traffic, not on its examples (issue 31, part 4).

On a store of every shared log and traffic file, the test prints how many rewrites each declared step of
each check fires on and how many labelled items it sets a grade on, and requires that a step firing on at
most ``monitor.stats.steps.FEW`` rewrites either goes or is listed in :data:`FEW_BUT_GROUNDED` with why
its source stands without the shared rewrites (a fault the public logs never have, a field no source
logged). The small tests below count by hand on a store of three findings.
"""

from __future__ import annotations

import json
import os

import pytest

from monitor.checks import REGISTRY, current_versions
from monitor.stats.steps import FEW, firing_table, step_firings
from tests.factories import make_record
from tests.helpers import REPO, SHARED_DATA

FEW_BUT_GROUNDED = {
    "window_truncated/unseen_turns": "a logging fault; every public source logged every turn",
    "missing_assistant_turns/assistant_turns_missing": "a logging fault; the sources without answers "
    "declare transcript_kind user_only",
    "non_monotonic/out_of_order": "a logging fault; the converted logs are monotonic by construction",
    "digest_mismatch/digest_differs": "a transport fault; the converted logs carry their own digests",
    "roles_mismatch/counts_differ": "a logging fault; the converted logs count their own messages",
    "session_mismatch/turns_never_shown": "another session's state; no public source has one",
    "session_mismatch/digest_changed": "another session's state; no public source has one",
    "session_mismatch/history_not_continued": "another session's state; no public source has one",
    "antecedent_not_in_input/antecedent_unreceived": "reads resolved[], which no public source logged",
    "antecedent_not_in_input/antecedent_elsewhere": "reads resolved[], which no public source logged",
    "list_reference/query_names_other_item": "a list reference needs a list in the transcript; the seeds' "
    "canonical case (the second of two regions), rare in open-domain chat",
    "list_reference/resolved_entry_other_item": "reads resolved[], which no public source logged",
    "ignored_correction/correction_lost": "a self-repair (Schegloff et al. 1977) the query drops; "
    "corrections are rare in the public conversations",
    "not_a_query/clarification_request": "Purver 2004; a clarification request is rare where rewriters "
    "are told to rewrite",
    "intent_dropped/confirmed_by_reviewers": "moves a grade only after a reviewer's verdict; the shared "
    "store has none",
    "added_content_word/learned": "moves a grade only after reviewers' verdicts; the shared store has none",
    "added_content_word/misspelling": "Damerau's single-error typing slips; rewriters rarely misspell",
    "replaced_term/answer_head": "co-hyponym substitution (Cruse 1986), the fabrication the added-word "
    "check cannot see; rare",
    "topic_shift/set_topic_attached": "Fraser 1999: a topic set with 'what about X'; rare in public chat",
    "qualifiers/admitted_drop": "reads the rewriter's dropped[], which no public source logged",
    "unresolved_reference/ellipsis_kept": "Halliday and Hasan 1976, ch. 4: an elliptical form kept in the "
    "query; the rewriters restate nearly every one (since v5 a restated question is resolved)",
}
"""Steps that fire on at most :data:`FEW` shared rewrites and stay, with why their source stands alone."""


@pytest.fixture(scope="module")
def firings() -> list:
    """Every declared step's firings on a fresh store of the shared logs and traffic (built once)."""
    shared = SHARED_DATA
    if not (shared / "logs").is_dir() or not (shared / "traffic").is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"{shared} lacks logs/ or traffic/ on CI")
        pytest.skip(f"{shared}/logs or traffic not present")
    from monitor.checks.rules import load_rules
    from monitor.ingest.sources import discover
    from monitor.ingest.store.batches import ingest_sources
    from monitor.worker.jobs import check_job
    from tests.golden.findings import fresh_store

    labelled = [
        json.loads(line)["request_id"]
        for path in sorted((shared / "labels").glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    declared = [(spec.id, step.id) for spec in REGISTRY.values() for step in spec.steps]
    with fresh_store() as session:
        ingest_sources(session, discover([shared / "logs", shared / "traffic"]))
        check_job(session=session, rules=load_rules())
        return step_firings(session=session, checks=current_versions(), declared=declared, labelled=labelled)


@pytest.mark.slow
def test_every_step_fires_on_traffic_or_names_why_its_source_stands_alone(firings, capsys) -> None:
    with capsys.disabled():
        print("\ngrading steps on the shared logs and traffic (rewrites fired on, labelled items among them)")
        print(firing_table(firings), end="")
    few = {f.key for f in firings if len(f.fired) <= FEW}
    assert few - set(FEW_BUT_GROUNDED) == set(), "steps that fit their examples: remove them or ground them"
    stale = set(FEW_BUT_GROUNDED) - few
    assert stale == set(), "listed as firing rarely, but they fire more: take them off the list"


@pytest.mark.slow
def test_the_steps_that_grade_most_words_fire_on_hundreds(firings) -> None:
    """The bulk of the added-word grading is done by steps that fire on hundreds of the 4,543 shared
    rewrites, not by special cases."""
    by_key = {f.key: len(f.fired) for f in firings}
    for key in ("framing", "derivation", "synonym", "abstract_noun", "content_word"):
        assert by_key[f"added_content_word/{key}"] > 100, key


def test_step_firings_count_a_rewrite_once_per_step_and_read_word_steps(session) -> None:
    """Two words of one finding graded by one step count one rewrite; a word's step counts even when it
    is not the finding's own; labelled rewrites are counted among them; undeclared steps are reported."""
    from tests.factories import check_run_row, finding_row, record_row

    def add(request_id: str, check_id: str, step: str, evidence: dict, ordinal: int = 0) -> None:
        rec = record_row(session, conv_id=request_id, request_id=request_id)
        run = check_run_row(session, record_id=rec.id, check_id=check_id, check_version=1)
        finding_row(
            session,
            check_run_id=run.id,
            record_id=rec.id,
            request_id=request_id,
            kind=check_id,
            check_id=check_id,
            check_version=1,
            step=step,
            evidence=evidence,
            ordinal=ordinal,
        )

    words = [
        {"step": "proper_name"},
        {"step": "framing", "parts": [{"step": "framing"}, {"step": "framing"}]},
    ]
    add("r1", "added_content_word", "proper_name", {"words": words})
    add("r2", "added_content_word", "framing", {"words": []})
    add("r3", "unresolved_reference", "pronoun_kept", {})
    got = step_firings(
        session=session,
        checks=[("added_content_word", 1), ("unresolved_reference", 1)],
        declared=[("added_content_word", "proper_name"), ("added_content_word", "framing"), ("x", "never")],
        labelled=["r2", "r3"],
    )
    assert [(f.key, f.fired, f.labelled) for f in got] == [
        ("added_content_word/proper_name", ("r1",), ()),
        ("added_content_word/framing", ("r1", "r2"), ("r2",)),
        ("x/never", (), ()),
        ("unresolved_reference/pronoun_kept", ("r3",), ("r3",)),
    ]
    assert firing_table(got).splitlines()[2].split() == ["added_content_word/framing", "2", "1"]


def test_a_finding_names_the_step_that_graded_it(rules) -> None:
    """The finding's step is its top word's; each word names the step that set its grade."""
    from monitor.checks.added_words import check

    rec = make_record([("user", "Tell me about Peters.")], "When?", "Did Peters win a Tony in 2003?")
    got = [(f.step, [w["step"] for w in f.evidence["words"]]) for f in check(rec, rules)]
    assert got == [
        ("content_word", ["content_word"]),
        ("proper_name", ["proper_name"]),
        ("qualifier_value", ["qualifier_value"]),
    ]


def test_every_step_is_in_the_checks_page() -> None:
    """docs/checks.md's step tables are generated from the registry (``make docs``; tests/test_docs.py
    fails when they are stale): every step id of every check is on the page."""
    page = (REPO / "docs" / "checks.md").read_text(encoding="utf-8")
    for spec in REGISTRY.values():
        for step in spec.steps:
            assert f"| `{step.id}` |" in page, (spec.id, step.id)
