"""monitor.checks.nlp on spacy.blank("en") + lookup lemmas: units, keys, cache, stems."""

from __future__ import annotations

import pytest
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


def test_a_surface_is_lemmatised_before_the_parts_of_a_glued_token():
    # "CDs" is looked up as "cds" (absent) then as written ("CD"); the glued "x.cds" before it must not
    # teach the lemma memo "cds" -> "cds" first, as a lazy-token build once did
    a = Analyzer().analyze("x.cds CDs")
    assert [(t.text, t.key) for t in a.tokens] == [("x.cds", "x.cds"), ("CDs", "cd")]
    assert {"cd", "cds", "x"} <= a.vocab


def test_analysis_is_cached_by_content():
    an = Analyzer()
    first = an.analyze("Per cluster, under Settings.")
    again = an.analyze("Per cluster, under " + "Settings.")
    assert again is first
    assert (an.hits, an.misses) == (1, 1)


def test_cache_is_bounded_by_bytes_lru():
    # each three-character text is estimated at 1024 + 21 * 3 = 1087 bytes: two fit in 2,200
    an = Analyzer(cache_bytes=2_200)
    an.analyze("a b")
    an.analyze("c d")
    assert an.cache_bytes == 2 * 1087
    an.analyze("a b")  # refresh
    an.analyze("e f")  # evicts "c d", the least recently used
    assert an.cached_texts() == ["a b", "e f"] and an.cache_bytes == 2 * 1087
    an.analyze("c d")
    assert (an.hits, an.misses) == (1, 4)
    # a long text takes the room of many short ones: 1024 + 21 * 80 = 2704 bytes, alone over budget,
    # is kept by itself (the one being returned is never evicted)
    an.analyze("x" * 80)
    assert an.cached_texts() == ["x" * 80] and an.cache_bytes == 2704
    an.clear_cache()  # what `rewrite-monitor run` does between checking and admission (release_analyses)
    assert an.cached_texts() == [] and an.cache_bytes == 0
    an.analyze("a b")
    assert (an.hits, an.misses) == (1, 6)


def test_release_analyses_empties_built_analyzers_and_builds_none(monkeypatch):
    from monitor.checks.nlp import analyzer as module
    from monitor.checks.nlp import release_analyses

    # a process whose check processes did the analysing has built no analyzer: nothing is built
    monkeypatch.setattr(module, "_DEFAULT", {})
    assert release_analyses() == 0 and module._DEFAULT == {}
    an, other = Analyzer(cache_bytes=10_000), Analyzer(cache_bytes=10_000)
    module._DEFAULT[None] = an
    module._DEFAULT["another model"] = other  # as use_model("another model") leaves it
    an.analyze("a b")
    an.analyze("c d")
    other.analyze("e f")
    assert release_analyses() == 3
    assert an.cached_texts() == [] and an.cache_bytes == 0
    assert other.cached_texts() == [] and other.cache_bytes == 0
    assert list(module._DEFAULT) == [None, "another model"]


def test_tokens_are_built_on_first_use_and_charged_to_the_cache():
    an = Analyzer(cache_bytes=10_000)
    a = an.analyze("a b")
    b = an.analyze("c d")
    assert "b" in a.vocab and an.cache_bytes == 2 * 1087
    # the tokens of "a b" add 224 + 49 * 3 = 371 bytes, counted while the cache holds it
    assert [t.text for t in a.tokens] == ["a", "b"] and [u.text for u in a.units] == ["a", "b"]
    assert a.nbytes == 1087 + 371 and an.cache_bytes == 2 * 1087 + 371
    assert a.tokens is a.tokens  # built once
    # an analysis the cache has let go of is no longer counted, tokens or not
    small = Analyzer(cache_bytes=1_500)
    first = small.analyze("a b")
    small.analyze("c d")  # evicts "a b"
    assert small.cache_bytes == 1087 and not first.cached
    assert first.tokens[0].text == "a" and small.cache_bytes == 1087
    assert b.tokens[1].text == "d"


def test_emptied_memos_and_a_renewed_tokenizer_give_the_same_analyses(monkeypatch):
    from monitor.checks.nlp import analyzer

    texts = [f"{i}: CDs of x.cds, eu-west-{i}, {i * 7} Keys in {chr(65 + i % 26)}ville." for i in range(30)]
    default = Analyzer()
    want = [_fields(default.analyze(t)) for t in texts]
    # memos of 20 surfaces and a vocabulary renewed every few texts (a blank one holds 764 lexemes)
    monkeypatch.setattr(analyzer, "MEMO_SURFACES", 20)
    monkeypatch.setattr(analyzer, "VOCAB_LEXEMES", 850)
    small = Analyzer()
    assert [_fields(small.analyze(t)) for t in texts] == want
    assert 0 < small.renewals < 10
    # one of two processes: renewed past 425 lexemes, below a blank vocabulary's 764, so before every text;
    # the same analyses
    halved = Analyzer(share=2)
    assert halved.vocab_lexemes == 425
    assert [_fields(halved.analyze(t)) for t in texts] == want
    assert halved.renewals == len(texts)


def test_a_process_of_many_keeps_room_for_the_common_words():
    # 200,000 over 64 would be 3,125 lexemes, below the common words every process meets: the floor is
    # MEMO_SURFACES (50,000)
    assert Analyzer(share=64).vocab_lexemes == 50_000
    assert Analyzer(share=2).vocab_lexemes == 100_000 and Analyzer().vocab_lexemes == 200_000


