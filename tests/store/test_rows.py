"""``monitor.store.rows.to_row``: the one ORM -> plain-row conversion."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, dataclass, field
from datetime import datetime
from types import SimpleNamespace

import pytest

from monitor.store.rows import to_row


@dataclass(frozen=True, slots=True)
class Row:
    id: int
    name: str
    tags: list[str]
    meta: dict[str, int]
    overdue: bool


@dataclass(frozen=True)
class WithDefault:
    id: int
    note: str | None = None
    extra: list[str] = field(default_factory=list)


WHEN = datetime(2024, 3, 4, 12, 0)


def test_same_named_attributes_fill_the_row_and_computed_fields_are_given() -> None:
    obj = SimpleNamespace(id=7, name="c1_2", tags=["a", "b"], meta={"n": 1}, other=WHEN)
    row = to_row(Row, obj, overdue=True)
    assert row == Row(id=7, name="c1_2", tags=["a", "b"], meta={"n": 1}, overdue=True)
    with pytest.raises(FrozenInstanceError):
        row.id = 8  # type: ignore[misc]


def test_lists_and_dicts_are_copied_so_the_row_shares_nothing_mutable() -> None:
    obj = SimpleNamespace(id=1, name="x", tags=["a"], meta={"n": 1}, overdue=False)
    row = to_row(Row, obj)
    obj.tags.append("b")
    obj.meta["n"] = 2
    assert row.tags == ["a"] and row.meta == {"n": 1}
    assert row.tags is not obj.tags


def test_a_computed_value_wins_over_the_attribute() -> None:
    obj = SimpleNamespace(id=1, name="logged", tags=(), meta={}, overdue=False)
    assert to_row(Row, obj, name="given", tags=["t"]) == Row(1, "given", ["t"], {}, False)


def test_a_missing_attribute_is_a_type_error_naming_it() -> None:
    obj = SimpleNamespace(id=1, name="x", tags=[], meta={})
    with pytest.raises(TypeError, match=r"^Row\.overdue: SimpleNamespace has no attribute 'overdue'$"):
        to_row(Row, obj)


def test_a_field_with_a_default_takes_it_when_the_attribute_is_missing() -> None:
    assert to_row(WithDefault, SimpleNamespace(id=3)) == WithDefault(id=3, note=None, extra=[])
    assert to_row(WithDefault, SimpleNamespace(id=3, note="n")) == WithDefault(id=3, note="n")


def test_a_computed_name_that_is_no_field_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"^Row has no field bogus$"):
        to_row(Row, SimpleNamespace(id=1, name="x", tags=[], meta={}), overdue=False, bogus=1)


def test_a_class_that_is_not_a_dataclass_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="SimpleNamespace is not a dataclass"):
        to_row(SimpleNamespace, SimpleNamespace())
