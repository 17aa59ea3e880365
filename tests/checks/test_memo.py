"""The per-text memo the checks keep for each message of a conversation."""

from __future__ import annotations

from monitor.checks.memo import TextMemo


def test_a_text_is_computed_once_while_it_is_held() -> None:
    calls: list[str] = []
    memo = TextMemo(lambda t: calls.append(t) or len(t), max_chars=10)
    assert (memo("abcd"), memo("abcd"), memo("xy")) == (4, 4, 2)
    assert calls == ["abcd", "xy"]
    assert memo.chars == 6


def test_the_least_recently_used_texts_leave_past_the_bound() -> None:
    calls: list[str] = []
    memo = TextMemo(lambda t: calls.append(t) or t.upper(), max_chars=10)
    memo("aaaa")
    memo("bbbb")
    memo("aaaa")  # now the most recent
    memo("cccc")  # 12 characters: "bbbb" goes
    assert memo.chars == 8
    memo("aaaa")
    memo("bbbb")
    assert calls == ["aaaa", "bbbb", "cccc", "bbbb"]


def test_a_text_longer_than_the_bound_is_kept_alone() -> None:
    memo = TextMemo(len, max_chars=3)
    memo("ab")
    assert memo("abcdef") == 6
    assert memo.chars == 6