def test_a_share_below_one_is_refused():
    with pytest.raises(ValueError, match="share must be at least 1"):
        Analyzer(share=0)


def _fields(a):
    return a.text, a.vocab, a.stems, a.content_keys, a.tokens, a.units


def test_transcript_find_reports_message_index():
    tr = build_transcript(get_analyzer(), [("user", "plans"), ("assistant", "Dublin region")], "the quota")
    assert tr.find("dublin") == 1
    assert tr.find("plan") == 0
    assert tr.find("quota") == "latest"
    assert tr.find("frankfurt") is None


def test_alias_matches_need_every_key_of_a_member_in_the_vocabulary():
    from monitor.checks.nlp import alias_matches, build_alias_index

    an = Analyzer()
    index = build_alias_index([("eu-west-1", ["eu-west-1", "Ireland"]), ("tv", ["TV", "television"])], an)
    hit = an.analyze("Prices in eu-west-1, then Ireland.")
    assert alias_matches(hit, index) == ((0, 2, 4), (0, 7, 7))
    # "eu" starts a member but "west-1" is nowhere: no match, known from the vocabulary alone, so the
    # text's tokens are never built (nor their bytes charged)
    before = an.cache_bytes
    near = an.analyze("The eu rules")
    assert alias_matches(near, index) == () and an.cache_bytes == before + 1024 + 21 * 12
    # whole member, but not on unit boundaries: the tokens decide
    inside = an.analyze("see eu-west-10")
    assert alias_matches(inside, index) == ()


def test_transcript_alias_groups_among_the_query_groups():
    from monitor.checks.nlp import build_alias_index

    an = Analyzer()
    index = build_alias_index([("eu-west-1", ["eu-west-1", "Ireland"]), ("tv", ["TV", "television"])], an)
    tr = build_transcript(an, [("user", "Ireland on TV"), ("assistant", "Sure.")], "and there?")
    assert tr.alias_groups(index) == {0, 1}
    assert tr.alias_groups(index, among={1}) == {1}
    assert tr.alias_groups(index, among=set()) == frozenset()


def test_capitalised_token_is_the_first_written_in_capitals():
    from monitor.checks.nlp import capitalised_token

    an = Analyzer()
    a = an.analyze("Sad news: SAD, or Sad again, and IBM.")
    assert capitalised_token(a, "sad") == "SAD"
    assert capitalised_token(a, "ibm") == "IBM"
    assert capitalised_token(a, "news") is None  # written in lower case
    before = an.cache_bytes
    plain = an.analyze("no capitals here")
    assert capitalised_token(plain, "ibm") is None and an.cache_bytes == before + 1024 + 21 * 16


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
    from monitor.checks.nlp import synonym_in
    from monitor.lexicon import only_verb, synsets

    assert synsets("famous") & synsets("notable")  # famous.s.01: famous, celebrated, notable, noted...
    assert not synsets("solar") & synsets("lunar")  # co-hyponyms
    assert not synsets("dog") & synsets("animal")  # hypernym
    assert synsets("qwxz") == frozenset()
    # {Son, Word, Logos} are names of the Trinity's second person: no common "son" is a "word"
    assert not synsets("son") & synsets("word")
    assert synsets("son") & synsets("boy")  # son.n.01: son, boy
    a = get_analyzer().analyze("Do I need scripts?")
    assert synonym_in(("require",), [a]) == (0, "need")
    assert synonym_in(("require", "need"), [a]) is None  # the word itself is not its own synonym
    assert (only_verb("clarify"), only_verb("run"), only_verb("biography")) == (True, False, False)


def test_synonyms_and_attributes_are_found_without_building_tokens():
    from monitor.checks.nlp import attribute_in, synonym_in

    an = Analyzer()
    a = an.analyze("How big is the famous crater?")
    assert a.content_keys == ("big", "famous", "crater")
    before = an.cache_bytes
    assert synonym_in(("notable",), [a]) == (0, "famous")
    assert attribute_in(("size",), [an.analyze("A plain text.")]) is None
    assert an.cache_bytes == before + 1024 + 21 * 13  # the second text, no tokens for either
    assert attribute_in(("size",), [a]) == (0, "big")  # "big" is in the vocabulary: its tokens decide


def test_noun_classes_read_wordnet_lexicographer_files():
    """Values read off WordNet 3.0's index.noun and data.noun by hand (biography: one noun.communication
    sense)."""
    from monitor.lexicon import noun_classes

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


def test_the_lemma_table_answers_as_the_lookup_lemmatizer_does():
    """The analyzer reads spacy-lookups-data's ``lemma_lookup`` as a plain dict; spaCy's lookup
    lemmatizer keeps the same entries in a ``Table`` keyed by string hash. Same answer for every entry,
    and for a word missing from both."""
    import spacy

    from monitor.checks.nlp.analyzer import _blank_english

    nlp, table = _blank_english()
    assert nlp.pipe_names == [] and len(table) == 41_582
    assert (table["went"], table["mice"], table["studies"]) == ("go", "mouse", "study")
    reference = spacy.blank("en")
    reference.add_pipe("lemmatizer", config={"mode": "lookup"})
    reference.initialize()
    lookup = reference.get_pipe("lemmatizer").lookups.get_table("lemma_lookup")
    assert len(lookup) == len(table)
    assert all(lookup.get(surface) == lemma for surface, lemma in table.items())
    assert table.get("zzyzxq") is None and lookup.get("zzyzxq") is None
