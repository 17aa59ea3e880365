"""Log sources: files (plain or ``.gz``), directories and standard input, read as bounded raw lines.

A directory is read recursively in sorted path order, picking up :data:`LOG_SUFFIXES`; a path to a pipe or
device is refused (it has no identity a re-run could recognise; such a stream goes through ``-``). Lines
are read in chunks of at most ``max_line_bytes``, so a giant line never sits whole in memory. Nothing here
touches the store.
"""

from __future__ import annotations

import fnmatch
import glob
import gzip
import io
import json
import os
import re
import stat
import sys
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from monitor.errors import IngestError

LOG_SUFFIXES = (".jsonl", ".ndjson", ".json", ".log")
"""The log file name endings a directory walk picks up (see :data:`DIR_NAME_RE`); a file named
explicitly is read whatever its name."""
LIVE_SUFFIXES = (".jsonl", ".ndjson", ".log", ".jsonl.gz", ".ndjson.gz", ".log.gz")
"""The names the worker follows in a configured directory: live logs, not their rotated generations,
which it reads through rotation tracking (``monitor.ingest.tail``) under the live file's name."""
GENERATION = r"[.-](?:\d{1,4}|\d{4}-?\d{2}-?\d{2}(?:[-_T]?\d{2}(?:-?\d{2}){0,2})?)"
"""A rotated generation's suffix: numbered (app.jsonl.1, logrotate, RotatingFileHandler) or dated
(app.jsonl-20240304, app.jsonl.2024-03-04, app.jsonl.2024-03-04_10, TimedRotatingFileHandler)."""
BACKUP_STAMP = r"-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}"
"""The time a size-rotated backup carries between the log's stem and its extension
(``traces-2024-03-04T08-00-00.000.jsonl``): the OpenTelemetry Collector's file exporter rotates so
(lumberjack's backup names, in UTC unless ``localtime`` is set)."""
DIR_NAME_RE = re.compile(r"^.+(?:\.jsonl|\.ndjson|\.json|\.log)" f"(?:{GENERATION})?" r"(?:\.gz)?$")
"""The names a directory walk reads: a log name (:data:`LOG_SUFFIXES`), optionally followed by a
rotation generation, optionally gzipped. ``--glob`` replaces it with shell patterns."""


ProgressFn = Callable[[int], None]


@dataclass(frozen=True, slots=True)
class RawLine:
    """One physical line (or one element of a JSON document): its 1-based number, bytes without the
    newline, and flags."""

    line_no: int
    data: bytes
    complete: bool
    too_long: bool = False
    size: int = 0
    element: bool = False
    """An element of a whole-JSON document (:func:`read_input`): ``line_no`` is its place in it."""


@dataclass(frozen=True, slots=True)
class Source:
    """A readable input: ``origin`` is what gets stored (absolute path, or ``-`` for stdin)."""

    origin: str
    path: Path | None

    @property
    def size(self) -> int | None:
        """Size in bytes on disk (compressed size for ``.gz``), or ``None`` for stdin."""
        return self.path.stat().st_size if self.path else None

    def open(self) -> IO[bytes]:
        """Open for binary reading; raises ``IngestError`` when the source cannot be opened."""
        if self.path is None:
            return sys.stdin.buffer
        try:
            if self.path.name.endswith(".gz"):
                return gzip.open(self.path, "rb")  # type: ignore[return-value]
            return self.path.open("rb")
        except OSError as exc:
            raise IngestError(f"{self.origin}: cannot open: {exc.strerror or exc}") from exc


