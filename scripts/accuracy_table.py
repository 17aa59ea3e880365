"""Print the README's accuracy table (Markdown) from ``rewrite-monitor evaluate --by prompt_version --json``.

One row per label file and rewriter (prompt version): the fabrication figures at medium+ and at high
(right-word recall, false alarms among items without a fabrication), ``unresolved_reference``'s and
``intent_dropped``'s false alarms, queue precision and its lift over the file's error rate. Usage,
from a store that ran and checked the shared logs::

    rewrite-monitor evaluate --by prompt_version --json $(for f in ../shared/data/labels/*.jsonl; do
        echo --labels $f; done) | python scripts/accuracy_table.py

Reads JSON on standard input, writes Markdown on standard output; exits 2 when the input is not
``evaluate --json`` output.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def _fab(m: dict[str, Any]) -> str:
    pos = m["tp"] + m["fn"]
    if not m.get("measured", True):
        return "not measured"
    caught = f"{m['tp_right_word']} of {pos}" if pos else "none labelled"
    return f"{caught}, FA {m['fp']} ({_pct(m['false_alarm_rate'])})"


def _lift(q: dict[str, Any]) -> str:
    lift = q.get("queue_lift")
    return "-" if lift is None else f"{lift:.2f}"


def table(result: dict[str, Any]) -> str:
    """The Markdown table of one ``evaluate --json`` object (``{"files": {group: figures}}``)."""
    lines = [
        "| label file [rewriter] | items | fabricated, medium+: caught (right word), false alarms "
        "| fabricated, high | unresolved FA | intent_dropped FA | queue precision | lift |",
        "| --- | ---: | --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for group, v in result["files"].items():
        if "fabricated" not in v:  # an empty label file, or one whose logs are not in the store
            lines.append(f"| `{group}` | {v.get('items', 0)} | not measured | not measured | - | - | - | - |")
            continue
        intent = v.get("intent_dropped", {})
        unresolved = v.get("unresolved", {})
        lines.append(
            f"| `{group}` | {v['items']} | {_fab(v['fabricated'])} | {_fab(v['fabricated_high'])} "
            f"| {_pct(unresolved.get('false_alarm_rate'))} | {_pct(intent.get('false_alarm_rate'))} "
            f"| {_pct(v['queue']['queue_precision'])} | {_lift(v['queue'])} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    try:
        result = json.load(sys.stdin)
        sys.stdout.write(table(result))
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        print(f"error: not the output of `rewrite-monitor evaluate --json` ({exc})", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
