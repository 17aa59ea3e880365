"""What the registry declares of ``added_content_word``: its id, version and step table (:data:`STEPS`;
``docs/checks.md``'s step table is generated from it)."""

from __future__ import annotations

from monitor.checks.added_words import tuned
from monitor.checks.added_words.place import KEYWORD_MIN_ADDED
from monitor.checks.steps import Step

# v18: a pipeline of named steps; rarity alone grades nothing high (a rare noun restricting the query's
# head is high, another rare word medium); numbers written otherwise and number words; acronyms whose
# initials skip function words; lookups over every transcript token and multi-word WordNet lemmas; the
# surface form before a doubtful lookup lemma; the answer-type, sibling, cause and typo steps retired.
# v19: WordNet's derivational links ("death" for "died"); a noun naming an aspect in answer to an open
# request for more is one step lower; an aspect noun is medium as a modifier, low as a head, whatever
# its rarity. v20: an open request lowers no person or condition ("his wife", "the cancer"); an ordinal
# after "a" ("a second opinion") means "another", a content word rather than a number; "v2" for a received
# "version 2" is restated, low. Earlier versions: docs/checks.md.
VERSION = 20
CHECK_ID = "added_content_word"

_WN = "WordNet 3.0 (Princeton), shipped in monitor/data/wordnet and spacy-lookups-data"
_QUIRK = "Quirk et al., A Comprehensive Grammar of the English Language (1985)"
STEPS = (
    # what the word is (OWN_GRADE order)
    Step(
        "meta_text",
        "low",
        "not_a_query's meta-text and closing forms (monitor.checks.references)",
        "a word of a refusal, chatter, a trailing note or leaked turn, or of a rewrite of a message that "
        "asks nothing: not query text",
    ),
    Step(
        "name_completion",
        "low",
        f"{_QUIRK}, 17.65 (apposition) and 5.60 (proper names); {_WN} (proper-name classes)",
        "a capitalised word beside a logged name that completes it: a first name, a containing place "
        "('Bernadette Peters', 'Austin, Texas')",
    ),
    Step(
        "qualifier_value",
        "high",
        "rules/qualifiers.yaml (constraining kinds; seeds 003)",
        "a value of a constraining qualifier kind (a tier, region, year, demographic ...)",
    ),
    Step(
        "number",
        "high",
        f"{_QUIRK}, 6.63-6.66 (numerals)",
        "a number, date or version (digits or number words) whose value no received turn writes",
    ),
    Step(
        "number_restated",
        "low",
        f"{_QUIRK}, 6.63-6.66; Unicode vulgar fractions",
        "the value of a number a received turn writes otherwise ('7 ½' for '7.5', 'twenty' for '20', "
        "'v2' for 'version 2')",
    ),
    Step("framing", "low", "rules/neutral.yaml framing", "a framing word or general noun"),
    Step(
        "misspelling",
        "low",
        "Damerau, CACM 7 (1964): single-error typing slips",
        "a word WordNet does not know, one edit from a received word or an English contraction ('did't')",
    ),
    Step(
        "acronym",
        "low",
        f"{_QUIRK}, App. I.74-I.76 (acronyms and initialisms)",
        "an abbreviation or expansion of a received form; the initials may skip function words "
        "('Bureau of Labor Statistics' for 'BLS')",
    ),
    Step(
        "derivation",
        "low",
        f"{_QUIRK}, App. I (derivation); monitor.checks.nlp.shared_stem; {_WN} (derivational links)",
        "an inflection, derivation or spelling fix of any received word, stop words included; a "
        "derivation WordNet links ('death' for 'died')",
    ),
    Step(
        "synonym",
        "low",
        f"{_WN} (synsets, multi-word lemmas)",
        "shares a WordNet synset with a received word or multi-word expression ('quit' for 'gave up')",
    ),
    Step(
        "attribute",
        "low",
        f"{_WN} (attribute pointer)",
        "the noun of the quality a received adjective values ('size' for 'big')",
    ),
    Step(
        "antonym_pair",
        "low",
        f"{_WN} (antonym pointer); Jones, Antonymy (2002), ch. 4 (inclusive use)",
        "coordinated with its antonym ('pros and cons'): the pair spans the whole scale",
    ),
    Step(
        "proper_name",
        "high",
        f"{_QUIRK}, 5.60-5.66 (proper nouns)",
        "a new name: capitalised mid-sentence, or an acronym",
    ),
    Step(
        "abstract_noun",
        "low",
        f"{_QUIRK}, App. I.30-I.34 (abstract noun suffixes)",
        "an abstract noun formed by a derivational suffix (involvement, significance)",
    ),
    Step(
        "adverb",
        "low",
        f"{_QUIRK}, 8.87-8.122 (manner and viewpoint adjuncts); {_WN} word classes",
        "a word WordNet knows only as an adverb ('traditionally', 'statistically'): how or from which "
        "viewpoint, not what about",
    ),
    Step(
        "rare_verb",
        "medium",
        f"wordfreq Zipf < {tuned.RARE_ZIPF}; {_WN} word classes",
        "a rare word WordNet knows only as a verb: an action, not what is acted on",
    ),
    Step(
        "aspect_noun",
        "low (medium as a modifier)",
        f"{_WN} noun classes (lexnames)",
        "a noun every sense of which is an act, attribute, communication ...: what about the topic is asked",
    ),
    Step(
        "restricting_noun",
        "high",
        f"{_QUIRK}, 17.2-17.4 (pre- and postmodification restrict the head); "
        f"wordfreq Zipf < {tuned.RARE_ZIPF}",
        "a rare noun that premodifies another noun or heads a prepositional phrase attached to one "
        "('halftime show', 'tips for beginners')",
    ),
    Step(
        "rare_term",
        "medium",
        f"wordfreq Zipf < {tuned.RARE_ZIPF}",
        "another rare word: rarity alone makes a word medium, never high",
    ),
    Step(
        "content_word", "medium", "the added-content-word check (seeds 000)", "any other added content word"
    ),
    # where it stands (PLACE_STEPS order)
    Step(
        "keyword_list",
        "one step lower",
        "keyword queries rank by juxtaposed terms rather than restrict (seeds 000); "
        f"{_WN} noun.person keeps an audience",
        f"a facet in a list of {tuned.KEYWORD_RUN}+ content words, {KEYWORD_MIN_ADDED}+ of them added, "
        "in a query without a question mark",
    ),
    Step(
        "question_frame",
        "one step lower",
        "Moldovan et al., ACL 2000 (question focus); Searle, Indirect speech acts (1975)",
        "the focus of a wh-phrase or the verb of a request frame ('What are the benefits of ...')",
    ),
    Step(
        "generic_head",
        "low",
        "Halliday and Hasan, Cohesion in English (1976), 6.4 (general nouns)",
        "a very common noun after a received modifier ('freelance work')",
    ),
    Step(
        "open_request",
        "one step lower",
        "Searle, Indirect speech acts (1975); Quirk et al. 1985, ch. 6 ('else' after a wh- or indefinite)",
        "a noun heading its own phrase, added to an open request for more ('What else did he do?', "
        "'Tell me more about X')",
    ),
    # the rewriter
    Step(
        "rewriter_style",
        "one step lower",
        "the rewriter profile learned from the store without labels (monitor.checks.profile)",
        "a word the same prompt version adds in many other conversations",
    ),
    Step(
        "learned",
        "moved by the verdicts",
        "the reviewers' verdicts on this rewriter (monitor.checks.learned)",
        "the grade the reviewers' dismissals or confirmations of the word set",
    ),
)
