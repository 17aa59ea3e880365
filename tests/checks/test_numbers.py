"""monitor.checks.numbers: numbers read as values, whatever way they are written."""

from __future__ import annotations

import pytest

from monitor.checks.numbers import number_spans, number_values, value_at


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("7 ½ cups", [7.5]),
        ("7½ cups", [7.5]),
        ("7 1/2 cups", [7.5]),
        ("½ cup", [0.5]),
        ("3/4 of them", [0.75]),
        ("on 3/4/2020", [3.0, 4.0, 2020.0]),  # a date is no fraction: three numbers
        ("twenty-one days", [21.0]),
        ("two hundred and ten", [210.0]),
        ("1,000,000 or one million", [1_000_000.0, 1_000_000.0]),
        ("3 million", [3_000_000.0]),
        ("the third option", [3.0]),
        ("app v2 or 2.x", [2.0, 2.0]),
        ("in the 1990s", [1990.0]),
        ("two three", [2.0, 3.0]),  # no number joins two units
    ],
)
def test_number_spans_read_values(text, values):
    assert [s.value for s in number_spans(text)] == values


def test_spans_are_in_text_order_with_their_offsets():
    text = "twenty-one and 7 ½"
    assert [(s.start, s.end, s.value) for s in number_spans(text)] == [(0, 10, 21.0), (15, 18, 7.5)]
    assert number_values(text) == frozenset({21.0, 7.5})


def test_value_at_finds_the_span_a_token_lies_in_on_a_long_text():
    # 300 repeats of one 22-character unit: the last unit's numbers are found by offset, as the first's
    unit = "x 7 ½ y twenty-one z. "
    text = unit * 300
    last = len(unit) * 299
    assert value_at(text, last + 2, last + 3) == 7.5  # the "7" of "7 ½"
    assert value_at(text, last + 8, last + 14) == 21.0  # "twenty" inside "twenty-one"
    assert value_at(text, last, last + 1) is None  # "x"
    assert len(number_spans(text)) == 600
