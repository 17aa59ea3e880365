"""Learned word evidence (issue 15): the Beta posterior by hand, the steps it implies, the floors of a
constraint, and how a learned step reaches a finding and the rules' identity."""

from __future__ import annotations

import dataclasses

import pytest

from monitor.checks import added_words, intent
from monitor.checks.learned import (
    LearnedTable,
    WordEvidence,
    beta_cdf,
    beta_quantile,
    rewriter_key,
    shifted,
)
from monitor.checks.profile import RewriterProfile
from tests.factories import make_record

ACW = "added_content_word"
MSGS = [("user", "Tell me about Joan Baez."), ("assistant", "She is an American folk singer.")]


def word(lemma: str = "album", **over: object) -> WordEvidence:
    fields: dict[str, object] = {"kind": ACW, "rewriter": "v1", "lemma": lemma}
    fields.update(over)
    return WordEvidence(**fields)  # type: ignore[arg-type]


def test_beta_cdf_against_the_binomial_identity_and_closed_forms() -> None:
    # I_0.3(2, 3) = P(Binomial(4, 0.3) >= 2) = 1 - 0.7^4 - 4 * 0.3 * 0.7^3 = 0.3483
    assert beta_cdf(0.3, 2, 3) == pytest.approx(0.3483, abs=1e-12)
    assert beta_cdf(0.7, 5, 1) == pytest.approx(0.7**5, abs=1e-12)  # Beta(5, 1): x^5
    # Beta(1/2, 1/2) is the arcsine law: (2 / pi) asin(sqrt(x)), 1/3 at x = 1/4
    assert beta_cdf(0.25, 0.5, 0.5) == pytest.approx(1 / 3, abs=1e-10)
    assert beta_quantile(0.05, 5, 1) == pytest.approx(0.05 ** (1 / 5), abs=1e-9)
    with pytest.raises(ValueError, match="above 0"):
        beta_cdf(0.5, 0, 1)


def test_demoted_after_the_fourth_dismissal_and_not_before() -> None:
    """No other verdicts for the rewriter: the uniform prior, bound 0.05^(1/(d+1))."""
    bounds = [word(dismissed=d, reviewers=1).lower_bound for d in range(6)]
    assert bounds == pytest.approx([0.05 ** (1 / (d + 1)) for d in range(6)], abs=1e-9)
    assert [word(dismissed=d, reviewers=1).steps for d in range(6)] == [0, 0, 0, 0, -1, -1]
    assert word(dismissed=4, reviewers=1).why == "dismissed 4 of 4 times for 'v1' by 1 reviewer"


def test_the_second_step_needs_two_reviewers() -> None:
    # 10 dismissals: bound 0.05^(1/11) = 0.7616 >= 0.75
    assert word(dismissed=10, reviewers=1).steps == -1
    assert word(dismissed=10, reviewers=2).steps == -2
    assert word(dismissed=9, reviewers=2).steps == -1  # 0.7411 < 0.75


def test_a_confirmed_fabrication_undoes_a_demotion_and_raises_the_word() -> None:
    assert word(dismissed=6, reviewers=2).steps == -1
    confirmed = word(dismissed=6, confirmed=1, reviewers=2)
    assert confirmed.steps == 1
    assert confirmed.effect == "one step higher"
    assert confirmed.why == "confirmed 1 of 7 times for 'v1'"


def test_a_pin_wins_over_the_verdicts() -> None:
    assert word(dismissed=6, confirmed=1, pinned=0).steps == 0
    assert word(pinned=-1).why == "dismissed 0 of 0 times for 'v1'; pinned by an operator to one step lower"


def test_the_prior_is_pooled_from_the_rewriters_other_items() -> None:
    """17 dismissed and 2 confirmed other items: m = 18/21 = 6/7, prior (12/7, 2/7); one dismissal of the
    word gives Beta(19/7, 2/7), whose 5% quantile is above 0.5: one step lower at the first dismissal."""
    album = word("album", dismissed=1, reviewers=1, others=(17, 2))
    assert album.prior == pytest.approx((12 / 7, 2 / 7))
    assert album.posterior == pytest.approx((19 / 7, 2 / 7))
    assert beta_cdf(album.lower_bound, 19 / 7, 2 / 7) == pytest.approx(0.05, abs=1e-9)
    assert 0.57 < album.lower_bound < 0.58
    assert album.steps == -1
    # the pool alone never demotes a word nobody has judged
    assert word("album", others=(17, 2)).steps == 0
    # a rewriter whose other items were real inventions as often as not: the uniform prior's pace
    assert word("album", dismissed=1, reviewers=1, others=(5, 5)).steps == 0


def test_the_table_hash_follows_the_steps_only(rules) -> None:  # type: ignore[no-untyped-def]
    assert LearnedTable().hash == ""
    assert LearnedTable.of([word(dismissed=3)]).hash == ""  # no step yet
    four = LearnedTable.of([word(dismissed=4)])
    assert len(four.hash) == 16
    assert LearnedTable.of([word(dismissed=5)]).hash == four.hash  # same step, same identity
    assert LearnedTable.of([word(dismissed=4, confirmed=1)]).hash != four.hash
    # the rules: a fresh store keeps the files' hash; a learned step changes it, the same way every time
    assert rules.with_learned(LearnedTable()).hash == rules.hash
    learned = rules.with_learned(four)
    assert learned.hash != rules.hash and learned.files_hash == rules.hash
    assert learned.with_learned(four).hash == learned.hash
    assert learned.with_learned(None).hash == rules.hash


