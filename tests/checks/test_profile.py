"""The rewriter profile: a word a prompt version adds across many unrelated conversations is its style,
graded one step lower with the figure in the evidence; constraints are never demoted (values by hand)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from monitor.checks import added_words
from monitor.checks.profile import RewriterProfile
from monitor.checks.rules import load_rules
from monitor.checks.store import day_spans, list_findings, restyle_findings
from monitor.ingest.store.batches import ingest_bytes
from monitor.store.models import AddedLemma
from monitor.worker.jobs import check_job
from tests.factories import ctx_input, log, make_record, rewrite

ACW = ("added_content_word", added_words.VERSION)
MSGS = [("user", "Tell me about Joan Baez."), ("assistant", "She is an American folk singer.")]


MSG_LIST = [{"role": "user", "content": "Tell me about the singer."}]


def _convs(names: range, query: str = "the singer album") -> bytes:
    """One follow-up per conversation ``c<i>``: the user asked about "the singer", prompt version ``v1``
    wrote ``query``."""
    return b"".join(
        log(
            ctx_input(conv=f"c{i}", req=f"c{i}_2", messages=MSG_LIST, n_messages=1, client_turn_count=1),
            rewrite(conv=f"c{i}", req=f"c{i}_2", latest="And then?", query=query, prompt_version="v1"),
        )
        for i in names
    )


def test_style_needs_five_other_conversations_and_one_in_a_thousand() -> None:
    p = RewriterProfile(
        {"v1": 100, "big": 10_001}, {("v1", "album"): 6, ("v1", "tour"): 5, ("big", "album"): 9}
    )
    style = p.style("v1", "album")
    assert style is not None and (style.others, style.of) == (5, 99)
    assert style.why == "the rewriter's style: prompt version 'v1' adds it in 5 of its 99 other conversations"
    assert p.style("v1", "tour") is None  # 4 others
    assert p.style("big", "album") is None  # 8 of 10,000: fewer than one in a thousand
    assert p.style("v2", "album") is None  # another rewriter's style is not this one's


def test_a_style_word_is_one_step_lower_and_says_why(rules) -> None:  # type: ignore[no-untyped-def]
    rec = make_record(MSGS, "What did she do later?", "What was Joan Baez's album in 1975?")
    rec = dataclasses.replace(rec, prompt_version="v1")
    profile = RewriterProfile({"v1": 100}, {("v1", "album"): 6, ("v1", "1975"): 50})
    plain = {
        w["text"]: (w["severity"], w["signal"])
        for f in added_words.check(rec, rules)
        for w in f.evidence["words"]
    }
    styled = {
        w["text"]: w for f in added_words.check(rec, rules.with_profile(profile)) for w in f.evidence["words"]
    }
    assert plain["album"] == ("medium", "content_word")
    assert (styled["album"]["severity"], styled["album"]["signal"]) == ("low", "rewriter_style")
    assert styled["album"]["graded"] == {
        "severity": "medium",
        "signal": "content_word",
        "step": "content_word",
        "why": "content word that narrows the topic",
    }
    assert styled["album"]["step"] == "rewriter_style"
    assert styled["album"]["style"] == {"prompt_version": "v1", "others": 5, "of": 99}
    # a year is a constraint whoever adds it, however often
    assert (styled["1975"]["severity"], styled["1975"]["signal"]) == plain["1975"]


def test_check_job_learns_the_profile_before_grading(session: Session) -> None:
    rules = load_rules()
    # v1 adds "album" in 7 conversations: 6 others for each; v2 in one
    events = _convs(range(7)) + log(
        ctx_input(conv="d", req="d_2", messages=MSG_LIST, n_messages=1, client_turn_count=1),
        rewrite(conv="d", req="d_2", latest="And then?", query="the singer album", prompt_version="v2"),
    )
    ingest_bytes(session, events)
    check_job(session=session, rules=rules, batch_size=2)  # batches smaller than the profile: same grades
    assert session.scalar(select(func.count()).select_from(AddedLemma)) == 8
    found = {f.request_id: f.severity for f in list_findings(session=session, checks=[ACW])}
    assert found == {**{f"c{i}_2": "low" for i in range(7)}, "d_2": "medium"}


def test_a_recheck_relearns_the_profile_and_a_sample_counts_only_its_conversations(session: Session) -> None:
    from monitor.checks.store import clear_runs, load_profile, record_added_lemmas
    from monitor.store.models import Record

    record_added_lemmas(session=session, rows=[("v1", "album", "c1"), ("v1", "album", "c2")])
    session.flush()
    assert clear_runs(session=session, checks=[ACW]) == 0
    assert session.scalar(select(func.count()).select_from(AddedLemma)) == 0  # relearned by the recheck
    rules = load_rules()
    events = _convs(range(4), query="the singer")
    ingest_bytes(session, events)
    draws = sorted(session.scalars(select(Record.check_draw)))
    rate = (draws[1] + draws[2]) / 2  # two of the four conversations are in the sample
    assert load_profile(session=session, prompt_versions=["v1"], conv_ids=[]).conversations == {"v1": 4}
    sample = load_profile(session=session, prompt_versions=["v1"], conv_ids=[], check_rate=rate)
    assert sample.conversations == {"v1": 2}
    assert rules.hash  # the rules are untouched by either


def test_a_profile_reader_reads_each_count_once_and_gives_what_load_profile_gives(session: Session) -> None:
    """One job's reader: the second batch of the same conversations costs only the query of their lemmas,
    and what is stored behind it counts from the next reader (the next job)."""
    from sqlalchemy import event

    from monitor.checks.store import ProfileReader, load_profile, record_added_lemmas

    ingest_bytes(session, _convs(range(3)))  # c0, c1, c2: three conversations of v1
    record_added_lemmas(
        session=session,
        rows=[("v1", "album", "c1"), ("v1", "album", "c2"), ("v1", "tour", "c1"), ("v2", "album", "c0")],
    )
    session.flush()
    reader = ProfileReader(session=session)
    first = reader.load(prompt_versions=["v1"], conv_ids=["c1"])
    assert first == load_profile(session=session, prompt_versions=["v1"], conv_ids=["c1"])
    assert (first.conversations, first.added) == ({"v1": 3}, {("v1", "album"): 2, ("v1", "tour"): 1})

    ingest_bytes(session, _convs(range(3, 4)))  # c3: a fourth conversation, and "album" in it
    record_added_lemmas(session=session, rows=[("v1", "album", "c3")])
    session.flush()
    statements: list[str] = []

    def seen(*args: object) -> None:
        statements.append(str(args[2]))

    engine = session.get_bind()
    event.listen(engine, "before_cursor_execute", seen)
    try:
        again = reader.load(prompt_versions=[None, "v1"], conv_ids=["c1", "c3"])
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    # "" (no prompt version) is new to the reader: its conversations and its pairs are read, v1's are not
    assert len(statements) == 3
    assert (again.conversations, again.added) == ({"v1": 3}, {("v1", "album"): 2, ("v1", "tour"): 1})
    fresh = load_profile(session=session, prompt_versions=[None, "v1"], conv_ids=["c1", "c3"])
    assert (fresh.conversations, fresh.added) == ({"v1": 4}, {("v1", "album"): 3, ("v1", "tour"): 1})
    assert reader.load(prompt_versions=["v2"], conv_ids=["c1"]) == RewriterProfile()  # no v2 lemma in c1


def test_a_profile_reader_past_its_bound_reads_the_counts_again(session: Session, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from monitor.checks.store import ProfileReader, findings, record_added_lemmas

    ingest_bytes(session, _convs(range(2)))
    record_added_lemmas(session=session, rows=[("v1", "album", "c0"), ("v1", "tour", "c1")])
    session.flush()
    monkeypatch.setattr(findings, "PROFILE_PAIRS", 1)
    reader = ProfileReader(session=session)
    assert reader.load(prompt_versions=["v1"], conv_ids=["c0", "c1"]).added == {
        ("v1", "album"): 1,
        ("v1", "tour"): 1,
    }
    record_added_lemmas(session=session, rows=[("v1", "album", "c1")])
    session.flush()
    # two pairs kept, more than the bound of one: let go, and "album" is counted again
    assert reader.load(prompt_versions=["v1"], conv_ids=["c0"]).added == {("v1", "album"): 2}


def test_with_a_check_rate_the_profile_counts_the_sampled_conversations(session: Session) -> None:
    """The share's base is the checked sample: "of" is the other sampled conversations, not every one."""
    from monitor.store.models import Record

    rules = load_rules()
    events = _convs(range(16))
    ingest_bytes(session, events)
    draws = sorted(session.scalars(select(Record.check_draw)))
    rate = (draws[9] + draws[10]) / 2  # 10 of the 16 conversations are checked
    check_job(session=session, rules=rules, check_rate=rate)
    styles = [w["style"] for f in list_findings(session=session, checks=[ACW]) for w in f.evidence["words"]]
    assert styles == [{"prompt_version": "v1", "others": 9, "of": 9}] * 10


