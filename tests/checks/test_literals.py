"""monitor.checks.literals: the strings a pattern's every match holds, and the pre-filter on them."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.checks.literals import may_match, required_literals

DIGITS = frozenset("0123456789")


def test_literal_runs_alternations_and_small_classes():
    plan = re.compile(r"\b(?P<value>free|basic)\s+(?:tier|plan)s?\b", re.IGNORECASE)
    assert required_literals(plan) == (frozenset({"basic", "free"}), frozenset({"plan", "tier"}))
    # the longest shortest string first, then the smaller set: "v" before a digit
    assert required_literals(re.compile(r"\bV(?P<value>\d+(?:\.\d+){0,2})\b")) == (frozenset({"v"}), DIGITS)
    assert required_literals(re.compile(r"(?:tier|plan)\s*[:=]")) == (
        frozenset({"plan", "tier"}),
        frozenset({":", "="}),
    )
    assert required_literals(re.compile(r"x?y+")) == (frozenset({"y"}),)  # an optional x is no anchor


def test_no_anchor_when_a_match_needs_no_fixed_character():
    assert required_literals(re.compile(r"\w+")) is None
    assert required_literals(re.compile(r"(?:near|\w)")) is None  # a branch without one
    assert required_literals(re.compile(r"[A-Z]+")) is None  # a class too large to say anything


def test_may_match_reads_ascii_text_only():
    anchors = required_literals(re.compile(r"kelvin", re.IGNORECASE))
    assert may_match(anchors, "degrees kelvin")
    assert not may_match(anchors, "degrees celsius")
    # the Kelvin sign matches "k" under IGNORECASE: a text that is not ASCII is always tried
    assert re.search(r"kelvin", "\u212aelvin", re.IGNORECASE)
    assert may_match(anchors, None)
    assert may_match(None, "anything")


WORDS = (
    "in on the production Prod staging dev tier plan: v2 version 1.2.3 2020 1990s 5th century Dublin "
    "region eu-west-1 today later earlier over 65 women Women Kids vegan gluten-free low-carb near Paris "
    "first one \u017ftaging \u212aeto \u0130n Windows macOS OS X . ? ! = - PLAN TIER Upgraded to"
).split()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=12), st.sampled_from([" ", "  ", "\n", ", ", "-"]))
def test_a_shipped_qualifier_pattern_never_matches_a_text_its_anchors_rule_out(rules, words, sep):
    text = sep.join(words)
    lower_ascii = text.lower() if text.isascii() else None
    for kind in rules.kinds:
        for rx, anchors in zip(kind.regexes, kind.anchors, strict=True):
            if rx.search(text):
                assert may_match(anchors, lower_ascii), (kind.kind, rx.pattern, text)
