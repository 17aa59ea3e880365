"""``show --json`` and ``queue --json`` (issue 33, part 6): each prints one document that validates
against its committed schema and says what the terminal page says, for a script to read."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from monitor.cli.main import app
from tests.factories import ctx_input, log, rewrite
from tests.helpers import REPO

runner = CliRunner()
HISTORY = [
    {"role": "user", "content": "Which regions have the Pro plan?"},
    {"role": "assistant", "content": "Frankfurt and Dublin."},
]


@pytest.fixture
def stored(cli_db: str) -> str:
    events = [
        ctx_input(request_id="r2", turn=2, messages=HISTORY),
        rewrite(
            request_id="r2",
            turn=2,
            latest="What is the SLA there?",
            query="What is the SLA for Dublin on the Enterprise plan?",  # 'Enterprise' invented
        ),
        {
            "event": "retrieve",
            "ts": "2024-03-04T08:00:02Z",
            "conv_id": "c1",
            "request_id": "r2",
            "hits": [{"rank": 2, "doc_id": "kb-7", "score": 0.5}, {"rank": 1, "doc_id": "kb-3"}],
        },
    ]
    assert runner.invoke(app, ["--database-url", cli_db, "run", "-"], input=log(*events)).exit_code == 0
    return cli_db


def _schema(name: str) -> dict[str, object]:
    return json.loads((REPO / "schemas" / f"{name}.schema.json").read_text(encoding="utf-8"))


def test_show_json_is_the_record_view(stored: str) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    done = runner.invoke(app, ["--database-url", stored, "show", "r2", "--json"])
    assert done.exit_code == 0, done.output
    doc = json.loads(done.stdout)
    jsonschema.validate(doc, _schema("record_view"))
    assert doc["schema"] == "rewrite-monitor/record-view/1"
    assert (doc["request_id"], doc["conv_id"]) == ("r2", "c1")
    assert doc["state"]["n_messages"] == 2 and doc["state"]["roles"] == {"user": 1, "assistant": 1}
    assert [(m["index"], m["role"], m["content"]) for m in doc["state"]["messages"]] == [
        (0, "user", "Which regions have the Pro plan?"),
        (1, "assistant", "Frankfurt and Dublin."),
    ]
    assert doc["rewrite"]["latest"] == "What is the SLA there?"
    assert doc["rewrite"]["query"] == "What is the SLA for Dublin on the Enterprise plan?"
    assert [(h["rank"], h["doc_id"]) for h in doc["retrieval"]] == [(1, "kb-3"), (2, "kb-7")]
    assert doc["answer"] is None
    # the findings are those `findings --json` lists for the request
    listed = runner.invoke(app, ["--database-url", stored, "findings", "--json"])
    want = sorted(
        (f["kind"], f["severity"], tuple(f["words"])) for f in map(json.loads, listed.stdout.splitlines())
    )
    got = sorted((f["kind"], f["severity"], tuple(f["words"])) for f in doc["findings"])
    assert got == want and any("Enterprise" in w for _k, _s, w in got)


def test_show_json_of_an_unknown_request_exits_1_with_nothing_on_stdout(stored: str) -> None:
    done = runner.invoke(app, ["--database-url", stored, "show", "nope", "--json"])
    assert done.exit_code == 1 and done.stdout == ""


def test_queue_json_is_the_queue_listing(stored: str) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    table = runner.invoke(app, ["--database-url", stored, "queue", "--state", "all"])
    done = runner.invoke(app, ["--database-url", stored, "queue", "--state", "all", "--json"])
    assert done.exit_code == 0, done.output
    doc = json.loads(done.stdout)
    jsonschema.validate(doc, _schema("queue"))
    assert (doc["schema"], doc["state"], doc["kind"]) == ("rewrite-monitor/queue/1", "all", None)
    shown, matching = map(int, re.search(r"showing (\d+) of (\d+)", table.stderr).groups())  # type: ignore[union-attr]
    assert (len(doc["items"]), doc["matching"]) == (shown, matching) == (1, 1)
    (item,) = doc["items"]
    assert (item["request_id"], item["conv_id"], item["state"]) == ("r2", "c1", "pending")
    assert "added_content_word" in item["kinds"] and 0 < item["inclusion_prob"] <= 1
    assert doc["depth"] == 1
