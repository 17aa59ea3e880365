"""Replay through the real anthropic client over an httpx mock transport (no network): pass, fail,
malformed model output, 429 then success, 529 overload, timeout, concurrency, cost, JUnit, --compare,
and the command's refusal without an API key."""

from __future__ import annotations

import asyncio
import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest
from typer.testing import CliRunner

from monitor.checks.rules import load_rules
from monitor.cli.main import app
from monitor.errors import ReplayError
from monitor.replay import client as rp_client
from monitor.replay import judge as rp_judge
from monitor.replay import prices as rp_prices
from monitor.replay import report as rp_report

RULES = load_rules()
MODEL = "claude-haiku-4-5"  # the settings default (claude-sonnet-4-5) is deprecated in the SDK
runner = CliRunner()


def case(i: int = 1, **over: Any) -> dict[str, Any]:
    """A case in the export shape: the CMK conversation, the gold names Dublin and drops CMK."""
    c: dict[str, Any] = {
        "id": f"{i:x}" * 64 if i < 16 else "f" * 64,
        "version": 1,
        "label": "over_carried",
        "artifact": "rewrite",
        "source_request_id": f"c{i}_2",
        "record_id": i,
        "verdict_id": i,
        "reviewer": "alice",
        "verdict_at": "2024-03-05T09:30:00Z",
        "prompt_version": "ctx-v1",
        "model": "m1",
        "messages": [
            {"role": "user", "content": "Which EU regions support CMK?"},
            {"role": "assistant", "content": "Frankfurt and Dublin."},
        ],
        "latest": "What's the uptime SLA on the second one?",
        "expected_query": "What is the uptime SLA for the Dublin region?",
        "must_include": ["Dublin"],
        "must_not_include": ["CMK"],
        "logged": {
            "query": "uptime SLA of the Dublin region with CMK",
            "rewritten": True,
            "resolved": [{"surface": "the second one", "antecedent": "Dublin", "turn": 2}],
            "dropped": [],
        },
        "redacted": True,
    }
    c.update(over)
    return c


def message(text: str, *, input_tokens: int = 1200, output_tokens: int = 300) -> dict[str, Any]:
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5-20251001",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def answer(query: str, **kw: Any) -> dict[str, Any]:
    body = {
        "query": query,
        "rewritten": True,
        "resolved": [{"surface": "the second one", "antecedent": "Dublin", "turn": 2}],
        "dropped": ["CMK"],
    }
    return message(json.dumps(body), **kw)


def client(handler: Callable[[httpx2.Request], Any], max_retries: int = 2) -> Any:
    return rp_client.make_client(
        api_key="sk-test",
        max_retries=max_retries,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)),
    )


def run(cases: list[dict[str, Any]], handler: Any, *, timeout: float = 5, concurrency: int = 1) -> list[Any]:
    async def go() -> list[Any]:
        c = client(handler)
        try:
            return await rp_client.replay_cases(
                cases,
                client=c,
                model=MODEL,
                system=rp_client.PROMPT_PATH.read_text(),
                max_tokens=512,
                timeout=timeout,
                concurrency=concurrency,
                rules=RULES,
            )
        finally:
            await c.close()

    return asyncio.run(go())


def test_a_right_rewrite_passes_and_the_request_is_what_the_prompt_says() -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(json.loads(request.content))
        return httpx2.Response(200, json=answer("What is the uptime SLA for the Dublin region?"))

    (r,) = run([case()], handler)
    assert (r.status, r.failures, r.query, r.dropped) == (
        "pass",
        [],
        "What is the uptime SLA for the Dublin region?",
        ["CMK"],
    )
    assert (r.model, r.input_tokens, r.output_tokens) == ("claude-haiku-4-5-20251001", 1200, 300)
    (body,) = seen
    assert (body["model"], body["max_tokens"]) == (MODEL, 512)
    assert body["system"] == rp_client.PROMPT_PATH.read_text()
    assert body["messages"] == [
        {
            "role": "user",
            "content": "Conversation so far (oldest first):\n"
            "[1] user: Which EU regions support CMK?\n"
            "[2] assistant: Frankfurt and Dublin.\n"
            "\n"
            "Latest user message:\n"
            "What's the uptime SLA on the second one?",
        }
    ]


