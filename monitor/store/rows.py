"""The one ORM -> plain-row conversion: :func:`to_row` fills a row dataclass from same-named attributes.

Stores hand plain frozen dataclasses out, never ORM objects (``tests/test_layering.py``); each used to
copy its fields by hand. Imports only the standard library.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")


_FIELDS: dict[type, tuple[dataclasses.Field[Any], ...]] = {}


def _fields(row_cls: type) -> tuple[dataclasses.Field[Any], ...]:
    got = _FIELDS.get(row_cls)
    if got is None:
        if not dataclasses.is_dataclass(row_cls):
            raise TypeError(f"{row_cls.__name__} is not a dataclass")
        got = _FIELDS[row_cls] = tuple(f for f in dataclasses.fields(row_cls) if f.init)
    return got


def to_row(row_cls: type[T], obj: object, **computed: Any) -> T:
    """A ``row_cls`` whose every field is ``computed[name]`` when given, else ``getattr(obj, name)``.

    A list or dict attribute is copied (shallowly), so the row does not share an ORM object's mutable
    JSON value; anything else is taken as is. Pass a field explicitly when its value is computed or
    named differently (``to_row(CaseRow, case, superseded=case.superseded_at is not None)``).

    Raises ``TypeError`` naming the field when ``obj`` has no such attribute and none was given (a
    field with a default takes its default instead), and when ``computed`` names no field of ``row_cls``.
    """
    fields = _fields(row_cls)
    unknown = set(computed) - {f.name for f in fields}
    if unknown:
        raise TypeError(f"{row_cls.__name__} has no field {', '.join(sorted(unknown))}")
    values: dict[str, Any] = {}
    for f in fields:
        if f.name in computed:
            values[f.name] = computed[f.name]
            continue
        try:
            value = getattr(obj, f.name)
        except AttributeError:
            if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
                continue
            raise TypeError(
                f"{row_cls.__name__}.{f.name}: {type(obj).__name__} has no attribute {f.name!r}"
            ) from None
        if isinstance(value, list):
            value = list(value)
        elif isinstance(value, dict):
            value = dict(value)
        values[f.name] = value
    return row_cls(**values)
