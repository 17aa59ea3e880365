"""The evaluation's honest measurement, on hand-made stored rewrites: right-word hits, the union row of
intent_dropped, stale rules, unmeasured rows, stratum weights and queue precision (values by hand)."""

from __future__ import annotations

from collections import Counter

import pytest

from monitor.checks.store import FindingRow, StoredRewrite
from monitor.stats.evaluate import Evaluation, _score, item_weight, words_overlap
from monitor.stats.figures import Confusion, QueueFigures
from monitor.stats.label_files import LabelItem, parse_label_line

KIND_TO_CHECK = {
    "added_content_word": "added_content_word",
    "qualifier_conflict": "qualifier_conflict",
    "dropped_qualifier": "dropped_qualifier",
    "intent_dropped": "intent_dropped",
    "unresolved_reference": "unresolved_reference",
    "not_a_query": "not_a_query",
}
RAN = {c: ("ran", "h1") for c in KIND_TO_CHECK.values()}


def finding(kind: str, severity: str, words: list[str]) -> FindingRow:
    return FindingRow("r", "c", kind, severity, words, "why", {}, kind, 1, "h1")


def stored(*findings: FindingRow, statuses: dict[str, tuple[str, str]] | None = None) -> StoredRewrite:
    return StoredRewrite("r", "c", "m", "p", dict(RAN if statuses is None else statuses), list(findings))


def score(
    item: LabelItem, rec: StoredRewrite, rules_hash: str | None = "h1", weight: float = 1.0
) -> Evaluation:
    result = Evaluation()
    result.table["f"] = {t: {} for t in ("low", "medium", "high")}
    result.queue["f"] = QueueFigures()
    _score(result, "f", item, rec, weight, KIND_TO_CHECK, rules_hash, None)
    return result


def audit(**labels: object) -> LabelItem:
    base: dict[str, object] = {
        "request_id": "r",
        "fabricated": [],
        "dropped_constraint": [],
        "wrong_antecedent": False,
        "unresolved": False,
        "intent_drift": False,
    }
    return parse_label_line({**base, **labels})


def test_words_overlap_by_token_stem_and_alias() -> None:
    assert words_overlap(["free tier"], ["tier"])  # shared token
    assert words_overlap(["beginners"], ["beginner"]) and words_overlap(["tiers"], ["tier"])  # inflections
    assert not words_overlap(["son"], ["sons"])  # too short for the inflection rule
    assert not words_overlap(["internet"], ["international"])  # a shared prefix is not one word
    assert not words_overlap(["history of art"], ["department of defense"])  # function words name nothing
    assert not words_overlap(["halftime show"], ["Super Bowl"])
    assert words_overlap(["eu-west-1"], ["Dublin"], lambda a, b: {a, b} == {"eu-west-1", "Dublin"})


def test_a_hit_that_names_other_words_is_an_item_hit_but_not_a_right_word_hit() -> None:
    item = audit(fabricated=["Boeing 737"])
    result = score(item, stored(finding("added_content_word", "high", ["biggest"])))
    conf = result.table["f"]["medium"]["fabricated"]
    assert (conf.tp, conf.tp_right, conf.fp_wrong_word, conf.fn) == (1, 0, 1, 0)
    m = conf.metrics()
    assert (m["precision"], m["precision_right_word"], m["recall_right_word"]) == (1.0, 0.0, 0.0)
    assert [(d.kind, d.threshold, d.outcome) for d in result.details] == [
        ("fabricated", "low", "wrong_word"),
        ("fabricated", "medium", "wrong_word"),
        ("fabricated", "high", "wrong_word"),
    ]
    right = score(item, stored(finding("added_content_word", "high", ["Boeing"])))
    assert right.table["f"]["high"]["fabricated"].tp_right == 1


def test_intent_dropped_is_scored_once_against_dropped_or_drift() -> None:
    drift_only = audit(intent_drift=True)
    conf = score(drift_only, stored(finding("intent_dropped", "medium", ["cost"]))).table["f"]["medium"]
    # one hit on the union row; dropped_constraint (predicted by dropped_qualifier only) is a clean negative
    assert (conf["intent_dropped"].tp, conf["intent_dropped"].fp) == (1, 0)
    assert (conf["dropped_constraint"].tp, conf["dropped_constraint"].fp, conf["dropped_constraint"].tn) == (
        0,
        0,
        1,
    )
    clean = score(audit(), stored(finding("intent_dropped", "medium", ["cost"]))).table["f"]["medium"]
    assert (clean["intent_dropped"].fp, clean["intent_dropped"].tn) == (1, 0)


def test_escaped_fabrication_counts_as_fabricated_without_words() -> None:
    item = parse_label_line({"request_id": "r", "candidates": [], "escaped_fabrication": True, "note": ""})
    assert item.truth["fabricated"] and item.words["fabricated"] == []
    conf = score(item, stored(finding("qualifier_conflict", "high", ["touchdowns"]))).table["f"]["high"]
    assert (conf["fabricated"].tp, conf["fabricated"].tp_right) == (1, 1)  # no labelled words: item-level


