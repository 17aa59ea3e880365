"""Chat-state checks from ctx_input: each fires on its fault and skips without its signal."""

from __future__ import annotations

from datetime import timedelta

from monitor.checks import run_checks
from monitor.record import Peer
from tests.factories import T0, make_context, make_record

MSGS = [
    ("user", "How do I rotate keys?"),
    ("assistant", "Use the console."),
    ("user", "And via the API?"),
    ("assistant", "Call the rotate endpoint."),
]


def status(rec, rules, check_id):
    out = run_checks(rec, rules, only=[check_id])
    (s,) = out.statuses
    return s.status, s.reason, [(f.kind, f.severity) for f in out.findings], out.findings


def test_user_only_transcript_is_low(rules):
    msgs = [("user", "What is throat cancer?"), ("user", "Is it treatable?")]
    rec = make_record(
        msgs, "What about lung cancer?", "What about lung cancer?", extra={"transcript_kind": "user_only"}
    )
    st, _, found, (f,) = status(rec, rules, "missing_assistant_turns")
    assert found == [("missing_assistant_turns", "low")]
    assert f.evidence["by_design"] is True
    assert (
        f.reason == "2 user turns but 0 assistant turns in the rewriter's input "
        "(source declares user_only transcripts)"
    )


def test_window_truncated_without_empty_resolved_has_no_hint(rules):
    from monitor.record import Resolution

    rec = make_record(
        MSGS,
        "Is it fast?",
        "Is the rotate endpoint fast?",
        client_turn_count=6,
        resolved=(Resolution("it", "the rotate endpoint", 4),),
    )
    _, _, found, (f,) = status(rec, rules, "window_truncated")
    assert f.evidence["unseen_turns"] == 2
    assert "verdict_hint" not in f.evidence


def test_window_check_skips_without_client_count(rules):
    rec = make_record(MSGS, "Why?", "Why?", client_turn_count=None)
    assert status(rec, rules, "window_truncated")[:2] == ("skipped", "no client_turn_count logged")


def test_more_messages_than_client_turns_is_session_mismatch(rules):
    rec = make_record(MSGS, "Why?", "Why rotate keys?", client_turn_count=2)
    _, _, found, (f,) = status(rec, rules, "session_mismatch")
    assert found == [("session_mismatch", "high")]
    assert f.evidence["extra_turns"] == 2


def test_non_monotonic_by_timestamps_and_flag(rules):
    ts = [T0, T0 + timedelta(seconds=30), T0 + timedelta(seconds=10), T0 + timedelta(seconds=40)]
    rec = make_record(MSGS, "Why?", "Why rotate keys?", timestamps=ts, monotonic=None)
    _, _, found, (f,) = status(rec, rules, "non_monotonic")
    assert f.evidence["out_of_order"] == [{"message_index": 2, "previous_index": 1}]
    rec = make_record(MSGS, "Why?", "Why rotate keys?", monotonic=False)
    assert status(rec, rules, "non_monotonic")[2] == [("non_monotonic", "medium")]


def test_digest_mismatch_and_skip(rules):
    rec = make_record(MSGS, "Why?", "Why rotate keys?", digest="000000000000")
    _, _, found, (f,) = status(rec, rules, "digest_mismatch")
    assert f.evidence == {"logged": "000000000000", "recomputed": make_context(MSGS).digest, "n_messages": 4}
    rec = make_record(MSGS, "Why?", "Why rotate keys?", digest=None)
    assert status(rec, rules, "digest_mismatch")[:2] == ("skipped", "no digest logged")


def test_roles_mismatch(rules):
    rec = make_record(MSGS, "Why?", "Why rotate keys?", roles={"user": 3, "assistant": 1}, n_messages=5)
    _, _, found, (f,) = status(rec, rules, "roles_mismatch")
    assert f.reason == (
        "n_messages 5 but 4 messages logged; roles {'user': 3, 'assistant': 1} "
        "but messages have {'user': 2, 'assistant': 2}"
    )


def test_session_continuity_with_sliding_window(rules):
    earlier = make_context(MSGS[:2], request_id="c1_2")
    # window slid by one message; the assistant reply and the next user turn were appended
    later_ok = make_record(MSGS[1:], "Why?", "Why rotate keys?", client_turn_count=None)
    peers = (Peer("c1_2", 2, T0, earlier),)
    from dataclasses import replace

    ok = replace(later_ok, turn=3, peers=peers)
    assert status(ok, rules, "session_mismatch")[2] == []
    foreign = replace(
        make_record(
            [("user", "Tell me about pandas."), ("assistant", "Bears.")],
            "Why?",
            "Why?",
            client_turn_count=None,
        ),
        turn=3,
        peers=peers,
    )
    _, _, found, (f,) = status(foreign, rules, "session_mismatch")
    assert (f.evidence["request_id"], f.evidence["other_request_id"]) == ("c1_3", "c1_2")


def test_every_context_check_skips_without_ctx_input(rules):
    rec = make_record(None, "Why?", "Why?")
    out = run_checks(rec, rules)
    skipped = {s.check_id: s.reason for s in out.statuses if s.status == "skipped"}
    assert skipped == {
        cid: "no ctx_input logged for this request"
        for cid in (
            "added_content_word",
            "qualifiers",
            "window_truncated",
            "missing_assistant_turns",
            "non_monotonic",
            "digest_mismatch",
            "session_mismatch",
            "roles_mismatch",
            "list_reference",
            "topic_shift",
            "antecedent_recency",
            "swapped_name",
            "replaced_term",
            "frame_not_carried",
            "topic_not_carried",
        )
    } | {
        "antecedent_not_in_input": "no resolved entries logged",
        "ignored_correction": "the latest message corrects nothing",  # reads no transcript
    }
