"""monitor.checks.nlp on spacy.blank("en") + lookup lemmas: units, keys, cache, stems."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.checks.nlp import Analyzer, build_transcript, get_analyzer, shared_stem


def test_units_merge_hyphen_and_dot_joined_tokens():
    a = get_analyzer().analyze("Use eu-west-1 on v2.1 (CMK), customer-managed.")
    assert [u.text for u in a.units if u.text[0].isalnum()] == [
        "Use",
        "eu-west-1",
        "on",
        "v2.1",
        "CMK",
        "customer-managed",
    ]
    eu = next(u for u in a.units if u.text == "eu-west-1")
    assert (eu.start, eu.end) == (4, 13)
    assert [a.tokens[i].text for i in range(eu.first, eu.last + 1)] == ["eu", "-", "west-1"]


def test_keys_are_lowercased_lookup_lemmas():
    a = get_analyzer().analyze("Which regions supports Keys?")
    assert [(t.text, t.key, t.is_content) for t in a.tokens] == [
        ("Which", "which", False),
        ("regions", "region", True),
        ("supports", "support", True),
        ("Keys", "key", True),
        ("?", "?", False),
    ]


def test_mid_sentence_capital_is_a_name_signal():
    a = get_analyzer().analyze("Where is Dublin? Frankfurt too.")
    assert [(t.text, t.mid_cap) for t in a.tokens if t.is_content] == [("Dublin", True), ("Frankfurt", False)]


def test_typographic_punctuation_is_normalised_with_offsets_kept():
    text = "Sanders’ 2000–08 term"
    a = get_analyzer().analyze(text)
    assert a.text == "Sanders' 2000-08 term"
    assert len(a.text) == len(text)
    assert "2000" in a.vocab and "08" in a.vocab


def test_glued_tokens_still_support_their_parts():
    a = get_analyzer().analyze("Invasive Ductal Carcinoma (IDC)Infiltrating ducts")
    assert "idc" in a.vocab and "infiltrating" in a.vocab


def test_analysis_is_cached_by_content():
    an = Analyzer()
    first = an.analyze("Per cluster, under Settings.")
    again = an.analyze("Per cluster, under " + "Settings.")
    assert again is first
    assert (an.hits, an.misses) == (1, 1)


def test_cache_is_bounded_by_bytes_lru():
    # each three-character text is estimated at 1024 + 96 * 3 = 1312 bytes: two fit in 2,700
    an = Analyzer(cache_bytes=2_700)
    an.analyze("a b")
    an.analyze("c d")
    assert an.cache_bytes == 2 * 1312
    an.analyze("a b")  # refresh
    an.analyze("e f")  # evicts "c d", the least recently used
    assert an.cached_texts() == ["a b", "e f"] and an.cache_bytes == 2 * 1312
    an.analyze("c d")
    assert (an.hits, an.misses) == (1, 4)
    # a long text takes the room of many short ones: 1024 + 96 * 30 = 3904 bytes, alone over budget,
    # is kept by itself (the one being returned is never evicted)
    an.analyze("x" * 30)
    assert an.cached_texts() == ["x" * 30] and an.cache_bytes == 3904


def test_transcript_find_reports_message_index():
    tr = build_transcript(get_analyzer(), [("user", "plans"), ("assistant", "Dublin region")], "the quota")
    assert tr.find("dublin") == 1
    assert tr.find("plan") == 0
    assert tr.find("quota") == "latest"
    assert tr.find("frankfurt") is None


def test_shared_stem_examples():
    assert shared_stem("involvement", "involved")
    assert shared_stem("popularity", "popular")
    assert shared_stem("beginnings", "beginings")  # one-edit spelling fix
    assert not shared_stem("death", "died")
    assert not shared_stem("formation", "form")  # prefix shorter than 5


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("abc -.'’–XYZ19?"), max_size=40))
def test_token_spans_index_the_original_text(text):
    a = get_analyzer().analyze(text)
    for t in a.tokens:
        assert a.text[t.start : t.end] == t.text
    for u in a.units:
        assert a.text[u.start : u.end] == u.text


@given(
    st.text(alphabet="abcdefgh", min_size=1, max_size=12),
    st.text(alphabet="abcdefgh", min_size=1, max_size=12),
)
def test_shared_stem_is_symmetric(a, b):
    assert shared_stem(a, b) == shared_stem(b, a)


def test_wordnet_synonymy_and_word_classes():
    """Synonymy is a shared synset and nothing wider: values read off WordNet 3.0 by hand."""
    from monitor.checks.nlp import only_verb, synonym_in, synsets

    assert synsets("famous") & synsets("notable")  # famous.s.01: famous, celebrated, notable, noted...
    assert not synsets("solar") & synsets("lunar")  # co-hyponyms
    assert not synsets("dog") & synsets("animal")  # hypernym
    assert synsets("qwxz") == frozenset()
    a = get_analyzer().analyze("Do I need scripts?")
    assert synonym_in(("require",), [a]) == (0, "need")
    assert synonym_in(("require", "need"), [a]) is None  # the word itself is not its own synonym
    assert (only_verb("clarify"), only_verb("run"), only_verb("biography")) == (True, False, False)


def test_noun_classes_read_wordnet_lexicographer_files():
    """Values read off WordNet 3.0's index.noun and data.noun by hand (biography: one noun.communication
    sense)."""
    from monitor.checks.nlp import noun_classes

    assert noun_classes("biography", "biography") == {"communication"}
    assert noun_classes("testimonials", "testimonial") == {"communication"}  # a regular plural: the lemma
    assert noun_classes("strategies", "strategy") == {"cognition"}
    assert noun_classes("killed", "kill") == frozenset()  # a verb form, though "kill" is a noun too
    assert {"state", "act"} <= noun_classes("stroke", "stroke")


def test_trailing_meta_starts_at_the_note_or_leaked_turn():
    from monitor.checks.references import meta_tail_start

    q = "guinea pig habitat\n\nThis rewritten query:\n- Replaces the pronoun"
    assert meta_tail_start(q) == q.index("\n\nThis")
    assert meta_tail_start("IBM storage options\nHuman: Output ONLY the query") == len("IBM storage options")
    assert meta_tail_start("This query is about Rome") is None  # a first line is the query itself
