"""Parsing one line: event names, timestamps, and the reason given for each kind of bad line."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from monitor.ingest.events import LineError, ParsedEvent, event_key, parse_line, parse_ts
from tests.factories import ctx_input, rewrite


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-03-04T08:00:00Z", datetime(2024, 3, 4, 8, 0, tzinfo=UTC)),
        ("2024-03-04T08:00:00", datetime(2024, 3, 4, 8, 0, tzinfo=UTC)),  # naive means UTC
        ("2024-03-04T10:00:00+02:00", datetime(2024, 3, 4, 8, 0, tzinfo=UTC)),
        ("2024-03-04 08:00:00.250", datetime(2024, 3, 4, 8, 0, 0, 250000, tzinfo=UTC)),
        (1709539200, datetime(2024, 3, 4, 8, 0, tzinfo=UTC)),  # epoch seconds
        (1709539200.5, datetime(2024, 3, 4, 8, 0, 0, 500000, tzinfo=UTC)),
        (1709539200250, datetime(2024, 3, 4, 8, 0, 0, 250000, tzinfo=UTC)),  # epoch milliseconds
    ],
)
def test_timestamps_accept_iso_and_epoch(value: object, expected: datetime) -> None:
    assert parse_ts(value) == expected


@pytest.mark.parametrize("value", [True, "yesterday", None, [1], 1e300])
def test_bad_timestamps_raise(value: object) -> None:
    with pytest.raises(ValueError):
        parse_ts(value)


@pytest.mark.parametrize("key", ["event", "message", "msg"])
def test_event_name_under_any_logger_key(key: str) -> None:
    ev = rewrite()
    del ev["event"]
    ev[key] = "rewrite"
    parsed = parse_line(json.dumps(ev))
    assert isinstance(parsed, ParsedEvent)
    assert parsed.kind == "rewrite"
    assert parsed.event_key == event_key("rewrite", "c1", "c1_2")


def test_known_name_wins_over_a_free_text_message() -> None:
    ev = ctx_input()
    ev["message"] = "rewriter input logged"  # python-json-logger's message beside structlog's event
    parsed = parse_line(json.dumps(ev))
    assert isinstance(parsed, ParsedEvent) and parsed.kind == "ctx_input"


def test_unknown_fields_are_kept_in_raw() -> None:
    parsed = parse_line(json.dumps(rewrite(tenant="acme", extra_block={"a": 1})))
    assert isinstance(parsed, ParsedEvent)
    assert parsed.raw["tenant"] == "acme" and parsed.raw["extra_block"] == {"a": 1}


@pytest.mark.parametrize(
    ("text", "complete", "reason", "detail"),
    [
        ('{"event": "rewrite",', True, "invalid_json", "invalid JSON at column 21: Expecting property name"),
        ('{"event": "rewrite",', False, "truncated_line", "last line has no newline"),
        ("[1, 2]", True, "not_an_object", "a log line must be a JSON object, got an array"),
        ('"rewrite"', True, "not_an_object", "got a string"),
        ('{"event": "rerank"}', True, "unknown_event", "unknown event name (event='rerank')"),
        ('{"level": "info"}', True, "missing_field", "no event name"),
    ],
)
def test_line_errors(text: str, complete: bool, reason: str, detail: str) -> None:
    result = parse_line(text, complete=complete)
    assert isinstance(result, LineError)
    assert result.reason == reason
    assert detail in result.detail


def test_missing_field_names_the_field() -> None:
    ev = rewrite()
    del ev["query"]
    result = parse_line(json.dumps(ev))
    assert result == LineError("missing_field", "field 'query' is required")


@pytest.mark.parametrize(
    ("field", "value", "where"),
    [
        ("turn", "2", "turn"),
        ("turn", True, "turn"),  # a boolean is not a turn number
        ("rewritten", "yes", "rewritten"),
        ("ts", "not a time", "ts"),
        ("resolved", [{"surface": "it"}], "resolved.0.antecedent"),
    ],
)
def test_wrong_type_names_the_field(field: str, value: object, where: str) -> None:
    result = parse_line(json.dumps(rewrite(**{field: value})))
    assert isinstance(result, LineError)
    assert result.reason == ("missing_field" if where.endswith("antecedent") else "wrong_type")
    assert f"'{where}'" in result.detail


@pytest.mark.parametrize(
    ("field", "value", "reason", "detail"),
    [
        ("query", "a\u0000b", "unsupported_text", "field 'query' holds a NUL character (\\u0000)"),
        (
            "latest",
            "x\ud800y",
            "unsupported_text",
            "field 'latest' holds a lone surrogate (not Unicode text)",
        ),
        (
            "filters",
            {"k\u0000": "v"},
            "unsupported_text",
            "field 'filters.k\\u0000' holds a NUL character (\\u0000)",
        ),
        ("turn", 10**30, "wrong_type", "field 'turn': Input should be less than or equal to 2147483647"),
    ],
)
def test_text_and_numbers_no_store_can_take_are_refused(
    field: str, value: object, reason: str, detail: str
) -> None:
    # Valid JSON that PostgreSQL (NUL), UTF-8 (lone surrogate) or a 32-bit column (huge int) cannot take.
    result = parse_line(json.dumps(rewrite(**{field: value})))
    assert isinstance(result, LineError)
    assert result.reason == reason
    assert result.detail.startswith(detail)


@pytest.mark.parametrize(
    ("change", "reason", "detail"),
    [
        ({"latency_ms": float("nan")}, "non_finite_number", "field 'latency_ms' is NaN or infinite"),
        (
            {"filters": {"score": float("inf")}},
            "non_finite_number",
            "field 'filters.score' is NaN or infinite",
        ),
        (
            {"ts": "0001-01-01T00:00:00+14:00"},
            "wrong_type",
            "field 'ts': timestamp out of range in UTC, got a string",
        ),
        (
            {"model": "m" * 256},
            "wrong_type",
            "field 'model': String should have at most 255 characters, got a string",
        ),
        # year 9999 stopped every later queue admission (day arithmetic overflowed): out of TS_MIN/TS_MAX
        (
            {"ts": "9999-12-31T23:59:59Z"},
            "wrong_type",
            "field 'ts': timestamp outside 1970-2099 (UTC), got a string",
        ),
        (
            {"ts": -1},
            "wrong_type",
            "field 'ts': timestamp outside 1970-2099 (UTC), got an integer",
        ),
    ],
)
def test_poison_lines_are_quarantined_with_their_field(
    change: dict[str, object], reason: str, detail: str
) -> None:
    """Lines that validated but that the store could not hold (PostgreSQL's JSONB refuses NaN; a 255-character
    column; an ISO time before year 1 in UTC) failed their whole batch; now each is one quarantined line."""
    got = parse_line(json.dumps(rewrite(**change)))
    assert got == LineError(reason, detail)


def test_1e400_overflows_to_infinity_and_is_quarantined() -> None:
    text = json.dumps(rewrite(latency_ms=1.0)).replace('"latency_ms": 1.0', '"latency_ms": 1e400')
    assert parse_line(text) == LineError("non_finite_number", "field 'latency_ms' is NaN or infinite")


@pytest.mark.parametrize("number", ["NaN", "-Infinity", "1E+309", "1" * 400 + ".5", "-" + "9" * 310 + ".0e0"])
def test_every_spelling_of_a_non_finite_number_is_quarantined(number: str) -> None:
    """The decoder's hooks see each number: a 400-digit mantissa overflows as 1e400 does, although no
    "e" followed by three digits, what the earlier pre-test looked for, is in the line."""
    text = json.dumps(rewrite(latency_ms=1.0)).replace('"latency_ms": 1.0', f'"latency_ms": {number}')
    assert parse_line(text) == LineError("non_finite_number", "field 'latency_ms' is NaN or infinite")


def test_a_non_finite_number_in_a_broken_line_is_reported_as_broken_json() -> None:
    text = json.dumps(rewrite(latency_ms=1.0)).replace('"latency_ms": 1.0', '"latency_ms": NaN')[:-1]
    # the closing brace cut off: the decoder stops at the end of the line, past the NaN
    column = len(text) + 1
    assert parse_line(text) == LineError(
        "invalid_json", f"invalid JSON at column {column}: Expecting ',' delimiter"
    )


def test_text_that_looks_like_an_exponent_is_an_event() -> None:
    got = parse_line(json.dumps(rewrite(query="model e123 vs E+999, NaN or Infinity")))
    assert isinstance(got, ParsedEvent) and got.data.query == "model e123 vs E+999, NaN or Infinity"


def test_a_byte_order_mark_at_the_start_of_a_file_is_not_part_of_the_first_event() -> None:
    got = parse_line("\ufeff" + json.dumps(rewrite()))
    assert isinstance(got, ParsedEvent) and got.kind == "rewrite"
