"""Build ``monitor/data/wordnet/synsets.json.gz``: the WordNet synonym sets and noun classes the checks read.

Source: Princeton WordNet 3.0 as Debian packages it (``apt-get install wordnet-base``: the files
``/usr/share/wordnet/data.{noun,verb,adj,adv}``), under the WordNet 3.0 licence, which the output folder
carries as ``LICENSE``. Only synonymy is kept: for each lemma, the ids of the synsets with at least two
lower-case lemmas it belongs to (capitalised lemmas are names and titles: "Word" and "Son" share a
synset as names of the Trinity's second person, which makes no common "word" a "son"). No hypernyms,
hyponyms or sister terms: a co-hyponym swap (solar for lunar) is what a fabrication looks like, so it
must not count as support. Beside them, for each noun lemma, the lexicographer files (``lexnames(5)``:
``noun.person``, ``noun.act`` ...) its senses are filed in: the checks read them to tell a word naming
an aspect of a topic from one naming a new thing. The *attribute* links between adjectives and the
nouns of the qualities they value ("big" / "size"), which :func:`attributes` describes. The
*antonym* links between two words ("advantage" / "disadvantage", :func:`antonyms`), and the
*derivationally related form* links ("die" / "death", "found" / "founder": :func:`derivations`).

Usage: ``python scripts/build_wordnet.py [WORDNET_DIR]`` (default ``/usr/share/wordnet``). Deterministic:
the same input gives the same bytes (sorted keys, gzip without a timestamp). Exits 2 when the folder has
no WordNet data files.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "monitor" / "data" / "wordnet"
POS = ("noun", "verb", "adj", "adv")


def synsets(folder: Path) -> dict[str, list[str]]:
    """lemma -> sorted synset ids (``n01234567``: part of speech letter + byte offset in its data file),
    for the synsets with at least two lower-case lemmas. A capitalised lemma names a person, place or
    title ({Son, Word, Logos}: the second person of the Trinity); a lower-case word in a text is not
    that name, so it is no member here."""
    out: dict[str, set[str]] = defaultdict(set)
    for pos in POS:
        for sid, lemmas, _ in _lemmas_and_pointers(folder, pos):
            words = {w for w in lemmas if w == w.lower()}
            if len(words) < 2:
                continue
            for w in words:
                out[w].add(sid)
    return {w: sorted(ids) for w, ids in sorted(out.items())}


LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute noun.body "
    "noun.cognition noun.communication noun.event noun.feeling noun.food noun.group noun.location "
    "noun.motive noun.object noun.person noun.phenomenon noun.plant noun.possession noun.process "
    "noun.quantity noun.relation noun.shape noun.state noun.substance noun.time"
).split()
"""WordNet's lexicographer file names by number (``lexnames(5)``; the nouns are 3..28)."""


def noun_classes(folder: Path) -> dict[str, str]:
    """Noun lemma -> its senses' lexicographer classes, distinct, space-separated, without the ``noun.``
    prefix (``"biography": "communication"``). Single-word lemmas only: the checks look up one token."""
    lexfile: dict[str, str] = {}
    for line in (folder / "data.noun").read_text(encoding="latin-1").splitlines():
        if not line.startswith("  "):
            parts = line.split(maxsplit=2)
            lexfile[parts[0]] = LEXNAMES[int(parts[1])].removeprefix("noun.")
    out: dict[str, str] = {}
    for line in (folder / "index.noun").read_text(encoding="latin-1").splitlines():
        if line.startswith("  "):
            continue
        # wndb(5) index line: lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt offsets
        parts = line.split()
        if "_" in parts[0]:
            continue
        offsets = parts[-int(parts[2]) :]
        out[parts[0]] = " ".join(sorted({lexfile[o] for o in offsets}))
    return dict(sorted(out.items()))


def _lemmas_and_pointers(
    folder: Path, pos: str
) -> Iterator[tuple[str, list[str], list[tuple[str, str, str]]]]:
    """Per synset of ``data.<pos>``: its id, its lemmas as WordNet spells them (without an adjective's
    syntactic marker "(a)", "(p)"), and its pointers as (symbol, target id, source/target field).
    ``wndb(5)``: offset, lexicographer file, synset type, word count (hex), then word/lex_id pairs, a
    three-digit pointer count, then per pointer its symbol, target offset, target part of speech and
    source/target field (two hex word numbers, 0000 for a pointer between whole synsets). Lines starting
    with two spaces are the licence header."""
    for line in (folder / f"data.{pos}").read_text(encoding="latin-1").splitlines():
        if line.startswith("  "):
            continue
        parts = line.split()
        count = int(parts[3], 16)
        words = [parts[4 + 2 * i].split("(")[0] for i in range(count)]
        at = 4 + 2 * count
        ptrs = [
            (parts[at + 1 + 4 * k], parts[at + 3 + 4 * k][0] + parts[at + 2 + 4 * k], parts[at + 4 + 4 * k])
            for k in range(int(parts[at]))
        ]
        yield f"{pos[0]}{parts[0]}", words, ptrs


