"""Write the prior table of the calibration (issue 34): each (finding kind, grading step)'s verdicts over
the labelled files, as ``monitor/data/step_calibration.json``.

For every labelled item of the given files (default: all of ``../shared/data/labels``), the findings
today's checks give on its logged rewrite (every severity) and what its label says of each of them, as a
reviewer's verdict would (``monitor.stats.calibration.outcome``: any error label for, none against;
once per step of an item). The file names its sources. It is a prior only: at
``monitor.stats.calibration.TABLE_WEIGHT`` verdicts' worth, a deployment's own verdicts outweigh it
within days, and no grade is set from it alone.

    .venv/bin/python scripts/calibrate_steps.py [LABELS ...] [--logs DIR] [--out FILE]

Exit 0 written, 1 when no labelled item had a finding in the logs (nothing written), 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from simulate_review import collect, warn_missing  # noqa: E402  (the collection the measure uses)

from monitor.stats.calibration import TABLE_FILE, table_from  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


def _source(path: Path) -> str:
    """How the table names a label file: under ``shared/data/`` when it is one of the shared files."""
    try:
        return f"shared/data/{path.resolve().relative_to(DATA.resolve())}"
    except ValueError:
        return str(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("labels", nargs="*", type=Path, help="label files (default: DATA/labels/*.jsonl)")
    parser.add_argument("--logs", type=Path, default=DATA / "logs", help="the logs holding their records")
    parser.add_argument(
        "--out", type=Path, default=TABLE_FILE, help=f"where to write (default: {TABLE_FILE})"
    )
    args = parser.parse_args(argv)
    files = list(dict.fromkeys(args.labels or sorted((DATA / "labels").glob("*.jsonl"))))
    for f in files:
        if not f.is_file():
            parser.error(f"no label file {f}")
    if len({f.name for f in files}) != len(files):
        parser.error("label files are told apart by name: give each once, under distinct names")
    if not args.logs.exists():
        parser.error(f"no logs at {args.logs}")
    if not args.out.parent.is_dir():
        parser.error(f"no folder {args.out.parent} to write {args.out.name} into")
    data = collect(files, [args.logs])
    warn_missing(files, data)
    table = table_from(
        (
            (kind, step, ok)
            for items in data.values()
            for i in items
            for (_r, kind, step), ok in i.observations()
        ),
        sources=[_source(f) for f in files],
    )
    if not table.steps:
        print("no labelled item has a finding in these logs: nothing written", file=sys.stderr)
        return 1
    args.out.write_text(json.dumps(table.as_json(), indent=1) + "\n", encoding="utf-8")
    print(
        f"{args.out}: {len(table.steps)} steps from {sum(len(v) for v in data.values())} items",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
