"""monitor.lexicon's word frequencies: the compact list and Zipf values equal to wordfreq's."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import wordfreq
from hypothesis import given, settings
from hypothesis import strategies as st

from monitor import lexicon
from monitor.lexicon import FrequencyList
from tests.helpers import REPO

zipf = lexicon.zipf.__wrapped__  # uncached, so each case is computed here


def test_frequency_list_finds_each_token_in_its_bucket_and_nothing_else():
    # Bucket i holds tokens i centibels below 1; buckets are sorted within, as wordfreq's are.
    table = FrequencyList([[], ["the"], ["and", "zebra"], ["cafe", "café"], ["the"]])
    assert len(table) == 6
    assert table.centibels("the") == -4  # in two buckets: the later, as wordfreq's dict keeps it
    assert table.centibels("and") == -2
    assert table.centibels("zebra") == -2
    assert table.centibels("café") == -3  # two UTF-8 bytes for é: offsets are in bytes
    assert table.centibels("cafe") == -3
    assert table.centibels("caf") is None
    assert table.centibels("cafés") is None
    assert table.centibels("") is None
    assert table.centibels("zzz") is None
    assert table.centibels("\ud800") is None  # a lone surrogate, which no list holds


def test_frequency_list_holds_wordfreqs_english_list_in_a_few_megabytes():
    table = lexicon.frequency_list()
    buckets = wordfreq.get_frequency_list("en", "large")
    assert len(table) == sum(len(b) for b in buckets) == 321_180  # wordfreq 3.1.1
    assert table.centibels("the") == -(next(i for i, b in enumerate(buckets) if "the" in b))
    held = sum(sys.getsizeof(x) for x in (table._blob, table._offsets, table._buckets))
    assert held < 5 * 2**20  # 2.3 MB of UTF-8, 4 bytes of offset and 2 of bucket a token


def test_zipf_equals_wordfreq_over_its_whole_english_list():
    words = [w for bucket in wordfreq.get_frequency_list("en", "large") for w in bucket]
    differ = [w for w in words if zipf(w) != wordfreq.zipf_frequency(w, "en")]
    assert differ == []


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("the", 7.73),
        ("The", 7.73),  # wordfreq case-folds
        ("e-mail", 4.61),  # two tokens, 1/f = 1/f("e") + 1/f("mail")
        ("2019", 4.71),  # a digit sequence: its bucket of 0000, spread by wordfreq's year curve
        ("covid-19", 3.85),
        ("don't", 6.2),
        ("café", 3.75),
        ("qwzxv", 0.0),  # not in the list
        ("...", 0.0),  # no token at all
        ("", 0.0),
    ],
)
def test_zipf_of_words_wordfreq_tokenises_in_several_ways(word: str, expected: float):
    assert zipf(word) == expected == wordfreq.zipf_frequency(word, "en")


def test_zipf_equals_wordfreq_on_the_shared_logs_words(shared_logs: Path):
    words: set[str] = set()
    for path in sorted(shared_logs.glob("*.jsonl")):
        words.update(re.findall(r"\S+", path.read_text(encoding="utf-8")[:400_000]))
    assert len(words) > 20_000  # JSON fragments and punctuation included: tokenization's hard cases
    differ = [w for w in words if zipf(w) != wordfreq.zipf_frequency(w, "en")]
    assert differ == []


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=12))
def test_zipf_equals_wordfreq_on_any_text(text: str):
    assert zipf(text) == wordfreq.zipf_frequency(text, "en")


def _build_wordnet_script():
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_wordnet", REPO / "scripts" / "build_wordnet.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_wordnet_tables_join_their_items_by_spaces_and_read_back_as_sets():
    build = _build_wordnet_script()
    assert build.joined({"die": ["death", "dying"], "x": []}) == {"die": "death dying", "x": ""}
    with pytest.raises(ValueError, match="give up"):
        build.joined({"quit": ["give up"]})
    with pytest.raises(ValueError, match="hold whitespace"):
        build.joined({"a": ["x\xa0y"]})  # a no-break space: str.split() would split it
    with pytest.raises(ValueError, match="empty"):
        build.joined({"a": ["x", ""]})
    tables = lexicon._wordnet()
    for name in ("synsets", "attributes", "antonyms", "derivations", "noun_classes"):
        values = tables[name].values()
        assert all(isinstance(v, str) and v and v == " ".join(v.split()) for v in values), name
    assert tables["derivations"]["die"] == "death dying"
    assert lexicon.derivations("die") == frozenset({"death", "dying"})
    assert lexicon.antonyms("pro") == frozenset({"anti", "con"})
    assert lexicon.synsets("qwzxv") == frozenset()
    assert lexicon.synsets("big") == frozenset(tables["synsets"]["big"].split())
    # The adjective synsets of data.adj holding "big" beside another lower-case lemma (read with awk
    # from wordnet-base 1:3.0-37's data files).
    assert lexicon.synsets("big") == frozenset(
        "a00173391 a00225672 a00579622 a01111418 a01114658 a01382086 a01488616 a01510444 a01890188 "
        "a01890753 a02402440".split()
    )
