"""Tuning aid: run the checks straight over ``shared/data/logs`` and score them against the hand labels.

Not the official ``rewrite-monitor evaluate`` (that one reads the store); this reads the JSON lines
directly so the checks can be tuned without a database. Usage::

    .venv/bin/python scripts/eval_checks.py [--data ../shared/data] [--details] [--throughput]

Scoring (item level, as issue 3 defines recall): an item is *flagged fabricated* at a threshold when
it has an ``added_content_word`` finding at or above that severity; truth is ``fabricated`` non-empty
(audit files) or any candidate labelled ``fabricated`` (llm_word_labels). False-alarm rate = flagged
non-fabricated items / non-fabricated items; for llm_word_labels also weighted by stratum (pool size /
sample size, pools from the data README). Other kinds are scored against the item labels:
dropped_qualifier vs ``dropped_constraint``, unresolved_reference vs ``unresolved``, not_a_query vs
``not_a_query``, intent_dropped vs ``intent_drift`` or ``dropped_constraint``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from monitor.checks import run_checks  # noqa: E402
from monitor.checks.base import at_least  # noqa: E402
from monitor.checks.rules import load_rules  # noqa: E402
from monitor.record import ContextInput, Message, Peer, Resolution, RewriteRecord  # noqa: E402

# Pool sizes per stratum, from shared/data/README.md ("Selection" of llm_word_labels.jsonl).
POOLS = {
    "qrecc/cand": 857,
    "qrecc/none": 736,
    "cast21/cand": 23,
    "cast21/none": 15,
    "cast19/cand": 10,
    "cast19/none": 419,
}
CONTEXT_FIELDS = {
    "event",
    "ts",
    "conv_id",
    "request_id",
    "turn",
    "n_messages",
    "roles",
    "first_ts",
    "last_ts",
    "monotonic",
    "digest",
    "client_turn_count",
    "messages",
}
REWRITE_FIELDS = {
    "event",
    "ts",
    "conv_id",
    "request_id",
    "turn",
    "latest",
    "query",
    "rewritten",
    "resolved",
    "dropped",
    "model",
    "prompt_version",
    "filters",
}


def _ts(s: str | None) -> datetime | None:
    return datetime.fromisoformat(s.replace("Z", "+00:00")) if s else None


def to_context(ev: dict[str, Any]) -> ContextInput:
    msgs = ev.get("messages")
    return ContextInput(
        request_id=ev["request_id"],
        n_messages=ev["n_messages"],
        roles=dict(ev["roles"]),
        digest=ev.get("digest"),
        client_turn_count=ev.get("client_turn_count"),
        monotonic=ev.get("monotonic"),
        first_ts=_ts(ev.get("first_ts")),
        last_ts=_ts(ev.get("last_ts")),
        messages=None
        if msgs is None
        else tuple(Message(m["role"], m["content"], _ts(m.get("ts"))) for m in msgs),
        ts=_ts(ev.get("ts")),
        context_extra={k: v for k, v in ev.items() if k not in CONTEXT_FIELDS},
    )


def to_record(
    ctx_ev: dict[str, Any] | None, rw: dict[str, Any], peers: tuple[Peer, ...] = ()
) -> RewriteRecord:
    """Join a ``ctx_input`` event (or None) and a ``rewrite`` event into a RewriteRecord."""
    return RewriteRecord(
        conv_id=rw["conv_id"],
        request_id=rw["request_id"],
        turn=rw["turn"],
        latest=rw["latest"],
        query=rw["query"],
        rewritten=rw["rewritten"],
        resolved=tuple(
            Resolution(r["surface"], r["antecedent"], r.get("turn")) for r in rw.get("resolved") or ()
        ),
        dropped=tuple(rw.get("dropped") or ()),
        filters=rw.get("filters"),
        model=rw.get("model"),
        prompt_version=rw.get("prompt_version"),
        ts=_ts(rw.get("ts")),
        context=None if ctx_ev is None else to_context(ctx_ev),
        peers=peers,
        extra={k: v for k, v in rw.items() if k not in REWRITE_FIELDS},
    )


def load_records(logs: Path) -> dict[str, RewriteRecord]:
    """All records of every log file, with peers (the conversation's other requests) attached."""
    ctx: dict[str, dict[str, Any]] = {}
    rws: list[dict[str, Any]] = []
    for f in sorted(logs.glob("*.jsonl")):
        for line in f.open(encoding="utf-8"):
            ev = json.loads(line)
            (rws.append(ev) if ev["event"] == "rewrite" else ctx.__setitem__(ev["request_id"], ev))
    by_conv: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for rw in rws:
        by_conv[rw["conv_id"]].append(rw)
    contexts = {rid: to_context(ev) for rid, ev in ctx.items()}
    out = {}
    for _conv, items in by_conv.items():
        items.sort(key=lambda r: r["turn"])
        for rw in items:
            peers = tuple(
                Peer(o["request_id"], o["turn"], _ts(o.get("ts")), contexts.get(o["request_id"]))
                for o in items
                if o["request_id"] != rw["request_id"]
            )
            rec = to_record(None, rw, peers)
            from dataclasses import replace

            out[rw["request_id"]] = replace(rec, context=contexts.get(rw["request_id"]))
    return out


def wilson(k: int, n: int) -> str:
    if n == 0:
        return "n/a"
    import math

    z = 1.96
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return f"{100 * p:.1f}% [{100 * max(0, c - h):.1f}, {100 * min(1, c + h):.1f}]"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    ap.add_argument("--details", action="store_true")
    ap.add_argument("--throughput", action="store_true")
    args = ap.parse_args()
    rules = load_rules()
    records = load_records(args.data / "logs")
    outcomes = {}
    t0 = time.perf_counter()
    for rid, rec in records.items():
        outcomes[rid] = run_checks(rec, rules)
    dt = time.perf_counter() - t0
    print(f"checked {len(records)} records in {dt:.2f}s ({len(records) / dt:.0f} records/s, cold cache)")
    if args.throughput:
        t0 = time.perf_counter()
        for rec in records.values():
            run_checks(rec, rules)
        dt = time.perf_counter() - t0
        print(f"warm re-run: {len(records) / dt:.0f} records/s")
    per_kind: dict[str, int] = defaultdict(int)
    for o in outcomes.values():
        for f in o.findings:
            per_kind[f"{f.kind}:{f.severity}"] += 1
    print("findings per kind:severity:", dict(sorted(per_kind.items())))

    for name in ("cast_audit_labels.jsonl", "qrecc_audit_labels.jsonl", "llm_word_labels.jsonl"):
        labels = [json.loads(x) for x in (args.data / "labels" / name).open(encoding="utf-8")]
        print(f"\n== {name} ({len(labels)} items)")
        for thr in ("medium", "high"):
            tp = fn = fp = tn = 0
            wfp = wneg = 0.0
            misses, alarms = [], []
            for lab in labels:
                o = outcomes[lab["request_id"]]
                fl = [f for f in o.by_kind("added_content_word") if at_least(f.severity, thr)]
                if "candidates" in lab:
                    truth = any(c["label"] == "fabricated" for c in lab["candidates"])
                    w = POOLS[lab["stratum"]] / sum(1 for x in labels if x["stratum"] == lab["stratum"])
                else:
                    truth = bool(lab["fabricated"])
                    w = 1.0
                if truth:
                    tp += bool(fl)
                    fn += not fl
                    if not fl:
                        misses.append(lab)
                else:
                    wneg += w
                    if fl:
                        fp += 1
                        wfp += w
                        alarms.append((lab, fl))
                    else:
                        tn += 1
            extra = f"; weighted FA {100 * wfp / wneg:.1f}%" if "llm" in name else ""
            print(
                f"  fabricated @{thr}+: caught {tp}/{tp + fn}; false alarms {fp}/{fp + tn} "
                f"= {wilson(fp, fp + tn)}{extra}"
            )
            if args.details:
                for lab in misses:
                    o = outcomes[lab["request_id"]]
                    print(
                        f"    MISS {lab['request_id']}: {lab['query'][:90]!r} ->",
                        [
                            (f.words, f.severity, f.evidence.get("severity_signal"))
                            for f in o.by_kind("added_content_word")
                        ],
                    )
                for lab, fl in alarms:
                    print(
                        f"    FA   {lab['request_id']}: ",
                        [(f.words, f.severity, f.evidence.get("severity_signal")) for f in fl],
                    )

        # other kinds vs item labels
        def truth_of(lab: dict[str, Any], key: str) -> bool:
            if key == "dropped":
                return bool(lab.get("dropped_constraint")) or "[dropped]" in lab.get("note", "")
            if key == "unresolved":
                return bool(lab.get("unresolved")) or "[unresolved]" in lab.get("note", "")
            if key == "not_a_query":
                return bool(lab.get("not_a_query"))
            if key == "drift":
                return (
                    bool(lab.get("intent_drift"))
                    or bool(lab.get("dropped_constraint"))
                    or "[drift]" in lab.get("note", "")
                    or "[dropped]" in lab.get("note", "")
                )
            raise KeyError(key)

        for kind, key in (
            ("dropped_qualifier", "dropped"),
            ("unresolved_reference", "unresolved"),
            ("not_a_query", "not_a_query"),
            ("intent_dropped", "drift"),
        ):
            for thr in ("medium",):
                tp = fp = fn = tn = 0
                for lab in labels:
                    fired = any(at_least(f.severity, thr) for f in outcomes[lab["request_id"]].by_kind(kind))
                    t = truth_of(lab, key)
                    tp += fired and t
                    fp += fired and not t
                    fn += (not fired) and t
                    tn += (not fired) and not t
                prec = f"{tp / (tp + fp):.2f}" if tp + fp else "n/a"
                rec_ = f"{tp / (tp + fn):.2f}" if tp + fn else "n/a"
                print(
                    f"  {kind} @{thr}+ vs {key}: tp {tp} fp {fp} fn {fn} tn {tn}  "
                    f"precision {prec} recall {rec_}"
                )


if __name__ == "__main__":
    main()