NOT_REGULAR = (
    (stat.S_ISFIFO, "a pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)
"""The kinds of path that are no regular file, as an error or a warning names them: ``ingest`` refuses
one named on its command line, the worker skips one its source patterns match (with one warning)."""


class UnreadablePath(IngestError):
    """A path given to :func:`discover` that yields no source; ``reason`` is the message without the
    path it starts with, for a report that names the path beside it."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.reason = reason


def _not_a_file(p: Path, mode: int) -> IngestError:
    """The refusal of a path that exists but is neither a regular file nor a directory."""
    kind = next((name for test, name in NOT_REGULAR if test(mode)), "not a regular file")
    # A pipe or device (`<(zcat f.gz)`, /dev/stdin) reads once and has no stable identity: its path
    # (/dev/fd/63) names a different stream on every run, so a re-run could not tell its lines from
    # new ones (stored events are known by origin and line number). `-` is that one-shot stream.
    return UnreadablePath(
        p,
        f"not a regular file or directory ({kind}): pipe it to `rewrite-monitor ingest -` "
        "instead, e.g. `zcat logs.jsonl.gz | rewrite-monitor ingest -`",
    )


def discover(
    paths: Iterable[str | Path],
    *,
    globs: Sequence[str] | None = None,
    skipped: list[Path] | None = None,
    errors: list[tuple[str, str]] | None = None,
) -> list[Source]:
    """Expand paths into sources: directories recursively (sorted, hidden entries skipped), reading
    the files whose names match :data:`DIR_NAME_RE`, or any of the shell patterns ``globs`` when given
    (matched against the file name: ``--glob '*.txt'``). The other files of a walked directory are
    appended to ``skipped`` when a list is passed (the CLI says how many, so none is skipped silently).

    Raises :class:`UnreadablePath` (an ``IngestError``) for a path that does not exist or cannot be
    looked at, a path that is not a regular file or directory (a pipe such as ``<(zcat f.gz)``, a device
    such as ``/dev/null``: read those through ``-``), and a directory with no log files. With an
    ``errors`` list, such a path is appended to it as ``(path, reason)`` (the message without the path)
    instead and the other paths are still expanded (one mistyped path does not stop a backfill); the
    first such error is then raised only when no path is left to read. ``-`` (standard input) given more
    than once is a ``ConfigError`` (exit 2): the stream can be read once, and the second read stored
    nothing while the command said it read it twice. A file named more than once is read once, where it
    first came.
    """
    paths = list(paths)
    if sum(str(p) == "-" for p in paths) > 1:
        from monitor.errors import ConfigError

        raise ConfigError("- (standard input) is given more than once: it can be read only once")

    def wanted(name: str) -> bool:
        if globs:
            return any(fnmatch.fnmatchcase(name, g) for g in globs)
        return DIR_NAME_RE.match(name) is not None

    out: list[Source] = []
    failed: list[tuple[str, str]] = []
    first: UnreadablePath | None = None
    for raw in paths:
        try:
            out.extend(_expand(raw, wanted, globs, skipped))
        except UnreadablePath as exc:
            if errors is None:
                raise
            first = first or exc
            failed.append((str(raw), exc.reason))  # the report names the path beside the reason
    if first is not None and not out:
        raise first
    if errors is not None:
        errors.extend(failed)
    # a file named twice (``ingest f f``, or inside a folder also given) is read once: a second read
    # stores nothing and only doubled the counts the summary printed
    first_of: dict[str, Source] = {}
    for src in out:
        first_of.setdefault(src.origin, src)
    return list(first_of.values())


def _expand(
    raw: str | Path, wanted: Callable[[str], bool], globs: Sequence[str] | None, skipped: list[Path] | None
) -> list[Source]:
    """The sources of one path given to :func:`discover` (which documents the errors raised)."""
    if str(raw) == "-":
        return [Source("-", None)]
    p = Path(raw)
    try:
        mode = p.stat().st_mode  # follows symlinks, like opening would
    except FileNotFoundError:
        broken = " (a symbolic link to a missing target)" if p.is_symlink() else ""
        raise UnreadablePath(p, f"no such file or directory{broken}") from None
    except OSError as exc:
        raise UnreadablePath(p, f"cannot read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(mode):
        files = sorted(
            f
            for f in p.rglob("*")
            if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts)
        )
        found = [f for f in files if wanted(f.name)]
        if skipped is not None:
            skipped.extend(f for f in files if not wanted(f.name))
        if not found:
            what = (
                f"matching {', '.join(globs)}"
                if globs
                else f"named *{{{','.join(LOG_SUFFIXES)}}}[.N|.DATE][.gz]"
            )
            raise UnreadablePath(p, f"directory holds no log files {what}")
        return [Source(str(f.resolve()), f.resolve()) for f in found]
    if stat.S_ISREG(mode):
        return [Source(str(p.resolve()), p.resolve())]
    raise _not_a_file(p, mode)


MAX_PATTERN_PATHS = 100_000
"""Paths one shell pattern may name before :func:`expand_pattern` refuses it: a ``**`` over the wrong
folder (``/``, a home directory) is a configuration mistake to report, not a walk to finish."""
MAX_PATTERN_WALK = 1_000_000
"""Directory entries a ``**`` walk may look at before :func:`expand_pattern` refuses its pattern, whatever
it matched: ``/**/app.jsonl`` would read the whole file system to find one file."""


class PatternError(IngestError):
    """A configured source pattern that cannot be expanded safely (it names or walks too many paths)."""


def _hidden(name: str) -> bool:
    return name.startswith(".")


def _matches(parts: Sequence[str], pats: Sequence[str]) -> bool:
    """Whether the path components ``parts`` match the pattern components ``pats`` as glob matches them:
    ``**`` is any number of components (none included) but no hidden one, another component matches as
    :func:`fnmatch.fnmatchcase`, and a hidden name only when the pattern component starts with a dot."""
    if not pats:
        return not parts
    if pats[0] == "**":
        if _matches(parts, pats[1:]):
            return True
        return bool(parts) and not _hidden(parts[0]) and _matches(parts[1:], pats)
    if not parts or (_hidden(parts[0]) and not _hidden(pats[0])):
        return False
    return fnmatch.fnmatchcase(parts[0], pats[0]) and _matches(parts[1:], pats[1:])


def expand_pattern(
    pattern: str, *, max_paths: int = MAX_PATTERN_PATHS, max_walk: int = MAX_PATTERN_WALK
) -> list[str]:
    """The existing paths a shell pattern names, sorted: what ``glob.glob(pattern, recursive=True)``
    returns (hidden names only where the pattern writes a dot), except that a ``**`` walk never enters a
    directory through a symbolic link to one of the directories it is already inside (``self -> .``,
    ``up -> ..``, two links to each other): the standard library's glob follows such a loop until the
    paths grow too long, which kept a worker cycle busy without end (issue 38). Other links are followed,
    so a directory reached through a link and by its own name is listed under both, as glob lists it. A
    pattern without ``**`` is the standard glob (each of its components lists one directory level, which
    cannot loop); one without wildcards names itself when it exists. Paths keep the pattern's form
    (relative stays relative).

    Raises :class:`PatternError` naming the pattern when it names more than ``max_paths`` paths or its
    walk looks at more than ``max_walk`` directory entries.
    """
    if not glob.has_magic(pattern):
        return [pattern] if os.path.lexists(pattern) else []
    parts = Path(pattern).parts
    if "**" not in parts:
        found = glob.glob(pattern)
    else:
        found = _walk_pattern(pattern, parts, max_paths, max_walk)
    if len(found) > max_paths:
        raise PatternError(
            f"source pattern {pattern!r} names more than {max_paths:,} paths: narrow it (a ** over a large "
            "folder?)"
        )
    return sorted(found)


def _walk_pattern(pattern: str, parts: Sequence[str], max_paths: int, max_walk: int) -> list[str]:
    """The matches of a ``**`` pattern (see :func:`expand_pattern`): a walk from the pattern's fixed
    leading folder that keeps, for each directory, the real paths of the directories it lies inside."""
    k = next(i for i, part in enumerate(parts) if glob.has_magic(part))
    base = os.path.join(*parts[:k]) if k else os.curdir
    pats = parts[k:]
    dot_dirs = any(_hidden(p) for p in pats)
    inside: dict[str, frozenset[str]] = {base: frozenset({os.path.realpath(base)})}
    found: list[str] = []
    seen = 0
    for root, dirs, files in os.walk(base, followlinks=True):
        chain = inside.pop(root, frozenset({os.path.realpath(root)}))
        keep = []
        for d in sorted(dirs):
            if _hidden(d) and not dot_dirs:
                continue
            real = os.path.realpath(os.path.join(root, d))
            if real in chain:
                continue  # a link back to a directory this walk is inside: a loop
            inside[os.path.join(root, d)] = chain | {real}
            keep.append(d)
        dirs[:] = keep
        rel = () if root == base else Path(os.path.relpath(root, base)).parts
        seen += len(keep) + len(files)
        for name in keep + sorted(files):
            if _matches((*rel, name), pats):
                path = os.path.join(root, name)
                found.append(path if k else os.path.relpath(path))
        if len(found) > max_paths:
            break
        if seen > max_walk:
            raise PatternError(
                f"source pattern {pattern!r} walks more than {max_walk:,} directory entries: narrow it "
                "(a ** over a large folder?)"
            )
    return found


def read_lines(
    stream: IO[bytes], max_bytes: int, on_bytes: ProgressFn | None = None, *, first_line_no: int = 1
) -> Iterator[RawLine]:
    """Split a binary stream into lines of at most ``max_bytes`` (newline excluded).

    A longer line is yielded once with ``too_long=True`` and its first ``max_bytes`` bytes; the rest
    of it is read and discarded in chunks. A final line without a newline has ``complete=False``.
    Lines are numbered from ``first_line_no`` (a reader resuming at a cursor passes the next line's
    number, so stored line numbers stay those of the whole file). ``RawLine.size`` counts every byte
    consumed, newline included, so summing sizes gives the byte offset after a line.
    """
    line_no = first_line_no - 1
    while True:
        chunk = stream.readline(max_bytes + 1)
        if not chunk:
            return
        line_no += 1
        size = len(chunk)
        if chunk.endswith(b"\n"):
            if on_bytes:
                on_bytes(size)
            yield RawLine(line_no, chunk[:-1].rstrip(b"\r"), True, size=size)
            continue
        if len(chunk) <= max_bytes:  # end of stream without newline
            if on_bytes:
                on_bytes(size)
            yield RawLine(line_no, chunk, False, size=size)
            return
        head, complete = chunk[:max_bytes], False
        while True:
            rest = stream.readline(1 << 16)
            size += len(rest)
            if not rest:
                break
            if rest.endswith(b"\n"):
                complete = True
                break
        if on_bytes:
            on_bytes(size)
        yield RawLine(line_no, head, complete, too_long=True, size=size)


MAX_DOCUMENT_BYTES = 256 << 20
"""The largest whole-JSON document (a span export's array) read into memory: a bigger one is refused,
naming the JSON Lines form to use instead."""
SNIFF_BYTES = 1 << 16
"""At most this much of the first line is read ahead to tell JSON Lines from a JSON document or a
binary file."""


class Prefixed:
    """A binary stream with bytes already read put back in front, read by lines (what :func:`read_lines`
    asks of a stream)."""

    def __init__(self, head: bytes, stream: IO[bytes]) -> None:
        self._head = head
        self._stream = stream

    def readline(self, limit: int = -1) -> bytes:
        if not self._head:
            return self._stream.readline(limit)
        cut = self._head.find(b"\n")
        end = len(self._head) if cut < 0 else cut + 1
        if limit >= 0:
            end = min(end, limit)
        line, self._head = self._head[:end], self._head[end:]
        if not line.endswith(b"\n") and not self._head and (limit < 0 or len(line) < limit):
            line += self._stream.readline(-1 if limit < 0 else limit - len(line))
        return line

    def pending(self) -> bytes:
        """The bytes put back and not read yet (taken: the stream alone is left)."""
        rest, self._head = self._head, b""
        return rest


def _document_elements(doc: object) -> list[object]:
    """The records of a whole-JSON document: an array's elements; an object's ``data`` array (Phoenix's
    REST span listing); else the object itself (a pretty-printed ``TracesData``, one event)."""
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict) and isinstance(doc.get("data"), list) and "resourceSpans" not in doc:
        return list(doc["data"])
    return [doc]


BOM = b"\xef\xbb\xbf"
SNIFF_LINES = 64
"""Blank lines skipped at most before the first record when telling a file's form."""


def _varint(data: bytes, at: int) -> tuple[int, int] | None:
    """A protobuf varint at ``data[at:]``: ``(value, bytes used)``, or None when it does not end within 5."""
    value = 0
    for i in range(5):
        if at + i >= len(data):
            return None
        b = data[at + i]
        value |= (b & 0x7F) << (7 * i)
        if not b & 0x80:
            return value, i + 1
    return None


MAX_PROTOBUF_MESSAGE = 64 << 20
"""The longest ``TracesData`` the OTLP protobuf file format is taken to hold (bytes): sixteen times the
Collector's default 4 MiB message limit."""


GZIP_PROBE = 1 << 16
"""Bytes read ahead to tell a gzip stream from a junk line that starts like one (only when the input
starts with the gzip signature)."""


def _gzip_signature(raw: bytes) -> bool:
    """``1f 8b 08`` and a flag byte whose reserved bits are clear (RFC 1952, section 2.3.1)."""
    return raw[:3] == b"\x1f\x8b\x08" and len(raw) > 3 and not raw[3] & 0xE0


def _is_gzip(probe: bytes, whole: bool) -> bool:
    """Whether ``probe`` (the input's first bytes, all of them when ``whole``) inflates as gzip: zlib
    accepts it so far and, when it is the whole input, it ends a gzip member. A junk line that starts
    with the signature fails (its header checksum, its deflate blocks) or ends before its member does
    (found by the hypothesis ingest test: ``1f 8b 08 0a``, the flag byte a newline, then JSON Lines)."""
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        inflate.decompress(probe)
    except zlib.error:
        return False
    return inflate.eof or not whole


def _refuse_binary(raw: bytes, whole: bool = False) -> None:
    """Raise :class:`IngestError` when the first bytes of the input (``raw``: all of it when ``whole``)
    carry a binary form: a gzip stream where text was expected (its signature, and the bytes inflate:
    :func:`_is_gzip`), or the OTLP protobuf file format (each ``TracesData`` after its length as four
    big-endian bytes: the length, the tag of field 1 (``0a``), a varint length that fits in the message,
    and the tag of a ``ResourceSpans`` field). Anything else is read as lines, so that one junk first line
    costs that line only."""
    if _gzip_signature(raw) and _is_gzip(raw, whole):
        raise IngestError("a gzip stream, not text: name the file with .gz, or pipe it through zcat")
    if len(raw) >= 7 and raw[4] == 0x0A:
        size = int.from_bytes(raw[:4], "big")
        inner = _varint(raw, 5)
        # a length of at most 64 MiB: its first byte is 0-3, which no line of text starts with (a text
        # line "0\xe0\xa0\x80" followed by "\n0\n" has the rest of the shape)
        if inner is not None and 0 < size <= MAX_PROTOBUF_MESSAGE and 1 + inner[1] + inner[0] <= size:
            after = 5 + inner[1]
            if after < len(raw) and raw[after] in (0x0A, 0x12):
                raise IngestError(
                    "the OTLP protobuf file format (the Collector file exporter's format: proto), not "
                    "JSON Lines: export OTLP JSON instead (format: json)"
                )


def sniff(stream: IO[bytes]) -> tuple[str, bytes]:
    """``(form, head)``: the form of the input ("lines" or "document") and the bytes read to tell it, to
    be put back in front (:class:`Prefixed`). Reads the first non-blank line (after a byte-order mark and
    at most :data:`SNIFF_LINES` blank lines), and the next one when the first is a complete JSON array.

    A **document** opens with ``[`` on a line that is not complete JSON on its own (a pretty-printed
    array), or with a line that is only ``{`` (a pretty-printed object), or is a one-line array with
    nothing after it; a first line that is a complete array followed by more lines is JSON Lines (its
    first record is then refused alone, as not an object). Raises :class:`IngestError` for the binary
    forms :func:`_refuse_binary` tells from the first 16 bytes (up to :data:`GZIP_PROBE` when they start
    like gzip)."""
    raw = stream.read(16)
    whole = len(raw) < 16
    if _gzip_signature(raw) and not whole:
        raw += stream.read(GZIP_PROBE - len(raw))
        whole = len(raw) < GZIP_PROBE
    _refuse_binary(raw, whole)
    lines = Prefixed(raw, stream)
    head = lines.readline(SNIFF_BYTES)
    first = head[len(BOM) :] if head.startswith(BOM) else head
    for _ in range(SNIFF_LINES):
        if first.strip() or not head.endswith(b"\n"):
            break
        more = lines.readline(SNIFF_BYTES)
        head += more
        first = more
    text = first.strip()
    if text == b"{":
        return "document", head + lines.pending()
    if not text.startswith(b"["):
        return "lines", head + lines.pending()
    try:
        json.loads(text.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return "document", head + lines.pending()  # an array that goes on over the next lines
    after = lines.readline(SNIFF_BYTES)
    head += after
    while after and not after.strip() and after.endswith(b"\n"):
        after = lines.readline(SNIFF_BYTES)
        head += after
    return ("lines" if after.strip() else "document"), head + lines.pending()


def read_input(stream: IO[bytes], max_bytes: int, on_bytes: ProgressFn | None = None) -> Iterator[RawLine]:
    """The records of a source, whatever its form (:func:`sniff`), as :class:`RawLine` items.

    - JSON Lines (log format v1, OTLP JSON ``TracesData`` lines, one span export per line): as
      :func:`read_lines` reads them.
    - A whole JSON document (Phoenix and Arize span exports saved as ``.spans.json``, Phoenix's REST span
      listing, a pretty-printed ``TracesData``): read whole (at most :data:`MAX_DOCUMENT_BYTES`), each
      element one record numbered from 1 (``RawLine.element``: its number is its place in the document,
      not a line of the file).
    - Binary input (the OTLP protobuf file format, a gzip stream not named ``.gz``): refused.

    A text read as a document that does not parse but holds a one-line JSON object after its first line
    is JSON Lines behind one junk line (``[`` or ``{`` alone), and is read as lines.

    Raises :class:`monitor.errors.IngestError` naming the form for binary input, a document over the
    size bound, or a document that is not valid JSON (with the line and column where it breaks).
    """
    form, head = sniff(stream)
    if form == "lines":
        yield from read_lines(Prefixed(head, stream), max_bytes, on_bytes)  # type: ignore[arg-type]
        return
    data = head + stream.read(MAX_DOCUMENT_BYTES + 1 - len(head))
    if len(data) > MAX_DOCUMENT_BYTES:
        raise IngestError(
            f"a JSON document over {MAX_DOCUMENT_BYTES >> 20} MiB is not read whole; write it as JSON Lines "
            "(one span, event or TracesData per line)"
        )
    if on_bytes:
        on_bytes(len(data))
    try:
        doc = json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        if _holds_json_lines(data):
            # one junk first line ("[" or "{") ahead of JSON Lines: read line by line, so that line (and
            # any line that is not UTF-8) is quarantined alone and the records after it are kept
            yield from read_lines(io.BytesIO(data), max_bytes)
            return
        if isinstance(exc, UnicodeDecodeError):
            raise IngestError(f"a JSON document that is not UTF-8 (byte {exc.start})") from None
        where = f" at line {exc.lineno}, column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise IngestError(
            "a JSON document (a file that opens with '[' or a lone '{'), not JSON Lines, and it does not "
            f"parse{where}: {getattr(exc, 'msg', type(exc).__name__)}"
        ) from None
    for i, element in enumerate(_document_elements(doc), 1):
        body = json.dumps(element, ensure_ascii=False).encode()
        yield RawLine(i, body[:max_bytes], True, too_long=len(body) > max_bytes, size=0, element=True)


def _holds_json_lines(data: bytes) -> bool:
    """Whether a text that does not parse as one JSON document has a line, after its first, that is a
    complete JSON object with at least one key on its own: a pretty-printed document never has one (each
    key sits on a line of its own), a JSON Lines file whose first line is junk does."""
    for row in data.splitlines()[1:]:
        text = row.strip()
        if not text.startswith(b"{"):
            continue
        try:
            value = json.loads(text.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict) and value:
            return True
    return False


def _noting_last(lines: Iterator[RawLine], last: list[int]) -> Iterator[RawLine]:
    """``lines`` unchanged, keeping the number of the latest one in ``last[0]`` (for "read failed after
    line N")."""
    for raw in lines:
        last[0] = raw.line_no
        yield raw


def read_failure(exc: BaseException) -> str:
    """Why a stream broke, without any of its bytes (gzip quotes a bad header's first bytes).

    Shared by ``ingest`` and the worker's tailing, so both say the same about one fault.
    """
    if isinstance(exc, gzip.BadGzipFile) and str(exc).startswith("Not a gzipped file"):
        return "not a gzip stream (bad header)"
    if isinstance(exc, gzip.BadGzipFile):
        return str(exc)  # CRC or length mismatch: checksums and sizes, never data
    if isinstance(exc, EOFError):
        return "the compressed stream ends early (cut or still being written)"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)  # zlib.error: "Error -3 while decompressing data: ..." names the fault only
