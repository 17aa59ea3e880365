"""The one exception tree of rewrite-monitor.

::

    MonitorError                 base: anything the tool reports to its operator       exit code
    ├── ConfigError              settings or the config file are invalid                   2
    ├── RulesError               a rules/*.yaml file is invalid (``file:line: reason``)     2
    ├── LabelError               a label file for ``evaluate`` is invalid (file:line)      2
    ├── ProposalError            an alias proposal is not acceptable                      2
    ├── IngestError              a source cannot be read at all (one bad line never raises) 3
    ├── StorageError             the database is unreachable or its schema is not at head   4
    ├── ReplayError              the rewriter could not be replayed                        5
    ├── AmbiguousRequestError    a request id names several conversations (use --conv)    2
    ├── QueueError               a queue operation is refused (claimed by someone else...)  6
    └── WorkerError              a worker cannot start (another holds a SQLite store...)    7
        └── PoolError            a check worker process died mid-batch (nothing written)   7

Library code raises these and never prints or exits; ``monitor.cli.app`` maps them to exit codes.
"""

from __future__ import annotations

from collections.abc import Iterable


class MonitorError(Exception):
    """Base class of every error rewrite-monitor reports to its operator."""

    exit_code = 1


class ConfigError(MonitorError):
    """Settings or the config file are invalid; the message names the setting and value."""

    exit_code = 2


class RulesError(MonitorError):
    """A rules file is invalid; the message reads ``file:line: reason``."""

    exit_code = 2


class IngestError(MonitorError):
    """A whole source is unreadable (missing path, permission denied, corrupt gzip stream)."""

    exit_code = 3


class StorageError(MonitorError):
    """The database cannot be reached, or its schema is not at the migrations' head."""

    exit_code = 4


class ReplayError(MonitorError):
    """Replaying a regression case through the rewriter failed."""

    exit_code = 5


class LabelError(MonitorError):
    """A label file is unreadable or a line lacks ``request_id``; the message names file and line."""

    exit_code = 2


class ProposalError(MonitorError):
    """An alias proposal is not acceptable (fewer than two distinct members, unknown queue item)."""

    exit_code = 2


class QueueError(MonitorError):
    """A queue operation is not allowed (item claimed by someone else, unknown label, no such item)."""

    exit_code = 6


class AmbiguousRequestError(MonitorError):
    """A request id names rewrites of several conversations; the message lists them (pick one with
    ``--conv``). Request ids are meant to be unique, but the store keys requests by conversation."""

    exit_code = 2

    def __init__(
        self, request_id: str, conv_ids: Iterable[str], hint: str = "choose one with --conv"
    ) -> None:
        self.request_id = request_id
        self.conv_ids = sorted(set(conv_ids))
        super().__init__(
            f"request id {request_id!r} names rewrites of several conversations "
            f"({', '.join(self.conv_ids)}): {hint}"
        )

    def with_hint(self, hint: str) -> AmbiguousRequestError:
        """The same error with another way out (the dashboard has no ``--conv``)."""
        return AmbiguousRequestError(self.request_id, self.conv_ids, hint)


class WorkerError(MonitorError):
    """A worker cannot start or run: another worker holds a SQLite store, or a job name is unknown."""

    exit_code = 7


class PoolError(WorkerError):
    """A process of the check phase's pool died mid-batch (killed, out of memory): that batch was not
    written, and the next run or cycle checks it (``monitor.worker.pool``)."""


def utf8_fault(exc: UnicodeDecodeError) -> tuple[int, str]:
    """``(line, "not UTF-8 text (byte 0x.. at column N)")`` for ``exc`` raised by decoding a whole
    file's bytes (``exc.object``); callers prefix the file name: ``labels.jsonl:3: not UTF-8 text
    (byte 0xe9 at column 12)``. Lines and columns count from 1; columns in bytes."""
    raw, at = exc.object, exc.start
    line, column = raw.count(b"\n", 0, at) + 1, at - raw.rfind(b"\n", 0, at)
    return line, f"not UTF-8 text (byte 0x{raw[at]:02x} at column {column})"
