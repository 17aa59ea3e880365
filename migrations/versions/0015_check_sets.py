"""One check run per record and set of check versions (issue 36, part 2).

Before: ``check_runs`` held one row per record, check and version, and every reader that asked "was
this record checked at the current versions?" grouped and counted a record's rows. After:

- ``check_sets`` (``key``: SHA-256 of the sorted ``check_id@version`` pairs, ``monitor.checks.store.
  check_set_key``) and ``check_set_members`` (its pairs, one version per check);
- ``check_runs``: one row per record and check set (``check_set_id``; unique with ``record_id``), with the
  rules hash, the number of findings stored with it and when;
- ``check_skips``: the checks of a run that were skipped, with the reason (a check of the set ran unless
  its run has a skip).

The upgrade keeps every run and finding. A record's old rows are grouped by version: its newest version of
each check make one run (the record's set as its checker last saw it), its next-newest versions another,
and so on; the lowest row id of each group stays as the run, the others' findings move onto it and are
numbered again in their old order (old run, then ordinal). The downgrade splits each run back into one
row per check version, taken from the newest run that holds it (``_split_runs``), so both directions keep
every check version's status, skip reason and findings.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-06
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_CHUNK = 2000
_PAGE = 20_000


def _key(pairs: list[tuple[str, int]]) -> str:
    # the same key as monitor.checks.store.check_set_key (a migration imports nothing of the package)
    return hashlib.sha256("\n".join(f"{c}@{v}" for c, v in sorted(pairs)).encode()).hexdigest()


def upgrade() -> None:
    op.create_table(
        "check_sets",
        sa.Column("id", _ID, nullable=False),
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_check_sets")),
        sa.UniqueConstraint("key", name=op.f("uq_check_sets_key")),
    )
    op.create_table(
        "check_set_members",
        sa.Column("check_set_id", _ID, nullable=False),
        sa.Column("check_id", sa.String(length=64), nullable=False),
        sa.Column("check_version", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["check_set_id"],
            ["check_sets.id"],
            name=op.f("fk_check_set_members_check_set_id_check_sets"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("check_set_id", "check_id", name=op.f("pk_check_set_members")),
    )
    op.create_index("ix_check_set_members_check", "check_set_members", ["check_id", "check_version"])
    op.create_table(
        "check_skips",
        sa.Column("check_run_id", _ID, nullable=False),
        sa.Column("check_id", sa.String(length=64), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["check_run_id"],
            ["check_runs.id"],
            name=op.f("fk_check_skips_check_run_id_check_runs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("check_run_id", "check_id", name=op.f("pk_check_skips")),
    )
    with op.batch_alter_table("check_runs") as batch:
        batch.add_column(sa.Column("check_set_id", _ID, nullable=True))
    # Findings move between runs below: their (run, ordinal) key is put back once they are renumbered.
    with op.batch_alter_table("findings") as batch:
        batch.drop_constraint("uq_findings_run_ordinal", type_="unique")
    _merge_runs(op.get_bind())
    with op.batch_alter_table("findings") as batch:
        batch.create_unique_constraint("uq_findings_run_ordinal", ["check_run_id", "ordinal"])
    with op.batch_alter_table("check_runs") as batch:
        batch.drop_index("ix_check_runs_check")
        batch.drop_constraint("uq_check_runs_record_check", type_="unique")
        for column in ("check_id", "check_version", "status", "skip_reason"):
            batch.drop_column(column)
        batch.alter_column("check_set_id", existing_type=_ID, nullable=False)
        batch.create_foreign_key(
            op.f("fk_check_runs_check_set_id_check_sets"), "check_sets", ["check_set_id"], ["id"]
        )
        batch.create_unique_constraint("uq_check_runs_record_set", ["record_id", "check_set_id"])
        batch.create_index("ix_check_runs_set_record", ["check_set_id", "record_id"])


def _merge_runs(conn: sa.Connection) -> None:
    """Group each record's per-check rows into runs (see the module doc), record by record, streamed."""
    set_ids: dict[str, int] = {}
    keeper_of: dict[int, int] = {}
    updates: list[dict[str, Any]] = []
    skips: list[dict[str, Any]] = []
    drop: list[int] = []

    def set_id(pairs: list[tuple[str, int]], now: datetime) -> int:
        key = _key(pairs)
        if key not in set_ids:
            conn.execute(
                sa.text("INSERT INTO check_sets (key, created_at) VALUES (:k, :t)"), {"k": key, "t": now}
            )
            set_ids[key] = conn.execute(
                sa.text("SELECT id FROM check_sets WHERE key = :k"), {"k": key}
            ).scalar_one()
            conn.execute(
                sa.text(
                    "INSERT INTO check_set_members (check_set_id, check_id, check_version) "
                    "VALUES (:s, :c, :v)"
                ),
                [{"s": set_ids[key], "c": c, "v": v} for c, v in sorted(pairs)],
            )
        return set_ids[key]

    def flush_record(rows: list[Any]) -> None:
        layers: dict[int, list[Any]] = defaultdict(list)
        depth: dict[str, int] = defaultdict(int)
        for row in rows:  # ordered by check, newest version first
            layers[depth[row.check_id]].append(row)
            depth[row.check_id] += 1
        for layer in layers.values():
            keeper = min(r.id for r in layer)
            newest = max(layer, key=lambda r: (r.checked_at, r.id))
            updates.append(
                {
                    "id": keeper,
                    "s": set_id([(r.check_id, r.check_version) for r in layer], newest.checked_at),
                    "h": newest.rules_hash,
                    "n": sum(r.n_findings for r in layer),
                    "t": newest.checked_at,
                }
            )
            for r in layer:
                keeper_of[r.id] = keeper
                if r.status == "skipped":
                    skips.append({"r": keeper, "c": r.check_id, "why": r.skip_reason})
                if r.id != keeper:
                    drop.append(r.id)

    def write(records: list[int]) -> None:
        """Write the runs of ``records``: keepers updated, skips stored, findings moved onto their keeper
        and numbered again in their old order (old run, then ordinal), the other rows deleted."""
        if updates:
            conn.execute(
                sa.text(
                    "UPDATE check_runs SET check_set_id = :s, rules_hash = :h, n_findings = :n, "
                    "checked_at = :t WHERE id = :id"
                ),
                updates,
            )
        if skips:
            conn.execute(
                sa.text("INSERT INTO check_skips (check_run_id, check_id, reason) VALUES (:r, :c, :why)"),
                skips,
            )
        moves = []
        counter: dict[int, int] = defaultdict(int)
        for start in range(0, len(records), _CHUNK):
            for fid, run_id in conn.execute(
                sa.text(
                    "SELECT id, check_run_id FROM findings WHERE record_id IN :ids "
                    "ORDER BY check_run_id, ordinal, id"
                ).bindparams(sa.bindparam("ids", expanding=True)),
                {"ids": records[start : start + _CHUNK]},
            ):
                keeper = keeper_of.get(run_id, run_id)
                moves.append({"id": fid, "r": keeper, "o": counter[keeper]})
                counter[keeper] += 1
        if moves:
            conn.execute(sa.text("UPDATE findings SET check_run_id = :r, ordinal = :o WHERE id = :id"), moves)
        for start in range(0, len(drop), _CHUNK):
            conn.execute(
                sa.text("DELETE FROM check_runs WHERE id IN :ids").bindparams(
                    sa.bindparam("ids", expanding=True)
                ),
                {"ids": drop[start : start + _CHUNK]},
            )
        for pending in (updates, skips, drop):
            pending.clear()
        keeper_of.clear()

    # Read a page of rows at a time, each page ending on a whole record, and written before the next is
    # read (no cursor stays open on the table while it is updated).
    after = -1
    while True:
        page = conn.execute(
            sa.text(
                "SELECT id, record_id, check_id, check_version, status, skip_reason, rules_hash, n_findings, "
                "checked_at FROM check_runs WHERE record_id > :after "
                "ORDER BY record_id, check_id, check_version DESC, id LIMIT :n"
            ),
            {"after": after, "n": _PAGE},
        ).all()
        if not page:
            break
        if len(page) == _PAGE and page[0].record_id != page[-1].record_id:
            page = [r for r in page if r.record_id != page[-1].record_id]  # the last record may go on
        elif len(page) == _PAGE:  # one record of more than a page of rows
            page = conn.execute(
                sa.text(
                    "SELECT id, record_id, check_id, check_version, status, skip_reason, rules_hash, "
                    "n_findings, checked_at FROM check_runs WHERE record_id = :r "
                    "ORDER BY check_id, check_version DESC, id"
                ),
                {"r": page[0].record_id},
            ).all()
        by_record: dict[int, list[Any]] = defaultdict(list)
        for row in page:
            by_record[row.record_id].append(row)
        for rows in by_record.values():
            flush_record(rows)
        write(list(by_record))
        after = page[-1].record_id


