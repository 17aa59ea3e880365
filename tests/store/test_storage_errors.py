"""Database errors as the commands print them: one line, password hidden, no logged value."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.exc import DBAPIError

from monitor.store.engine import storage_error, value_free


class _DriverError(Exception):
    sqlstate = "22P02"


def test_value_free_keeps_the_first_line_and_schema_names_only() -> None:
    exc = _DriverError(
        'invalid input syntax for type json: "{"q": "my card 4111"}"\n'
        'DETAIL:  Token "my" is invalid.\nCONTEXT:  JSON data, line 1: {"q": "my card 4111"...'
    )
    assert value_free(exc) == 'invalid input syntax for type json: "…" (SQLSTATE 22P02)'
    exc2 = Exception(
        'duplicate key value violates unique constraint "uq_events_event_key"\nDETAIL: Key (x)=(y)'
    )
    assert value_free(exc2) == 'duplicate key value violates unique constraint "uq_events_event_key"'


def test_a_real_driver_error_quoting_a_value_is_printed_without_it(engine: Engine) -> None:
    sql = (
        "SELECT CAST('secret-4111' AS INTEGER)"
        if engine.dialect.name == "postgresql"
        else 'SELECT * FROM "secret-4111"'  # SQLite: no such table: secret-4111
    )
    with engine.connect() as conn, pytest.raises(DBAPIError) as info:
        conn.execute(text(sql))
    message = str(storage_error(info.value, engine.url))
    assert "secret" not in message and "4111" not in message
    assert message.startswith("database error on ")


def test_a_password_is_hidden_where_it_stands_alone_not_inside_words() -> None:
    """A one-letter password ("p") must not turn "port" into "***ort"; a password the driver echoes whole
    is hidden."""
    said = 'connection to server at "127.0.0.1", port 1 failed: accepting TCP/IP? password p rejected'
    exc = DBAPIError(None, None, Exception(said))
    message = str(storage_error(exc, "postgresql://u:p@127.0.0.1:1/x"))
    assert "port 1 failed: accepting TCP/IP? password *** rejected" in message