def test_findings_of_other_rules_are_stale_and_not_scored() -> None:
    rec = stored(
        finding("added_content_word", "high", ["x"]), statuses={"added_content_word": ("ran", "old")}
    )
    result = score(audit(fabricated=["x"]), rec, rules_hash="h1")
    assert result.stale["f"] == 1
    conf = result.table["f"]["medium"]["fabricated"]
    assert (conf.tp, conf.fp, conf.fn, conf.tn, conf.stale) == (0, 0, 0, 0, 1)
    assert result.queue["f"].scored == 0
    assert result.as_json()["files"]["f"]["fabricated"]["not_measured"] == "checked with other rules"


def test_a_row_no_check_ran_on_is_not_measured() -> None:
    rec = stored(statuses={k: v for k, v in RAN.items() if k != "unresolved_reference"})
    conf = score(audit(unresolved=True), rec).table["f"]["medium"]["unresolved"]
    assert (conf.skipped, conf.measured) == (1, False)
    assert conf.metrics()["recall"] is None
    assert Confusion(tp=1).measured


def test_queue_precision_counts_rewrite_findings_at_medium_and_any_error_label() -> None:
    result = Evaluation()
    result.table["f"] = {t: {} for t in ("low", "medium", "high")}
    result.queue["f"] = QueueFigures()
    cases = [
        (
            audit(fabricated=["Boeing"]),
            stored(finding("added_content_word", "high", ["Boeing"])),
        ),  # queued, error
        (audit(), stored(finding("added_content_word", "medium", ["career"]))),  # queued, fine
        (audit(), stored(finding("added_content_word", "low", ["notable"]))),  # low: not queued
        (audit(unresolved=True), stored()),  # an error the queue misses
    ]
    for item, rec in cases:
        _score(result, "f", item, rec, 1.0, KIND_TO_CHECK, "h1", None)
    q = result.queue["f"].as_dict()
    assert (q["scored"], q["queued"], q["with_error_label"], q["queued_with_error_label"]) == (4, 2, 2, 1)
    assert (q["queue_precision"], q["errors_reaching_queue"]) == (0.5, 0.5)


def test_item_weights_follow_the_strata() -> None:
    per = Counter({"qrecc/cand": 138, "natural": 191, "enriched": 9})
    assert item_weight(LabelItem("r", {}, "qrecc/cand"), per) == 857 / 138
    assert item_weight(LabelItem("r", {}, "natural"), per) == 1.0
    assert item_weight(LabelItem("r", {}, "enriched"), per) == 0.0
    assert item_weight(LabelItem("r", {}, None), per) == 1.0


