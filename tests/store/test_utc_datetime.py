"""The store's datetime type: aware values are stored as naive UTC, naive ones are taken as UTC."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from sqlalchemy import DateTime, insert, select
from sqlalchemy.orm import Session

from monitor.store.engine import UTCDateTime
from monitor.store.models import Base, Lease

PARIS = timezone(timedelta(hours=1))


def test_every_datetime_column_is_utc() -> None:
    columns = [c for t in Base.metadata.tables.values() for c in t.columns]
    dated = [c for c in columns if isinstance(c.type, DateTime | UTCDateTime)]
    assert dated and all(isinstance(c.type, UTCDateTime) for c in dated)


def test_aware_and_naive_values_round_trip_as_naive_utc(session: Session) -> None:
    aware = datetime(2024, 3, 4, 9, 30, tzinfo=PARIS)  # 08:30 UTC
    lease = Lease(name="t", holder="h", acquired_at=aware, expires_at=datetime(2024, 3, 4, 8, 40))
    assert lease.acquired_at == datetime(2024, 3, 4, 8, 30)  # normalised on assignment
    session.add(lease)
    session.execute(
        insert(Lease).values(
            name="core", holder="h", acquired_at=aware, expires_at=aware + timedelta(hours=1)
        )
    )
    session.flush()
    rows = dict(session.execute(select(Lease.name, Lease.acquired_at)).all())
    assert rows == {"t": datetime(2024, 3, 4, 8, 30), "core": datetime(2024, 3, 4, 8, 30)}
    # a comparison binds through the type: 08:45 UTC is after both values
    later = datetime(2024, 3, 4, 8, 45, tzinfo=UTC)
    assert set(session.scalars(select(Lease.name).where(Lease.acquired_at < later))) == {"t", "core"}
    # naive 08:40 is taken as UTC: only core's 09:30 UTC expiry is after 08:45 UTC (09:45 in Paris)
    assert list(session.scalars(select(Lease.name).where(Lease.expires_at > later.astimezone(PARIS)))) == [
        "core"
    ]
