"""One HTTP POST that says what failed without saying where: the alert destinations (webhook, Slack,
PagerDuty) and the Langfuse score export send through it. Standard library only.
"""

from __future__ import annotations

import urllib.error
import urllib.request

HTTP_TIMEOUT_SECONDS = 10.0
"""How long one HTTP delivery may take before it counts as failed (and is retried later)."""


def post(request: urllib.request.Request, timeout: float = HTTP_TIMEOUT_SECONDS) -> str | None:
    """Send ``request``; ``None`` when the destination answered 2xx, else what failed: ``HTTP <status>``
    or the error's class name (never the URL, which is a secret, nor a response body)."""
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:  # noqa: S310 (http(s) only, validated)
            code = resp.status
    except urllib.error.HTTPError as exc:
        code = exc.code
    except (OSError, ValueError) as exc:  # URLError, timeouts, refused connections
        reason = getattr(exc, "reason", None)
        return type(reason).__name__ if isinstance(reason, BaseException) else type(exc).__name__
    return None if 200 <= code < 300 else f"HTTP {code}"
