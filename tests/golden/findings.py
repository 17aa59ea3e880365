"""The findings golden file: every finding the checks give on the shared real logs, byte for byte.

``tests/golden/findings_shared_logs.jsonl`` holds one header line (the corpus: each log file's name, size
and sha256; the check versions; the rules hash) and then one line per finding, sorted: request id, check
id (its version is in the header, so a version bump changes only the lines whose finding changed), kind,
severity, the grading step that set it, words and reason. ``tests/checks/test_golden_findings.py``
computes the same lines the way ``rewrite-monitor run`` does (ingest into a fresh store, then the check
job, rewriter profile included) and asserts they are identical, so an optimisation that changes any
finding fails.

The header also counts each check's runs by status and skip reason (its coverage), and each line carries
a digest of the finding's evidence (spans, each word's grade and signal, what the alert reads).

The file is rewritten only on purpose, after a check version bump or a rules edit::

    .venv/bin/python -m tests.golden.findings --write

which refuses (exit 2) when the lines or run counts of a check changed while its version, the rules hash
and the corpus did not (:func:`changed_without_a_bump`): a behaviour change without a version bump is what
the test exists to catch, and bumping one check licenses changes to that check only. ``--force`` skips
the refusal.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

GOLDEN = Path(__file__).resolve().parent / "findings_shared_logs.jsonl"


def corpus(logs: Path) -> list[dict[str, Any]]:
    """``[{file, bytes, sha256}]`` of the logs ingest reads from ``logs`` (``discover``: every log file
    under it), by path relative to it."""
    from monitor.ingest.sources import discover

    out = []
    for src in discover([logs]):
        assert src.path is not None
        data = src.path.read_bytes()
        # discover resolves links: a shared folder reached through a symlink is named from its target
        name = src.path.resolve().relative_to(logs.resolve()).as_posix()
        out.append({"file": name, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()})
    return out


def header(session: Session, logs: Path, rules_hash: str) -> dict[str, Any]:
    """What the golden lines depend on besides the code (the corpus, the check versions, the rules), and
    what each check did besides finding: its runs by status and skip reason (its coverage)."""
    from monitor.checks import current_versions
    from monitor.store.models import CheckRun, CheckSetMember, CheckSkip

    current = set(current_versions())
    statuses: dict[str, int] = {}
    skip = CheckSkip.check_run_id.is_not(None)
    for check_id, version, skipped, reason, n in session.execute(
        select(CheckSetMember.check_id, CheckSetMember.check_version, skip, CheckSkip.reason, func.count())
        .select_from(CheckRun)
        .join(CheckSetMember, CheckSetMember.check_set_id == CheckRun.check_set_id)
        .outerjoin(
            CheckSkip,
            (CheckSkip.check_run_id == CheckRun.id) & (CheckSkip.check_id == CheckSetMember.check_id),
        )
        .group_by(CheckSetMember.check_id, CheckSetMember.check_version, skip, CheckSkip.reason)
    ):
        if (check_id, version) in current:
            status = "skipped" if skipped else "ran"
            statuses[f"{check_id} {status}" + (f": {reason}" if reason else "")] = n
    return {
        "corpus": corpus(logs),
        "checks": [f"{cid}.v{version}" for cid, version in current_versions()],
        "rules_hash": rules_hash,
        "runs": dict(sorted(statuses.items())),
    }


def finding_lines(session: Session) -> list[str]:
    """The stored findings of the current check versions as sorted JSON lines (see the module docstring)."""
    from monitor.checks import current_versions
    from monitor.store.models import Finding

    current = set(current_versions())
    rows = session.execute(
        select(
            Finding.request_id,
            Finding.check_id,
            Finding.check_version,
            Finding.ordinal,
            Finding.kind,
            Finding.severity,
            Finding.step,
            Finding.words,
            Finding.reason,
            Finding.evidence,
        )
    ).all()
    keyed = sorted(
        (r.request_id, r.check_id, r.ordinal, r) for r in rows if (r.check_id, r.check_version) in current
    )
    return [
        json.dumps(
            {
                "request_id": r.request_id,
                "check": r.check_id,
                "kind": r.kind,
                "severity": r.severity,
                "step": r.step,
                "words": list(r.words),
                "reason": r.reason,
                # the evidence (spans, each word's grade and signal, what the alert reads) by digest:
                # whole, it would make the file ten times larger
                "evidence_sha": hashlib.sha256(
                    json.dumps(r.evidence, sort_keys=True, ensure_ascii=False).encode()
                ).hexdigest()[:16],
            },
            ensure_ascii=False,
            sort_keys=True,
        )
        for *_, r in keyed
    ]


def compute(session: Session, logs: Path, *, workers: int = 1) -> tuple[dict[str, Any], list[str]]:
    """Ingest ``logs`` into the (empty, migrated) store of ``session``, check everything with the bundled
    rules (graded on ``workers`` processes, ``monitor.worker.pool``), and return ``(header, finding
    lines)``."""
    from monitor.checks.rules import load_rules
    from monitor.ingest.sources import discover
    from monitor.ingest.store.batches import ingest_sources
    from monitor.worker.jobs import check_job
    from monitor.worker.pool import CheckPool

    rules = load_rules()
    ingest_sources(session, discover([logs]))
    with CheckPool(workers, model=None, min_job=0) as pool:
        check_job(session=session, rules=rules, pool=pool)
    return header(session, logs, rules.hash), finding_lines(session)


def read() -> tuple[dict[str, Any], list[str]]:
    """The golden file's ``(header, finding lines)``; raises ``FileNotFoundError`` when it is absent."""
    lines = GOLDEN.read_text(encoding="utf-8").splitlines()
    return json.loads(lines[0]), lines[1:]


