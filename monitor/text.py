"""Text helpers every stage shares: logged text made safe to show, and the one normaliser of terms.

Imports only the standard library.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# C0 controls but tab and newline, DEL, and C1 controls (U+0080-U+009F: 0x9B is a one-byte CSI on
# some terminals). CRLF is a line break written by Windows producers, so it stays one.
# C0 (but newline and tab), DEL, C1, and the invisible format characters that reorder or hide text:
# the bidirectional embeddings, overrides and isolates (U+202A-202E, U+2066-2069, "Trojan Source",
# CVE-2021-42574), the marks U+200E/200F and U+061C, zero-width characters (U+200B-200D, U+2060,
# U+FEFF).
_CONTROL_RE = re.compile(
    "\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]"
)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return "\n" if char == "\r\n" else f"\\u{ord(char):04x}"


def visible(text: str) -> str:
    """``text`` safe to print on a terminal: each control character other than newline and tab (C0,
    DEL, C1) and each invisible bidirectional or zero-width character becomes its JSON-style escape,
    ``"\\x1b"`` -> ``"\\\\u001b"``; CRLF becomes a newline.

    The stored NUL of a quarantine excerpt is written the same way (``\\u0000``).
    """
    return _CONTROL_RE.sub(_escape, text)


def _visible_with_offsets(text: str) -> tuple[str, list[int]]:
    """``visible(text)`` and where each index ``0..len(text)`` of ``text`` lands in it, so character
    spans computed on the logged text (the checks' evidence) still mark the same characters."""
    pieces: list[str] = []
    where: list[int] = []
    n = 0
    for i, char in enumerate(text):
        where.append(n)
        piece = "" if char == "\r" and text[i + 1 : i + 2] == "\n" else visible(char)
        pieces.append(piece)
        n += len(piece)
    where.append(n)
    return "".join(pieces), where


# -- terms ---------------------------------------------------------------------------------------
# A term is what a reviewer types or a rules file lists: a must-include / must-not-include word of a
# verdict, a member of an alias group, a qualifier phrase. Stored terms keep the reviewer's spelling
# (``normalise_term``); the checks compare phrases case-insensitively (``match_key``).
_JOINERS_RE = re.compile(r"[-_\u2013\u2014]+")
_NOT_WORD_RE = re.compile(r"[^\w\s]")


def normalise_term(text: str) -> str:
    """A term as stored: surrounding whitespace removed and each inner run of whitespace one space;
    case and punctuation kept. ``"  Dublin \\t office "`` -> ``"Dublin office"``."""
    return " ".join(text.split())


def normalise_terms(terms: Iterable[str], *, ignore_case: bool = False) -> list[str]:
    """Each term through :func:`normalise_term`, blank ones dropped, duplicates dropped (the first
    kept), in order. With ``ignore_case`` two terms differing only in case are duplicates, and the
    first spelling is kept: ``["SLA", " sla", "Dublin"]`` -> ``["SLA", "Dublin"]`` (alias members)."""
    out: list[str] = []
    seen: set[str] = set()
    for term in terms:
        term = normalise_term(term)
        key = term.casefold() if ignore_case else term
        if term and key not in seen:
            seen.add(key)
            out.append(term)
    return out


def split_terms(text: str, *, ignore_case: bool = False) -> list[str]:
    """The terms of a comma-separated field (the terminal review, the dashboard form):
    ``normalise_terms(text.split(","))``. ``" Dublin, ,SLA ,Dublin"`` -> ``["Dublin", "SLA"]``."""
    return normalise_terms(text.split(","), ignore_case=ignore_case)


def match_key(text: str, *, punctuation: bool = False) -> str:
    """The form phrases are compared in by the checks: lower-cased, each run of hyphens, underscores
    and en/em dashes a space, then :func:`normalise_term`: ``"Single-Tenant  Hosting"`` ->
    ``"single tenant hosting"``.

    With ``punctuation`` every character that is not a word character (letter, digit, underscore) or
    whitespace becomes a space instead, so underscores are kept: ``"Why? The e-mail_id!"`` ->
    ``"why the e mail_id"`` (``references`` compares a query with the latest message this way).
    """
    pattern = _NOT_WORD_RE if punctuation else _JOINERS_RE
    return normalise_term(pattern.sub(" ", text.lower()))


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun`` in agreement: ``counted(1, "case")`` is "1 case", ``counted(2, "case")`` "2
    cases" (``plural`` when the plural is not ``noun + "s"``)."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"


_SCHEME_RE = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<rest>.*)$", re.DOTALL)
_QUERY_PARAM_RE = re.compile(r"(?P<sep>[?&])(?P<key>[^=&]*)=(?P<value>[^&]*)")