def test_a_wrong_rewrite_fails_on_each_assertion_and_on_our_checks() -> None:
    replies = iter(
        [
            "What is the uptime SLA for Frankfurt with CMK?",
            "What is the uptime SLA for the Dublin region on the enterprise plan?",
        ]
    )

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, json=answer(next(replies)))

    first, second = run([case(1), case(2)], handler)
    # Frankfurt for "the second one" of "Frankfurt and Dublin": the assertion and list_reference agree
    assert (first.status, first.failures) == (
        "fail",
        ["missing 'Dublin'", "contains 'CMK'", "check wrong_antecedent [high] (Frankfurt)"],
    )
    assert (second.status, second.failures) == (
        "fail",
        ["check added_content_word [high] (enterprise, plan)"],
    )


def test_a_negative_case_is_not_failed_for_our_checks_false_alarm() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200, json=answer("What is the uptime SLA for the Dublin region on the enterprise plan?")
        )

    (r,) = run([case(label="false_alarm_synonym", artifact="none", must_not_include=[])], handler)
    assert (r.status, r.failures) == ("pass", [])


def test_malformed_model_output_is_an_error_not_a_pass() -> None:
    bodies = iter(
        [
            message("Sure! The standalone query is: uptime SLA for Dublin"),
            message('```json\n{"query": "uptime SLA for Dublin"}\n```'),
            message("[1, 2]"),
        ]
    )

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, json=next(bodies))

    results = run([case(1), case(2), case(3)], handler)
    assert [(r.status, r.failures) for r in results] == [
        ("error", ["model output is not JSON (Expecting value at char 0)"]),
        ("error", ["model output does not match the rewrite shape: rewritten: Field required"]),
        ("error", ["model output is JSON list, not an object"]),
    ]
    assert [r.input_tokens for r in results] == [1200, 1200, 1200]  # the tokens were still spent


def test_a_429_then_success_is_retried_by_the_sdk() -> None:
    calls: list[int] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        calls.append(1)
        if len(calls) == 1:
            error = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
            return httpx2.Response(429, json=error, headers={"retry-after-ms": "5"})
        return httpx2.Response(200, json=answer("What is the uptime SLA for the Dublin region?"))

    (r,) = run([case()], handler)
    assert (r.status, len(calls)) == ("pass", 2)


def test_overload_529_past_the_retries_is_an_error_naming_the_status() -> None:
    calls: list[int] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        calls.append(1)
        error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
        return httpx2.Response(529, json=error, headers={"retry-after-ms": "1"})

    (r,) = run([case()], handler)
    assert (r.status, r.failures, len(calls)) == (
        "error",
        ["API error 529 after retries: OverloadedError"],
        3,
    )


def test_a_case_slower_than_its_timeout_is_an_error_and_the_others_still_run() -> None:
    async def handler(request: httpx2.Request) -> httpx2.Response:
        if "slow" in json.loads(request.content)["messages"][0]["content"]:
            await asyncio.sleep(5)
        return httpx2.Response(200, json=answer("What is the uptime SLA for the Dublin region?"))

    slow = case(1, latest="slow: what's the uptime SLA on the second one?")
    results = run([slow, case(2)], handler, timeout=0.2, concurrency=2)
    assert [(r.status, r.failures) for r in results] == [("error", ["timed out after 0.2 s"]), ("pass", [])]


def test_concurrency_bounds_the_calls_in_flight() -> None:
    state = {"now": 0, "max": 0}

    async def handler(request: httpx2.Request) -> httpx2.Response:
        state["now"] += 1
        state["max"] = max(state["max"], state["now"])
        await asyncio.sleep(0.02)
        state["now"] -= 1
        return httpx2.Response(200, json=answer("What is the uptime SLA for the Dublin region?"))

    results = run([case(i) for i in range(1, 7)], handler, concurrency=2)
    assert [r.status for r in results] == ["pass"] * 6
    assert [r.source_request_id for r in results] == [f"c{i}_2" for i in range(1, 7)]
    assert state["max"] == 2


