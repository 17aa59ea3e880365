"""The one exception tree of rewrite-monitor.

::

    MonitorError                 base: anything the tool reports to its operator
    ├── ConfigError              settings or the config file are invalid
    ├── RulesError               a rules/*.yaml file is invalid (message: ``file:line: reason``)
    ├── IngestError              a source cannot be read at all (one bad line never raises)
    ├── StorageError             the database is unreachable or its schema is not at head
    └── ReplayError              the rewriter could not be replayed

Library code raises these and never prints or exits; ``monitor.cli`` maps them to exit codes.
"""


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
