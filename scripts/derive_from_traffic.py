"""Print what two grading steps of ``added_content_word`` were derived from: the unlabelled traffic.

Issue 31 asks the question-frame, keyword-list and open-request steps to follow what rewriters do
everywhere, not what the labelled items show. On every shared log and traffic file (no label is read),
this prints:

1. per file, the share of queries with no question mark that hold a run of k or more content words
   (k = 2..6): a natural-language rewriter almost never writes a run of ``KEYWORD_RUN``, a keyword
   rewriter often does (``monitor.checks.added_words.KEYWORD_RUN``);
2. the two-word openings the rewriters write where the user did not (what a rewriter adds to frame a
   question), with how many of them a question-frame pattern covers
   (``monitor.checks.added_words.QUESTION_FRAME_RES``);
3. per file, the share of latest messages that are an open request for more
   (``monitor.checks.added_words.OPEN_REQUEST_RE``) and the share of those whose query adds a word: the
   step is worth having only if open requests occur across rewriters and their rewrites add words.

Usage: ``.venv/bin/python scripts/derive_from_traffic.py [DATA]`` (default ``../shared/data``).
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

from monitor.checks.added_words import KEYWORD_RUN, QUESTION_FRAME_RES, open_request
from monitor.checks.base import analyzer


def rewrites(path: Path) -> list[dict[str, str]]:
    """The rewrite events of a log file (``latest`` and ``query``)."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if "query" in event and "latest" in event:
            out.append({"latest": event["latest"], "query": event["query"]})
    return out


def longest_run(query: str) -> int:
    """The longest run of units made only of content tokens in ``query``."""
    a = analyzer().analyze(query)
    best = run = 0
    for u in a.units:
        words = [t for t in a.tokens[u.first : u.last + 1] if not t.is_punct]
        run = run + 1 if words and all(t.is_content for t in words) else 0
        best = max(best, run)
    return best


def main(argv: list[str]) -> int:
    data = Path(argv[1] if len(argv) > 1 else "../shared/data")
    files = sorted((data / "logs").glob("*.jsonl")) + sorted((data / "traffic").glob("*.jsonl"))
    if not files:
        print(f"error: no log files under {data}/logs or {data}/traffic", file=sys.stderr)
        return 2
    print(f"1. queries without '?' holding a run of k+ content words (KEYWORD_RUN = {KEYWORD_RUN})")
    print(f"{'file':<40} {'rewrites':>8} " + " ".join(f"k={k:<3}" for k in range(2, 7)))
    openings: Counter[str] = Counter()
    covered: Counter[str] = Counter()
    opens: dict[str, tuple[int, int, int]] = {}
    for path in files:
        rows = rewrites(path)
        runs = Counter()
        n_open = n_adding = 0
        for r in rows:
            if open_request(r["latest"]):
                n_open += 1
                latest_words = set(re.findall(r"[a-z']+", r["latest"].lower()))
                n_adding += any(w not in latest_words for w in re.findall(r"[a-z']{4,}", r["query"].lower()))
            q = r["query"]
            if "?" not in q:
                n = longest_run(q)
                runs.update(k for k in range(2, 7) if n >= k)
            if path.parent.name == "traffic":
                words = re.findall(r"[a-z']+", q.lower())
                if len(words) >= 3 and " ".join(words[:2]) not in r["latest"].lower():
                    key = " ".join(words[:2])
                    openings[key] += 1
                    covered[key] += any(rx.match(q.strip()) for rx in QUESTION_FRAME_RES)
        opens[path.name] = (len(rows), n_open, n_adding)
        shares = " ".join(f"{runs[k] / max(len(rows), 1):<5.2f}" for k in range(2, 7))
        print(f"{path.name:<40} {len(rows):>8} {shares}")
    print("\n2. openings the traffic's rewriters write where the user did not (count, covered by a frame)")
    for key, n in openings.most_common(20):
        print(f"{n:5d} {covered[key]:5d}  {key}")
    print(
        "\n3. latest messages that are an open request for more (share), and of those, queries adding a word"
    )
    print(f"{'file':<40} {'rewrites':>8} {'open':>6} {'adding':>6}")
    for name, (n, n_open, n_adding) in opens.items():
        print(f"{name:<40} {n:>8} {n_open / max(n, 1):6.3f} {n_adding / max(n_open, 1):6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