def test_cost_comes_from_the_price_table_with_dated_model_ids() -> None:
    prices = rp_prices.load_prices()
    r = rp_judge.CaseResult("a" * 64, 1, "ok", "c1_2", "pass", model="claude-sonnet-4-5-20250929")
    r.input_tokens, r.output_tokens = 1200, 300
    # (1,200 × $3 + 300 × $15) / 1,000,000
    assert rp_prices.total_cost([r, r], prices) == rp_prices.Cost(2400, 600, 0.0162, ())
    other = rp_judge.CaseResult("b" * 64, 1, "ok", "c2_2", "pass", model="mystery-1", input_tokens=10)
    assert rp_prices.total_cost([r, other], prices).dollars is None
    assert rp_prices.total_cost([r, other], prices).unpriced == ("mystery-1",)


def test_load_cases_names_the_line_of_a_case_that_breaks_the_schema(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(case()) + "\n" + json.dumps(case(2, label="made_up")) + "\n")
    with pytest.raises(ReplayError, match=r"cases.jsonl:2: label: 'made_up' is not one of"):
        rp_judge.load_cases(path)


def test_compare_finds_the_cases_that_went_from_pass_to_fail() -> None:
    before = [
        rp_judge.CaseResult("a" * 64, 1, "over_carried", "c1_2", "pass"),
        rp_judge.CaseResult("b" * 64, 1, "over_carried", "c2_2", "fail"),
        rp_judge.CaseResult("c" * 64, 1, "ok", "c3_2", "pass"),
        rp_judge.CaseResult("d" * 64, 1, "ok", "c4_2", "pass"),
    ]
    after = [
        rp_judge.CaseResult("a" * 64, 2, "over_carried", "c1_2", "fail"),
        rp_judge.CaseResult("b" * 64, 1, "over_carried", "c2_2", "pass"),
        rp_judge.CaseResult("c" * 64, 1, "ok", "c3_2", "pass"),
        rp_judge.CaseResult("e" * 64, 1, "ok", "c5_2", "error"),
    ]
    changes, same = rp_report.compare(before, after)
    assert [(c.source_request_id, c.before, c.after, c.regression) for c in changes] == [
        ("c1_2", "pass", "fail", True),
        ("c2_2", "fail", "pass", False),
        ("c5_2", None, "error", False),
        ("c4_2", "pass", None, False),
    ]
    assert same == 1


def test_the_logged_rewrites_are_judged_like_a_replay() -> None:
    (r,) = rp_judge.evaluate_logged([case()], RULES)
    assert (r.status, r.failures, r.query) == (
        "fail",
        ["contains 'CMK'"],
        "uptime SLA of the Dublin region with CMK",
    )


def test_junit_xml_has_one_testcase_per_case_with_failures_and_errors(tmp_path: Path) -> None:
    results = [
        rp_judge.CaseResult("a" * 64, 1, "over_carried", "c1_2", "pass", query="q1", seconds=0.5),
        rp_judge.CaseResult("b" * 64, 2, "over_carried", "c2_2", "fail", ["contains 'CMK'"], query="q2 CMK"),
        rp_judge.CaseResult("c" * 64, 1, "ok", "c3_2", "error", ["timed out after 60 s"]),
    ]
    rp_report.junit_xml(results, tmp_path / "r.xml")
    root = ET.parse(tmp_path / "r.xml").getroot()
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("3", "1", "1")
    cases = root.findall("./testsuite/testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("replay.over_carried", "aaaaaaaaaaaa v1 c1_2"),
        ("replay.over_carried", "bbbbbbbbbbbb v2 c2_2"),
        ("replay.ok", "cccccccccccc v1 c3_2"),
    ]
    assert cases[0].find("failure") is None
    failure = cases[1].find("failure")
    assert failure is not None and failure.get("message") == "contains 'CMK'"
    assert failure.text == "contains 'CMK'\nquery: q2 CMK"
    error = cases[2].find("error")
    assert error is not None and error.text == "timed out after 60 s\nno query"


