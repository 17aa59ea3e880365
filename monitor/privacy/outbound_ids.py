"""Ids that leave the machine beside exports: :func:`outbound_id`, the form of a request or conversation
id in an alert, a log line or an OTLP evaluation record (as logged, or ``pid_`` and a keyed hash).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from functools import lru_cache

from monitor.privacy.patterns import pattern_spans

OUTBOUND_ID_MODES = ("hash_personal", "hash_all", "raw")
"""What an external payload carries for a request or conversation id (the ``outbound_ids`` setting):
``hash_personal`` (default) the keyed hash of an id in which :func:`personal_id` finds personal data
and the id itself otherwise, ``hash_all`` the hash of every id, ``raw`` every id as logged."""
HASHED_ID_PREFIX = "pid_"
HASHED_ID_RE = re.compile(r"^pid_[0-9a-f]{20}$")
"""What a hashed id looks like: ``pid_`` and 20 hex characters (80 bits of HMAC-SHA256: no two ids of
one store meet by chance)."""
_ID_SEPARATORS = re.compile(r"[_:/|#=;,]+")


@lru_cache(maxsize=1 << 16)
def personal_id(value: str) -> bool:
    """Whether the redactor (:func:`pattern_spans`: e-mail, phone in any of :data:`PHONE_REGIONS`'
    formats or international, IBAN, card, IP, national id, credential, secret, street address) finds
    personal data in the id ``value``, read as written, percent-decoded (``dana%40example.com``) and with
    the separators ids use (``_ : / | # = ; ,``) as spaces, so ``conv_+14155550134_3`` and
    ``user:dana@example.com`` are found. Errs towards hashing: a 10-digit number that is a valid phone
    number, or a Luhn-valid digit run, is hashed whatever it stands for. A name is not looked for (an id
    has no sentence to read it in)."""
    from urllib.parse import unquote

    # memoised: findings --otlp asks for the same request and conversation ids once per finding, and
    # each ask runs the phone matcher of seven regions over up to four forms (about 0.5 ms)
    forms = [value, unquote(value)]
    forms += [_ID_SEPARATORS.sub(" ", f) for f in forms]
    return any(pattern_spans(form) for form in dict.fromkeys(forms))


def hashed_id(value: str, key: bytes) -> str:
    """``pid_`` and the first 20 hex characters of HMAC-SHA256 of ``value`` under ``key``: the same id
    gives the same hash in every payload of one store, and nobody without the store's key can tell which
    id it was (``rewrite-monitor show pid_...`` resolves it locally)."""
    return HASHED_ID_PREFIX + hmac.new(key, value.encode(), hashlib.sha256).hexdigest()[:20]


def outbound_id(value: str, key: bytes, mode: str = "hash_personal") -> str:
    """The form of the id ``value`` an external payload (an alert to Sentry, a webhook, Slack or
    PagerDuty, the worker's log, the OTLP evaluation records) carries under ``mode``
    (:data:`OUTBOUND_ID_MODES`). Raises ``ValueError`` for another mode."""
    if mode not in OUTBOUND_ID_MODES:
        raise ValueError(f"outbound_ids must be one of {', '.join(OUTBOUND_ID_MODES)}, not {mode!r}")
    if mode == "raw" or (mode == "hash_personal" and not personal_id(value)):
        return value
    return hashed_id(value, key)