def downgrade() -> None:
    with op.batch_alter_table("check_runs") as batch:
        batch.drop_index("ix_check_runs_set_record")
        batch.drop_constraint("uq_check_runs_record_set", type_="unique")
        batch.drop_constraint(op.f("fk_check_runs_check_set_id_check_sets"), type_="foreignkey")
        batch.alter_column("check_set_id", existing_type=_ID, nullable=True)
        batch.add_column(sa.Column("check_id", sa.String(length=64), nullable=True))
        batch.add_column(sa.Column("check_version", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("status", sa.String(length=16), nullable=True))
        batch.add_column(sa.Column("skip_reason", sa.Text(), nullable=True))
    with op.batch_alter_table("findings") as batch:
        batch.drop_constraint("uq_findings_run_ordinal", type_="unique")
    _split_runs(op.get_bind())
    with op.batch_alter_table("findings") as batch:
        batch.create_unique_constraint("uq_findings_run_ordinal", ["check_run_id", "ordinal"])
    with op.batch_alter_table("check_runs") as batch:
        batch.drop_column("check_set_id")
        for column, kind in (("check_id", sa.String(length=64)), ("check_version", sa.Integer())):
            batch.alter_column(column, existing_type=kind, nullable=False)
        batch.alter_column("status", existing_type=sa.String(length=16), nullable=False)
        batch.create_unique_constraint(
            "uq_check_runs_record_check", ["record_id", "check_id", "check_version"]
        )
        batch.create_index("ix_check_runs_check", ["check_id", "check_version", "status"])
    op.drop_table("check_skips")
    op.drop_index("ix_check_set_members_check", table_name="check_set_members")
    op.drop_table("check_set_members")
    op.drop_table("check_sets")


def _split_runs(conn: sa.Connection) -> None:
    """One row per record, check and version again, a page of records at a time. A record's runs are read
    newest first, and each check version goes to a row of the newest run holding it (the run that owns it,
    ``monitor.checks.store.store_outcomes``): the run's first pair by check id keeps the run's row, the
    others get new rows, and a run left with no pair is deleted. Each finding goes to the row of its
    record, check and version, numbered again in its old order (run, then ordinal)."""
    members: dict[int, list[tuple[str, int]]] = defaultdict(list)
    for sid, cid, ver in conn.execute(
        sa.text("SELECT check_set_id, check_id, check_version FROM check_set_members ORDER BY check_id")
    ).all():
        members[sid].append((cid, ver))
    next_id = int(conn.execute(sa.text("SELECT coalesce(max(id), 0) FROM check_runs")).scalar_one()) + 1
    expanding = sa.bindparam("ids", expanding=True)
    after = -1
    while True:
        records = list(
            conn.execute(
                sa.text(
                    "SELECT DISTINCT record_id FROM check_runs WHERE record_id > :after "
                    "ORDER BY record_id LIMIT :n"
                ),
                {"after": after, "n": _CHUNK},
            ).scalars()
        )
        if not records:
            break
        after = records[-1]
        runs = conn.execute(
            sa.text(
                "SELECT id, record_id, check_set_id, rules_hash, checked_at FROM check_runs "
                "WHERE record_id IN :ids AND check_set_id IS NOT NULL ORDER BY record_id, id DESC"
            ).bindparams(expanding),
            {"ids": records},
        ).all()
        skips = {
            (run_id, cid): why
            for run_id, cid, why in conn.execute(
                sa.text(
                    "SELECT check_run_id, check_id, reason FROM check_skips WHERE check_run_id IN :ids"
                ).bindparams(expanding),
                {"ids": [r.id for r in runs]},
            ).all()
        }
        row_of: dict[tuple[int, str, int], int] = {}
        first_of: dict[int, int] = {}
        updates, inserts, gone = [], [], []
        for run in runs:  # newest first within a record
            pairs = [(c, v) for c, v in members[run.check_set_id] if (run.record_id, c, v) not in row_of]
            for n, (cid, ver) in enumerate(pairs):
                row = {
                    "id": run.id if n == 0 else next_id,
                    "rec": run.record_id,
                    "c": cid,
                    "v": ver,
                    "st": "skipped" if (run.id, cid) in skips else "ran",
                    "why": skips.get((run.id, cid)),
                    "h": run.rules_hash,
                    "t": run.checked_at,
                }
                row_of[(run.record_id, cid, ver)] = row["id"]
                first_of.setdefault(run.record_id, row["id"])
                (updates if n == 0 else inserts).append(row)
                next_id += n > 0
            if not pairs:
                gone.append(run.id)
        counter: dict[int, int] = defaultdict(int)
        moves = []
        for fid, rec, cid, ver in conn.execute(
            sa.text(
                "SELECT id, record_id, check_id, check_version FROM findings WHERE record_id IN :ids "
                "ORDER BY check_run_id, ordinal, id"
            ).bindparams(expanding),
            {"ids": records},
        ).all():
            target = row_of.get((rec, cid, ver), first_of.get(rec))
            if target is None:  # a finding of a record whose runs hold no check: nothing to hang it on
                continue
            moves.append({"id": fid, "r": target, "o": counter[target]})
            counter[target] += 1
        for row in updates + inserts:
            row["n"] = counter[row["id"]]
        if updates:
            conn.execute(
                sa.text(
                    "UPDATE check_runs SET check_set_id = NULL, check_id = :c, check_version = :v, "
                    "status = :st, skip_reason = :why, n_findings = :n WHERE id = :id"
                ),
                updates,
            )
        if inserts:
            conn.execute(
                sa.text(
                    "INSERT INTO check_runs (id, record_id, check_id, check_version, status, skip_reason, "
                    "rules_hash, n_findings, checked_at) VALUES (:id, :rec, :c, :v, :st, :why, :h, :n, :t)"
                ),
                inserts,
            )
        if moves:
            conn.execute(sa.text("UPDATE findings SET check_run_id = :r, ordinal = :o WHERE id = :id"), moves)
        if gone:
            conn.execute(
                sa.text("DELETE FROM check_runs WHERE id IN :ids").bindparams(expanding), {"ids": gone}
            )
    if conn.dialect.name == "postgresql":  # the explicit ids above went past the sequence
        conn.execute(
            sa.text(
                "SELECT setval(pg_get_serial_sequence('check_runs', 'id'), (SELECT max(id) FROM check_runs))"
            )
        )