# -- the command ---------------------------------------------------------------------------------
def test_without_an_api_key_the_command_says_so_before_doing_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("REWRITE_MONITOR_ANTHROPIC_API_KEY", raising=False)
    junit = tmp_path / "r.xml"
    # the cases file does not even exist: the key is checked first
    result = runner.invoke(app, ["replay", str(tmp_path / "missing.jsonl"), "--junit", str(junit)])
    assert result.exit_code == 5
    assert "ANTHROPIC_API_KEY is not set" in result.output
    assert not junit.exists()


def test_the_command_replays_compares_and_fails_ci_on_a_regression(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases_path = tmp_path / "eval.jsonl"
    cases_path.write_text("".join(json.dumps(c) + "\n" for c in [case(1), case(2, logged=None)]))
    answers = {"c1_2": "What is the uptime SLA for the Dublin region?", "c2_2": "uptime SLA with CMK"}

    def handler(request: httpx2.Request) -> httpx2.Response:
        content = json.loads(request.content)["messages"][0]["content"]
        return httpx2.Response(200, json=answer(answers["c1_2" if "(c1)" in content else "c2_2"]))

    real = rp_client.make_client

    def fake_client(*, api_key: str, max_retries: int, http_client: Any = None) -> Any:
        # the command passes the key and the replay_max_retries setting; the transport is the mock
        assert (api_key, max_retries) == ("sk-test", 4)
        transport = httpx2.MockTransport(handler)
        return real(
            api_key=api_key, max_retries=max_retries, http_client=httpx2.AsyncClient(transport=transport)
        )

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setattr(rp_client, "make_client", fake_client)
    # mark each case's first message so the handler can tell them apart
    lines = [json.loads(line) for line in cases_path.read_text().splitlines()]
    for c, tag in zip(lines, ["(c1)", "(c2)"], strict=True):
        c["messages"][0]["content"] += f" {tag}"
    cases_path.write_text("".join(json.dumps(c) + "\n" for c in lines))

    junit, results = tmp_path / "r.xml", tmp_path / "results.jsonl"
    args = ["replay", str(cases_path), "--model", MODEL, "--junit", str(junit), "--out", str(results)]
    args += ["--concurrency", "2"]
    first = runner.invoke(app, args)
    assert first.exit_code == 1, first.output  # c2_2 fails
    assert "FAIL 222222222222 c2_2 [over_carried]: missing 'Dublin'; contains 'CMK'" in first.output
    # two calls of 1,200 input and 300 output tokens on Haiku 4.5: 2 × (1,200 × $1 + 300 × $5) / 1,000,000
    assert "cost: 2,400 input + 600 output tokens = $0.0054" in first.output
    assert ET.parse(junit).getroot().get("failures") == "1"

    # against the logged rewrites: c1_2 was failing in the logs (CMK) and passes now; c2_2 has no logged
    # rewrite (an error before), so no case went from pass to fail and CI passes
    vs_logs = runner.invoke(app, ["replay", str(cases_path), "--model", MODEL, "--compare", str(cases_path)])
    assert vs_logs.exit_code == 0, vs_logs.output
    assert "pass -> fail: 0; fail -> pass: 1; unchanged: 0; other: 1" in vs_logs.output

    # a new prompt breaks c1_2: compared with the first run's results, that is a regression
    answers["c1_2"] = "uptime SLA for Frankfurt"
    prompt = tmp_path / "prompt.md"
    prompt.write_text("Rewrite the last message.")
    regressed = runner.invoke(
        app, ["replay", str(cases_path), "--model", MODEL, "--prompt", str(prompt), "--compare", str(results)]
    )
    assert regressed.exit_code == 1, regressed.output
    assert "pass -> fail: 1; fail -> pass: 0; unchanged: 1; other: 0" in regressed.output