def changed_without_a_bump(
    old_head: dict[str, Any], old_lines: list[str], head: dict[str, Any], lines: list[str]
) -> list[str]:
    """The check ids whose finding lines or run counts differ between the old and new golden file
    although their version is the same, the rules hash too and the corpus too: behaviour changed without
    a version bump. Empty when the rules or the corpus changed (then every line may change)."""
    if (old_head["rules_hash"], old_head["corpus"]) != (head["rules_hash"], head["corpus"]):
        return []
    same_version = set(old_head["checks"]) & set(head["checks"])

    def by_check(rows: list[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for line in rows:
            out.setdefault(json.loads(line)["check"], []).append(line)
        return out

    def runs_of(h: dict[str, Any], check_id: str) -> dict[str, int]:
        return {k: v for k, v in h.get("runs", {}).items() if k.split(" ", 1)[0] == check_id}

    old_by, new_by = by_check(old_lines), by_check(lines)
    out = []
    for versioned in sorted(same_version):
        check_id = versioned.rsplit(".v", 1)[0]
        if old_by.get(check_id) != new_by.get(check_id) or runs_of(old_head, check_id) != runs_of(
            head, check_id
        ):
            out.append(check_id)
    return out


@contextmanager
def fresh_store() -> Iterator[Session]:
    """A session on a migrated SQLite store in a temporary folder, removed afterwards."""
    from monitor.store.engine import make_engine, session_factory, upgrade

    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'golden.db'}"
        upgrade(url)
        engine = make_engine(url)
        try:
            with session_factory(engine)() as session:
                yield session
        finally:
            engine.dispose()


def main(argv: list[str] | None = None) -> int:
    from tests.helpers import SHARED_DATA

    parser = argparse.ArgumentParser(
        prog="python -m tests.golden.findings",
        description=(
            "Compare (with --write: rewrite) tests/golden/findings_shared_logs.jsonl and the findings on "
            "the shared logs. Exit 0: equal, or written; 1: they differ; 2: refused (the findings changed "
            "but the check versions and rules hash are the file's) or no logs."
        ),
    )
    parser.add_argument("--write", action="store_true", help="compute and write the file (else: compare)")
    parser.add_argument(
        "--force", action="store_true", help="write even when versions and rules are unchanged"
    )
    args = parser.parse_args(argv)
    logs = SHARED_DATA / "logs"
    if not logs.is_dir():
        print(f"no shared logs at {logs} (set REWRITE_MONITOR_SHARED_DATA)", file=sys.stderr)
        return 2
    with fresh_store() as session:
        head, lines = compute(session, logs)
    try:
        old_head, old_lines = read()
    except FileNotFoundError:
        old_head, old_lines = None, []
    if not args.write:
        same = (head, lines) == (old_head, old_lines)
        print(f"{len(lines)} findings; the golden file {'matches' if same else 'differs'}")
        return 0 if same else 1
    unbumped = [] if old_head is None else changed_without_a_bump(old_head, old_lines, head, lines)
    if unbumped and not args.force:
        print(
            f"refused: the findings or runs of {', '.join(unbumped)} changed but neither its version nor "
            "the rules did; bump the version of the check whose behaviour changed (monitor/checks/), then "
            "write again (--force only for a new corpus)",
            file=sys.stderr,
        )
        return 2
    GOLDEN.write_text(
        "\n".join([json.dumps(head, sort_keys=True), *lines]) + "\n",
        encoding="utf-8",
    )
    print(f"wrote {GOLDEN.name}: {len(lines)} findings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
