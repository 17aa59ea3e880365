"""Replay regression cases through a rewriter built on the anthropic SDK (judging: ``monitor.replay.judge``).

The rewriter: ``system`` = the contextualizer prompt (:data:`PROMPT_PATH`, or ``--prompt FILE``), one
user turn holding the numbered transcript and the latest message, ``max_tokens`` capped by the
``replay_max_tokens`` setting. Retries are the SDK's: 408/409/429/5xx (529 overloaded included) and
connection errors are retried ``replay_max_retries`` times with exponential backoff (0.5 s × 2^n, at
most 8 s, jittered) or after the server's ``retry-after``. The per-case timeout bounds the whole case,
retries included (``asyncio.wait_for``). ``concurrency`` cases run at once.

Nothing here logs transcripts; results carry the new query, which the eval set already holds.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from monitor.errors import ReplayError
from monitor.replay.judge import (
    CaseResult,
    Usage,
    case_result,
    judged,
    parse_model_output,
)

if TYPE_CHECKING:
    import anthropic
    import httpx2
    from anthropic.types import Message as ApiMessage

    from monitor.checks.rules import Rules


PROMPT_PATH = Path(__file__).resolve().parent / "prompts" / "contextualizer.md"


def render_user_turn(messages: Sequence[dict[str, str]], latest: str) -> str:
    """The user turn sent to the rewriter: the numbered transcript, then the latest message."""
    lines = ["Conversation so far (oldest first):"]
    lines += [f"[{i}] {m['role']}: {m['content']}" for i, m in enumerate(messages, 1)]
    lines += ["", "Latest user message:", latest]
    return "\n".join(lines)


# -- the rewriter ---------------------------------------------------------------------------------
def make_client(
    *, api_key: str, max_retries: int, http_client: httpx2.AsyncClient | None = None
) -> anthropic.AsyncAnthropic:
    """An ``anthropic.AsyncAnthropic`` client (``http_client``: e.g. one over a mock transport)."""
    import anthropic

    return anthropic.AsyncAnthropic(api_key=api_key, max_retries=max_retries, http_client=http_client)


async def replay_case(
    case: dict[str, Any],
    *,
    client: anthropic.AsyncAnthropic,
    model: str,
    system: str,
    max_tokens: int,
    timeout: float,
    rules: Rules,
) -> CaseResult:
    """Rewrite one case with the model and judge it; errors become ``status="error"`` results."""
    import anthropic

    started = time.perf_counter()

    async def call() -> ApiMessage:
        return await client.messages.create(
            model=model,
            max_tokens=max_tokens,
            system=system,
            messages=[{"role": "user", "content": render_user_turn(case["messages"], case["latest"])}],
            timeout=timeout,
        )

    try:
        resp = await asyncio.wait_for(call(), timeout)
    except TimeoutError:
        return case_result(
            case, "error", failures=[f"timed out after {timeout:g} s"], model=model, seconds=timeout
        )
    except anthropic.APIStatusError as exc:
        msg = f"API error {exc.status_code} after retries: {type(exc).__name__}"
        return case_result(case, "error", failures=[msg], model=model, seconds=time.perf_counter() - started)
    except anthropic.APIConnectionError as exc:
        msg = f"API unreachable after retries: {type(exc).__name__}"
        return case_result(case, "error", failures=[msg], model=model, seconds=time.perf_counter() - started)
    usage: Usage = {
        "model": resp.model or model,
        "input_tokens": resp.usage.input_tokens,
        "output_tokens": resp.usage.output_tokens,
        "seconds": time.perf_counter() - started,
    }
    text = "".join(b.text for b in resp.content if isinstance(b, anthropic.types.TextBlock))
    try:
        rewrite = parse_model_output(text)
    except ReplayError as exc:
        reason = str(exc) + (" (output cut at max_tokens)" if resp.stop_reason == "max_tokens" else "")
        return case_result(case, "error", failures=[reason], **usage)
    return judged(case, rewrite, rules, **usage)


async def replay_cases(
    cases: Sequence[dict[str, Any]],
    *,
    client: anthropic.AsyncAnthropic,
    model: str,
    system: str,
    max_tokens: int,
    timeout: float,
    concurrency: int,
    rules: Rules,
) -> list[CaseResult]:
    """Replay every case, at most ``concurrency`` at a time; results in the order of ``cases``."""
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(case: dict[str, Any]) -> CaseResult:
        async with gate:
            return await replay_case(
                case,
                client=client,
                model=model,
                system=system,
                max_tokens=max_tokens,
                timeout=timeout,
                rules=rules,
            )

    return list(await asyncio.gather(*(one(c) for c in cases)))