def test_restyle_undoes_and_redoes_the_style_step_only(rules) -> None:  # type: ignore[no-untyped-def]
    """A span of two unsupported words ("album studios") keeps each part's whole grade, so a grown
    profile can demote the span and an emptied one restores exactly what the plain check said."""
    rec = dataclasses.replace(
        make_record(MSGS, "What did she do later?", "Joan Baez album studios?"), prompt_version="v1"
    )
    (plain,) = added_words.check(rec, rules)
    assert [(w["text"], w["severity"]) for w in plain.evidence["words"]] == [
        ("album", "medium"),
        ("studios", "medium"),
    ]
    grown = RewriterProfile({"v1": 40}, {("v1", "album"): 9, ("v1", "studio"): 7})
    styled = added_words.restyle(plain, grown, "v1")
    assert styled is not None and styled.severity == "low"
    assert styled.evidence["severity_signal"] == "rewriter_style"
    assert [w["style"]["others"] for w in styled.evidence["words"]] == [8, 6]
    assert styled.reason.startswith("'album' (content word that narrows the topic, but the rewriter's style")
    assert added_words.restyle(styled, grown, "v1") is None  # idempotent
    assert added_words.restyle(plain, grown, "v2") is None  # another rewriter's profile says nothing
    back = added_words.restyle(styled, RewriterProfile(), "v1")
    assert back is not None and (back.severity, back.evidence, back.reason) == (
        plain.severity,
        plain.evidence,
        plain.reason,
    )