def attributes(folder: Path) -> dict[str, list[str]]:
    """Lemma -> the lemmas WordNet links to it by the *attribute* pointer (``=``), which joins an
    adjective to the noun of the quality it values: "big" and "small" to "size", "fast" to "speed",
    "old" to "age". Both directions; single words only. Not synonymy, not hypernymy: the noun names the
    scale the adjective is a point on, so a question asked with one is asked with the other ("how big"
    / "what size")."""
    lemmas: dict[str, list[str]] = {}
    links: list[tuple[str, str]] = []
    for pos in ("noun", "adj"):
        for sid, words, ptrs in _lemmas_and_pointers(folder, pos):
            lemmas[sid] = [w.lower() for w in words if "_" not in w]
            links += [(sid, target) for sym, target, _ in ptrs if sym == "="]
    out: dict[str, set[str]] = defaultdict(set)
    for a, b in links:
        for x in lemmas.get(a, []):
            for y in lemmas.get(b.replace("s", "a", 1) if b.startswith("s") else b, []):
                if x != y:
                    out[x].add(y)
                    out[y].add(x)
    return {w: sorted(v) for w, v in sorted(out.items())}


def _lexical_links(folder: Path, symbol: str) -> dict[str, list[str]]:
    """Lemma -> the lemmas WordNet links to it by the lexical pointer ``symbol`` (a pointer from one word of
    a synset to one word of another, whose source/target field gives the two words' numbers in their
    synsets: ``wndb(5)``). Lower-case single words only (a capitalised lemma is a name), both
    directions."""
    words: dict[str, list[str]] = {}
    links: list[tuple[str, int, str, int]] = []
    for pos in POS:
        for sid, lemmas, ptrs in _lemmas_and_pointers(folder, pos):
            words[sid] = lemmas
            links += [(sid, int(f[:2], 16), t, int(f[2:], 16)) for sym, t, f in ptrs if sym == symbol]
    out: dict[str, set[str]] = defaultdict(set)
    for a, src, b, dst in links:
        b = b.replace("s", "a", 1) if b.startswith("s") else b  # a satellite lives in data.adj
        if b not in words or not (0 < src <= len(words[a]) and 0 < dst <= len(words[b])):
            continue
        x, y = words[a][src - 1], words[b][dst - 1]
        if x == x.lower() and y == y.lower() and "_" not in x + y and x != y:
            out[x].add(y)
            out[y].add(x)
    return {w: sorted(v) for w, v in sorted(out.items())}


def antonyms(folder: Path) -> dict[str, list[str]]:
    """Lemma -> the lemmas WordNet links to it by the *antonym* pointer (``!``): "advantage" /
    "disadvantage", "pro" / "con", "strength" / "weakness". The checks read it for coordinated antonyms
    ("advantages and disadvantages"), which ask about a whole scale."""
    return _lexical_links(folder, "!")


def derivations(folder: Path) -> dict[str, list[str]]:
    """Lemma -> the lemmas WordNet links to it by the *derivationally related form* pointer (``+``): "die"
    / "death", "found" / "founder", "marry" / "marriage", "win" / "winner". The checks read it for words
    derived from a received word that share no spelled stem with it."""
    return _lexical_links(folder, "+")


def joined(table: dict[str, list[str]]) -> dict[str, str]:
    """Each value's items joined by spaces ("a00001740 n00002137"), as the file stores them: one string a
    lemma loads in 21.7 MB of RSS and 0.10 s where a list of strings took 33.2 MB and 0.17 s (the
    whole file, ``json.loads`` after a heap trim; JSON makes a string object of every occurrence). The
    readers split on whitespace, so an item must be one non-empty run of non-whitespace; WordNet writes a
    multi-word lemma with ``_``, so each is (raises ``ValueError`` naming the first three that are not)."""
    bad = [x for items in table.values() for x in items if x.split() != [x]]
    if bad:
        raise ValueError(f"items that are empty or hold whitespace cannot be joined by spaces: {bad[:3]}")
    return {key: " ".join(items) for key, items in table.items()}


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else Path("/usr/share/wordnet")
    if not all((folder / f"data.{pos}").is_file() for pos in POS):
        print(f"no WordNet data files in {folder} (apt-get install wordnet-base)", file=sys.stderr)
        return 2
    version = "unknown"
    try:
        version = subprocess.run(
            ["dpkg-query", "-W", "-f=${Version}", "wordnet-base"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    table = synsets(folder)
    doc = {
        "source": f"Princeton WordNet 3.0, Debian package wordnet-base {version}",
        "licence": "WordNet 3.0 (see LICENSE beside this file)",
        "synsets": joined(table),
        "noun_classes": noun_classes(folder),
        "attributes": joined(attributes(folder)),
        "antonyms": joined(antonyms(folder)),
        "derivations": joined(derivations(folder)),
    }
    OUT.mkdir(parents=True, exist_ok=True)
    raw = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
    (OUT / "synsets.json.gz").write_bytes(gzip.compress(raw, compresslevel=9, mtime=0))
    licence = Path("/usr/share/doc/wordnet-base/copyright")
    if licence.is_file():
        (OUT / "LICENSE").write_text(licence.read_text())
    print(f"{len(table):,} lemmas in synonym sets -> {OUT / 'synsets.json.gz'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
