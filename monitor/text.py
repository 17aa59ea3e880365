"""Text helpers every stage shares: logged text made safe to show, and the one normaliser of terms.

Imports only the standard library.
"""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, and C1 controls (U+0080-U+009F: 0x9B is a one-byte CSI on
# some terminals). CRLF is a line break written by Windows producers, so it stays one.
_CONTROL_RE = re.compile(r"\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return "\n" if char == "\r\n" else f"\\u{ord(char):04x}"


def visible(text: str) -> str:
    """``text`` safe to print on a terminal: each control character other than newline and tab (C0,
    DEL, C1) becomes its JSON-style escape, ``"\\x1b"`` -> ``"\\\\u001b"``; CRLF becomes a newline.

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