def test_admission_grades_a_day_again_against_the_grown_profile(session: Session) -> None:
    """Three conversations checked before five more arrive met a profile too small to call "album"
    style (2 others); admission grades them against the store's (7 others), as a one-shot check would."""
    from monitor.settings import load_settings
    from monitor.store.models import QueueItem
    from monitor.worker.jobs import enqueue_job

    rules = load_rules()
    ingest_bytes(session, _convs(range(3)))
    check_job(session=session, rules=rules)
    ingest_bytes(session, _convs(range(3, 8)))
    check_job(session=session, rules=rules)

    def grades() -> dict[str, str]:
        return {f.request_id: f.severity for f in list_findings(session=session, checks=[ACW])}

    assert grades() == {**{f"c{i}_2": "medium" for i in range(3)}, **{f"c{i}_2": "low" for i in range(3, 8)}}
    settings = load_settings().queue
    enqueue_job(session=session, settings=settings, days=[], now=datetime(2024, 3, 5, tzinfo=UTC))
    assert grades() == {f"c{i}_2": "low" for i in range(8)}
    # the day's items are flagged for other findings, none of them for "album" any more
    assert [
        k for kinds in session.scalars(select(QueueItem.kinds)) for k in kinds if k == "added_content_word"
    ] == []
    assert restyle_findings(session=session, days=[date(2024, 3, 4)]) == 0  # idempotent


def test_day_spans_join_consecutive_days_only() -> None:
    assert day_spans([date(2024, 3, 7), date(2024, 3, 4), date(2024, 3, 5), date(2024, 3, 4)]) == [
        (datetime(2024, 3, 4), datetime(2024, 3, 6)),
        (datetime(2024, 3, 7), datetime(2024, 3, 8)),
    ]
    assert day_spans([date(2024, 2, 29), date(2024, 3, 1)]) == [(datetime(2024, 2, 29), datetime(2024, 3, 2))]
    assert day_spans([]) == []


def test_restyle_grades_the_days_given_and_only_those(session: Session, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Read by spans of consecutive days: the findings of Mar 4 and 5 are graded again in one span, those
    of Mar 6 (not given) keep their grade until a later call names their day. Pages of one finding: every
    finding of a span is read, each once."""
    from monitor.checks.store import findings

    monkeypatch.setattr(findings, "RESTYLE_PAGE", 1)

    def conv(i: int, day: int) -> bytes:
        ts = f"2024-03-{day:02d}T08:01:31Z"
        return log(
            ctx_input(
                conv=f"c{i}", req=f"c{i}_2", messages=MSG_LIST, n_messages=1, client_turn_count=1, ts=ts
            ),
            rewrite(
                conv=f"c{i}",
                req=f"c{i}_2",
                latest="And then?",
                query="the singer album",
                prompt_version="v1",
                ts=ts,
            ),
        )

    rules = load_rules()
    ingest_bytes(session, conv(0, 4) + conv(1, 5) + conv(2, 6))
    check_job(session=session, rules=rules)  # a profile of 2 other conversations: "album" is no style yet
    ingest_bytes(session, b"".join(conv(i, 8) for i in range(3, 8)))
    check_job(session=session, rules=rules)

    def grades() -> dict[str, str]:
        return {f.request_id: f.severity for f in list_findings(session=session, checks=[ACW])}

    assert grades() == {
        "c0_2": "medium",
        "c1_2": "medium",
        "c2_2": "medium",
        **{f"c{i}_2": "low" for i in range(3, 8)},
    }
    assert restyle_findings(session=session, days=[date(2024, 3, 5), date(2024, 3, 4)]) == 2
    assert grades() == {"c2_2": "medium", **{f"c{i}_2": "low" for i in (0, 1, *range(3, 8))}}
    assert restyle_findings(session=session, days=[date(2024, 3, 6), date(2024, 3, 8)]) == 1
    assert grades() == {f"c{i}_2": "low" for i in range(8)}