def _mask_query_password(text: str) -> str:
    """``text`` with the value of every ``password`` query parameter masked, its key percent-decoded as a
    URL parser decodes it (``pass%77ord``) and its value to the next ``&`` (a ``#`` inside it too: the
    parsers read it as part of the value)."""
    from urllib.parse import unquote

    def one(m: re.Match[str]) -> str:
        if unquote(m.group("key")).strip().lower() != "password":
            return m.group(0)
        return f"{m.group('sep')}{m.group('key')}=***"

    return _QUERY_PARAM_RE.sub(one, text)


def mask_url(url: str) -> str:
    """``url`` with its password replaced by ``***``, whatever its syntax: the one masking of every
    message, log line and page that names a database URL.

    The user information is everything before the last ``@`` before the query when only that part holds
    one, else before the last ``@`` of all (a raw ``@``, ``/``, ``?`` or ``#`` in a password makes a URL
    parser split it elsewhere and show the rest as a host: ``monitor:s3cr@tpw@db`` must not show
    ``tpw``); what follows its first ``:`` is the password. Without an ``@``, what follows a
    ``:`` in the authority is masked unless it is a port number (``postgresql://u:s3cret/db`` is a user
    and password without a host). A ``password`` query parameter (libpq takes one; its key may be
    percent-encoded) is masked too, and a text with an ``@`` but no ``scheme://`` shows only what follows
    its last ``@``. Examples: ``postgresql://monitor:s3cr@t/pw@db:5432/rm`` ->
    ``postgresql://monitor:***@db:5432/rm``; ``postgresql://db/rm?password=x`` ->
    ``postgresql://db/rm?password=***``.
    """
    m = _SCHEME_RE.match(url)
    scheme, rest = (m.group("scheme"), m.group("rest")) if m else ("", url)
    # the last '@' before the query when there is one ("?application_name=a@b" is no user information),
    # else the last of all (a raw '?' or '#' in the password: "s3cr?t@db")
    before_query = re.split(r"[?#]", rest, maxsplit=1)[0]
    after_query = rest[len(before_query) :]
    clear = "@" in before_query and "@" not in after_query
    at = before_query.rfind("@") if clear else rest.rfind("@")  # '@' on both sides: hide the most
    if at >= 0:
        userinfo, host = rest[:at], rest[at + 1 :]
        if not m:
            rest = "***@" + host
        elif ":" in userinfo:
            rest = userinfo.split(":", 1)[0] + ":***@" + host
    elif m:
        authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
        if ":" in authority and not re.fullmatch(r"[^:]*:\d*|\[[^\]]*\](?::\d*)?", authority):
            rest = authority.split(":", 1)[0] + ":***" + rest[len(authority) :]
    return _mask_query_password(scheme + rest)


def ambiguous_userinfo(url: str) -> bool:
    """Whether a server URL cannot be split into user information and host without guessing: its user
    information (before the last ``@`` before the query) holds a raw ``@`` or ``/``, or an ``@`` stands
    both before and after the first ``?`` or ``#`` (``u:a@b?c@db``: the password may be ``a@b?c``). A
    URL parser (urllib, SQLAlchemy, libpq) would read part of the password as the host, the path or the
    query, so the ``@`` or ``/`` must be percent-encoded (``%40``, ``%2F``) to mean what was written
    (RFC 3986, 3.2.1). A ``sqlite`` URL has no user information."""
    m = _SCHEME_RE.match(url)
    if m is None or m.group("scheme").lower().startswith("sqlite"):
        return False
    rest = m.group("rest")
    before_query = re.split(r"[?#]", rest, maxsplit=1)[0]
    at = before_query.rfind("@")
    if at < 0:
        return False
    return any(c in before_query[:at] for c in "@/") or "@" in rest[len(before_query) :]