def test_evaluate_by_prompt_version_and_details_in_json(session, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from monitor.checks import checks_by_kind, current_versions
    from monitor.checks.rules import load_rules
    from monitor.ingest.store.batches import ingest_bytes
    from monitor.stats.evaluate import evaluate
    from monitor.worker.jobs import check_job
    from tests.factories import ctx_input, log, rewrite

    msgs = [{"role": "user", "content": "Which EU regions support customer-managed keys?"}]
    events = b""
    for conv, version in (("a", "v1"), ("b", "v2")):
        events += log(
            ctx_input(conv=conv, req=f"{conv}_2", messages=msgs, n_messages=1, client_turn_count=1),
            rewrite(
                conv=conv,
                req=f"{conv}_2",
                latest="And the SLA?",
                query="What is the SLA of eu-west-9 for customer-managed keys?",
                prompt_version=version,
                resolved=[],  # no self-report: the antecedent check has nothing to test
            ),
        )
    ingest_bytes(session, events)
    rules = load_rules()
    check_job(session=session, rules=rules)
    labels = tmp_path / "l.jsonl"
    flags = {"dropped_constraint": [], "wrong_antecedent": False, "unresolved": False, "intent_drift": False}
    labels.write_text(
        json.dumps({"request_id": "a_2", "fabricated": ["eu-west-9"], **flags})
        + "\n"
        + json.dumps({"request_id": "b_2", "fabricated": [], **flags})
        + "\n"
    )
    kind_to_check = checks_by_kind()
    result = evaluate(
        session=session,
        label_files=[labels],
        checks=current_versions(),
        kind_to_check=kind_to_check,
        rules_hash=rules.hash,
        by="prompt_version",
    )
    got = result.as_json(details=True)
    assert sorted(got["files"]) == ["l.jsonl [v1]", "l.jsonl [v2]"]
    v1, v2 = got["files"]["l.jsonl [v1]"]["fabricated"], got["files"]["l.jsonl [v2]"]["fabricated"]
    assert (v1["tp"], v1["tp_right_word"], v1["fp"]) == (1, 1, 0)
    assert (v2["tp"], v2["fp"], v2["false_alarm_rate"]) == (0, 1, 1.0)
    # Wilson 95% of 1 of 1 and of 0 of 1 (z = 1.96): [0.2065, 1] and [0, 0.7935]
    assert v1["precision_ci"] == pytest.approx([0.2065, 1.0], abs=1e-4)
    assert v2["precision_ci"] == pytest.approx([0.0, 0.7935], abs=1e-4)
    assert got["files"]["l.jsonl [v1]"]["wrong_antecedent"]["not_measured"] == "no check ran"
    assert {(d["file"], d["kind"], d["threshold"], d["outcome"]) for d in got["details"]} >= {
        ("l.jsonl [v2]", "fabricated", "medium", "false_alarm")
    }
    # the same store scored against other rules: nothing is current
    stale = evaluate(
        session=session,
        label_files=[labels],
        checks=current_versions(),
        kind_to_check=kind_to_check,
        rules_hash="0",
    )
    assert stale.stale["l.jsonl"] == 2


def test_label_files_are_read_strictly(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A repeated item, a file given twice and a wrong-typed field are errors naming file, line and field,
    never silently counted (a doubled item doubles its weight and narrows every interval)."""
    import pytest

    from monitor.errors import LabelError
    from monitor.stats.evaluate import evaluate, read_labels

    ok = '{"request_id": "r1", "fabricated": [], "ok": true}'
    twice = tmp_path / "twice.jsonl"
    twice.write_text(ok + "\n" + '{"request_id": "r2", "ok": true}\n' + ok + "\n")
    with pytest.raises(
        LabelError, match=r"twice.jsonl:3: request_id 'r1' is labelled again \(first at line 1\)"
    ):
        read_labels(twice)
    typed = tmp_path / "typed.jsonl"
    typed.write_text('{"request_id": "r1", "fabricated": "Boeing", "ok": "yes"}\n')
    with pytest.raises(LabelError, match=r"typed.jsonl:1: .*field 'fabricated' must be a list of words"):
        read_labels(typed)
    typed.write_text('{"request_id": "r1", "fabricated": [], "ok": "yes"}\n')
    with pytest.raises(LabelError, match=r"typed.jsonl:1: .*field 'ok' must be true or false, got a string"):
        read_labels(typed)
    # the fields the strata and the word-level format read are typed too: each would crash the scoring
    for line, why in [
        (
            '{"request_id": "r1", "ok": true, "selection": 7}',
            "field 'selection' must be a string, got an integer",
        ),
        (
            '{"request_id": "r1", "ok": true, "stratum": ["a"]}',
            "field 'stratum' must be a string, got an array",
        ),
        ('{"request_id": "r1", "candidates": [{"span": 5}]}', r"candidates\[0\]\.span must be a string"),
        ('{"request_id": "r1", "candidates": ["x"]}', r"candidates\[0\] must be an object, got a string"),
        (
            '{"request_id": "r1", "fabricated": [1]}',
            "field 'fabricated' must be a list of words .*item 0 is an integer",
        ),
        ('{"request_id": 5}', "field 'request_id' must be a string, got an integer"),
        ('{"ok": true}', "no 'request_id'"),
    ]:
        typed.write_text(line + "\n")
        with pytest.raises(LabelError, match=r"typed.jsonl:1: .*" + why):
            read_labels(typed)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(LabelError, match=r"empty.jsonl: no labels \(the file is empty\)"):
        read_labels(empty)
    typed.write_text("[1, 2]\n")
    with pytest.raises(LabelError, match=r"typed.jsonl:1: .*a label line must be a JSON object, got an arr"):
        read_labels(typed)
    good = tmp_path / "good.jsonl"
    good.write_text(ok + "\n")
    with pytest.raises(LabelError, match=r"good.jsonl: given twice"):
        evaluate(session=None, label_files=[good, good], checks=[], kind_to_check={})  # type: ignore[arg-type]


def test_recall_over_every_labelled_item_counts_the_items_no_check_could_test() -> None:
    """Two wrong antecedents: one where a check ran and found it, one where every check was skipped.
    Recall over checked items is 1/1; over every labelled item 1/2. Coverage counts each emitter."""
    kinds = {**KIND_TO_CHECK, "wrong_antecedent": ("list_reference", "topic_shift")}
    result = Evaluation()
    result.open_group("f")
    found = stored(
        finding("wrong_antecedent", "medium", ["Dublin"]),
        statuses={**RAN, "list_reference": ("ran", "h1"), "topic_shift": ("skipped", "h1")},
    )
    untested = stored(statuses={**RAN, "list_reference": ("skipped", "h1")})
    for rec in (found, untested):
        _score(result, "f", audit(wrong_antecedent=True), rec, 1.0, kinds, "h1", None)
    m = result.table["f"]["medium"]["wrong_antecedent"].metrics()
    assert (m["tp"], m["fn"], m["skipped"], m["labelled_unchecked"]) == (1, 0, 1, 1)
    assert (m["recall"], m["recall_all_labelled"]) == (1.0, 0.5)
    coverage = result.as_json()["files"]["f"]["coverage"]
    assert coverage["list_reference"] == {"ran": 1, "skipped": 1}
    assert coverage["topic_shift"] == {"skipped": 1, "none": 1}