def test_shifted_keeps_a_constraint_at_medium() -> None:
    assert shifted("high", -2, "number") == "medium"
    assert shifted("high", -2, "proper_name") == "medium"
    assert shifted("high", -2, "rare_term") == "low"
    assert shifted("low", 1, "content_word") == "medium"
    assert shifted("high", 1, "rare_term") == "high"
    assert shifted("low", -1, "number") == "low"


def test_rewriter_key_prefers_the_prompt_version() -> None:
    assert rewriter_key("v1", "m1") == "v1"
    assert rewriter_key(None, "m1") == "m1"
    assert rewriter_key(None, None) == ""


def _graded(rules, table: LearnedTable, query: str = "What was Joan Baez's album in 1975?"):  # type: ignore[no-untyped-def]
    rec = dataclasses.replace(make_record(MSGS, "What did she do later?", query), prompt_version="v1")
    return {
        w["text"]: w for f in added_words.check(rec, rules.with_learned(table)) for w in f.evidence["words"]
    }


def test_a_learned_step_moves_the_word_and_says_why(rules) -> None:  # type: ignore[no-untyped-def]
    plain = _graded(rules, LearnedTable())
    assert (plain["album"]["severity"], plain["album"]["signal"]) == ("medium", "content_word")
    assert plain["1975"]["severity"] == "high"
    table = LearnedTable.of(
        [word("album", dismissed=4, reviewers=1), word("1975", dismissed=10, reviewers=2)]
    )
    got = _graded(rules, table)
    album = got["album"]
    assert (album["severity"], album["signal"]) == ("low", "content_word")
    assert album["graded"] == {
        "severity": "medium",
        "signal": "content_word",
        "step": "content_word",
        "why": "content word that narrows the topic",
    }
    assert album["step"] == "learned"
    assert album["learned"]["steps"] == -1 and album["learned"]["dismissed"] == 4
    assert album["why"] == (
        "content word that narrows the topic; reviewers: dismissed 4 of 4 times for 'v1' by 1 reviewer"
    )
    # a year two steps down stays at medium: a constraint is a constraint whoever adds it
    assert (got["1975"]["severity"], got["1975"]["learned"]["steps"]) == ("medium", -2)
    # another rewriter's verdicts do not move this one's words
    other = LearnedTable.of([word("album", rewriter="v2", dismissed=4, reviewers=1)])
    assert _graded(rules, other)["album"] == plain["album"]


def test_a_confirmed_word_is_raised_and_restyle_keeps_the_learned_step(rules) -> None:  # type: ignore[no-untyped-def]
    raised = _graded(rules, LearnedTable.of([word("career", confirmed=1)]), "Joan Baez career")
    assert (raised["career"]["severity"], raised["career"]["graded"]["severity"]) == ("medium", "low")
    rec = dataclasses.replace(
        make_record(MSGS, "What did she do later?", "Joan Baez album?"), prompt_version="v1"
    )
    table = LearnedTable.of([word("album", dismissed=4, reviewers=1)])
    (f,) = added_words.check(rec, rules.with_learned(table))
    assert f.severity == "low"
    # queue admission re-grades only the style step: the learned step stays as the check run gave it
    assert added_words.restyle(f, RewriterProfile(), "v1") is None
    grown = RewriterProfile({"v1": 40}, {("v1", "album"): 9})
    styled = added_words.restyle(f, grown, "v1")
    assert styled is not None
    (w,) = styled.evidence["words"]
    # style (medium -> low), then the learned step (already at low): the style's signal, the own grade kept
    assert (w["severity"], w["signal"], w["graded"]["severity"]) == ("low", "rewriter_style", "medium")


def test_intent_reads_a_dismissed_lost_word_as_framing(rules) -> None:  # type: ignore[no-untyped-def]
    msgs = [("user", "Tell me about the Dublin region."), ("assistant", "It is in Ireland.")]
    rec = dataclasses.replace(
        make_record(msgs, "What is the monthly uptime SLA?", "What is the uptime SLA of Dublin?"),
        prompt_version="v1",
    )
    (plain,) = intent.check(rec, rules)
    assert plain.severity == "medium"
    table = LearnedTable.of([WordEvidence("intent_dropped", "v1", "monthly", dismissed=4, reviewers=1)])
    (learned,) = intent.check(rec, rules.with_learned(table))
    assert learned.severity == "low"
    assert learned.evidence["missing"][0]["learned"] == {
        "steps": -1,
        "why": "dismissed 4 of 4 times for 'v1' by 1 reviewer",
    }
    assert learned.reason.endswith("; reviewers on 'monthly': dismissed 4 of 4 times for 'v1' by 1 reviewer")
    assert learned.evidence["n_intent_words"] == plain.evidence["n_intent_words"] == 3
