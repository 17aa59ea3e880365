"""Traces written by the real instrumentors, as test data (issue 33, part 1).

Runs each recipe the instrumentors' own documentation shows, against a local fake OpenAI-compatible model
server, with the instrumentor exporting to an in-memory span exporter, and writes what it exported as the
OpenTelemetry Collector's ``file`` exporter writes it (one OTLP JSON ``TracesData`` per line, hex ids):

- ``openinference_langchain_history_aware``: LangChain ``create_history_aware_retriever`` inside
  ``create_retrieval_chain`` (the "conversational RAG" recipe), OpenInference ``LangChainInstrumentor``;
- ``openinference_langchain_history_aware_quickstart``: the same with the LangChain v0.1 quickstart's prompt,
  whose instruction ("Given the above conversation, generate a search query ...") is the last user message;
- ``openinference_langchain_history_aware_and_genai``: the first, with the GenAI ``openai-v2``
  instrumentation of the openai client under it too (each model call has a GenAI span inside
  LangChain's);
- ``openinference_langchain_lcel``: an LCEL chain with a custom contextualize prompt
  (``prompt | llm | StrOutputParser()`` feeding the retriever), OpenInference;
- ``openinference_llamaindex_condense_question``: LlamaIndex ``CondenseQuestionChatEngine``, OpenInference
  ``LlamaIndexInstrumentor``;
- ``openinference_llamaindex_condense_question_and_genai``: the same traced by OpenInference and GenAI
  ``openai-v2`` at once (the GenAI span inside LlamaIndex's);
- ``openinference_llamaindex_condense_plus_context``: LlamaIndex ``CondensePlusContextChatEngine``;
- ``genai_llamaindex_condense_question``: the same LlamaIndex engine traced only by OpenTelemetry GenAI
  ``opentelemetry-instrumentation-openai-v2`` (each model call its own trace, no session);
- ``genai_openai_condense``: a plain ``openai`` client sending LangChain's rephrase prompt, rendered by the
  app (``Human:`` / ``Assistant:`` lines), GenAI only.

``--phoenix`` then writes ``phoenix_openinference_llamaindex_condense_question.spans.json``: that trace as
Arize Phoenix exports spans (a JSON array of its span JSON, by Phoenix's own encoder; ``arize-phoenix``
in a virtualenv of its own).

Beside them, ``expected.json`` records what each app sent for each rewrite: conversation, turn, the
history (role, text), the latest message, the standalone query the model returned, and the model. The
tests compare what ingest maps from the traces with it.

Run with the ``[traces]`` extra installed (pinned instrumentor versions, ``pyproject.toml``)::

    python -m pip install -e '.[traces]'
    python scripts/generate_traces.py            # writes tests/data/traces/
    python scripts/generate_traces.py --out DIR --recipe genai_openai_condense

Each recipe runs in its own process (instrumentors patch their frameworks for the whole process). The
conversations are written for this script; the fake model answers from them, so a regenerated file
differs only in its ids and times. Exit codes: 0 written, 1 a recipe failed, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "tests" / "data" / "traces"
MODEL = "gpt-4o-mini"

# Two conversations written for this script. Each follow-up carries the standalone query a correct
# rewriter returns (nothing added, nothing dropped) and the answer the assistant gives.
CONVERSATIONS: list[dict[str, Any]] = [
    {
        "conv_id": "conv-backups",
        "turns": [
            {
                "latest": "How do I schedule nightly backups of a Postgres database?",
                "answer": "Create a backup policy with a daily window and attach it to the Postgres "
                "instance.",
            },
            {
                "latest": "Can they be encrypted with my own key?",
                "query": "Can nightly backups of a Postgres database be encrypted with my own key?",
                "answer": "Yes: choose a customer-managed key in the backup policy's encryption settings.",
            },
            {
                "latest": "How long are they kept?",
                "query": "How long are nightly backups of a Postgres database kept?",
                "answer": "Daily backups are kept for 14 days unless the policy sets a longer retention.",
            },
        ],
    },
    {
        "conv_id": "conv-trail",
        "turns": [
            {
                "latest": "What permit do I need to camp on the Kalalau Trail?",
                "answer": "An overnight camping permit from the state parks office, booked online in "
                "advance.",
            },
            {
                "latest": "Are dogs allowed there?",
                "query": "Are dogs allowed on the Kalalau Trail?",
                "answer": "No, pets are not allowed on the trail or at the campsites.",
            },
        ],
    },
]

DOCUMENTS = [
    ("kb-101", "Backup policies run in a daily window; attach a policy to a Postgres instance."),
    ("kb-102", "Backups can be encrypted with a customer-managed key chosen in the policy."),
    ("kb-103", "Daily backups are retained for 14 days by default; policies may extend retention."),
    ("kb-201", "Kalalau Trail camping requires an overnight permit from the state parks office."),
    ("kb-202", "Pets are not permitted on the Kalalau Trail or at its campsites."),
]


# -- the fake model ----------------------------------------------------------------------------------


def _reply_for(text: str) -> str:
    """What the fake model says to a request whose messages joined are ``text``: the standalone query of
    the scripted turn whose message or query the request names last, when it asks for a rewrite (it
    quotes no document), else that turn's answer."""
    found = None
    at = -1
    for conv in CONVERSATIONS:
        for turn in conv["turns"]:
            for said in (turn["latest"], turn.get("query")):
                i = text.rfind(said) if said else -1
                if i > at:
                    at, found = i, turn
    if found is None:
        return "I don't know."
    quotes_a_document = any(body in text for _, body in DOCUMENTS)
    if "query" in found and not quotes_a_document:
        return str(found["query"])
    return str(found["answer"])


class FakeModel(BaseHTTPRequestHandler):
    """``POST /v1/chat/completions`` (OpenAI's chat completions shape, no streaming)."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        text = "\n".join(
            m["content"] if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
            for m in body.get("messages", [])
        )
        reply = _reply_for(text)
        out = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 1_733_400_000,
            "model": body.get("model", MODEL),
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}
            ],
            "usage": {
                "prompt_tokens": len(text.split()),
                "completion_tokens": len(reply.split()),
                "total_tokens": len(text.split()) + len(reply.split()),
            },
        }
        data = json.dumps(out).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def fake_model() -> Iterator[str]:
    """A fake OpenAI server on a free localhost port; yields its base URL (``.../v1``)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeModel)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()


# -- tracing -----------------------------------------------------------------------------------------


def tracer_provider(seed: int) -> tuple[Any, Any]:
    """An SDK tracer provider with seeded ids and an in-memory exporter: ``(provider, exporter)``."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.sdk.trace.id_generator import IdGenerator

    class Seeded(IdGenerator):
        def __init__(self) -> None:
            self.rng = random.Random(seed)

        def generate_span_id(self) -> int:
            return self.rng.getrandbits(64) or 1

        def generate_trace_id(self) -> int:
            return self.rng.getrandbits(128) or 1

    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "rag-app"}), id_generator=Seeded())
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


def _hex_ids(node: Any) -> Any:
    """The protobuf JSON mapping writes bytes as base64; OTLP JSON writes trace and span ids as hex."""
    if isinstance(node, dict):
        return {
            k: (
                base64.b64decode(v).hex() if k in ("traceId", "spanId", "parentSpanId") and v else _hex_ids(v)
            )
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_hex_ids(v) for v in node]
    return node


def otlp_lines(spans: list[Any]) -> list[str]:
    """The spans as Collector ``file`` exporter lines: one ``TracesData`` per trace, in export order."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    by_trace: dict[int, list[Any]] = {}
    for s in spans:
        by_trace.setdefault(s.context.trace_id, []).append(s)
    lines = []
    for group in by_trace.values():
        msg = MessageToDict(encode_spans(group), preserving_proto_field_name=False)
        lines.append(json.dumps(_hex_ids(msg), ensure_ascii=False, sort_keys=True))
    return lines


# -- the recipes -------------------------------------------------------------------------------------


def _expected(conv: dict[str, Any], i: int, history: list[tuple[str, str]]) -> dict[str, Any]:
    turn = conv["turns"][i]
    return {
        "conv_id": conv["conv_id"],
        "turn": i + 1,
        "latest": turn["latest"],
        "query": turn["query"],
        "history": [list(m) for m in history],
        "model": MODEL,
    }


def best_documents(query: str) -> list[tuple[str, str, float]]:
    """The two documents sharing the most words with ``query``: (id, text, shared words)."""
    words = set(query.lower().split())
    scored = [(i, body, float(len(words & set(body.lower().split())))) for i, body in DOCUMENTS]
    return sorted(scored, key=lambda d: -d[2])[:2]


def _langchain_retriever() -> Any:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    class KeywordRetriever(BaseRetriever):
        """The documents sharing the most words with the query (two at most)."""

        def _get_relevant_documents(
            self, query: str, *, run_manager: CallbackManagerForRetrieverRun
        ) -> list[Document]:
            return [
                Document(page_content=body, id=i, metadata={"id": i}) for i, body, _ in best_documents(query)
            ]

    return KeywordRetriever()


def recipe_langchain(base_url: str, provider: Any, prompt: str, genai: bool = False) -> list[dict[str, Any]]:
    """LangChain's conversational retrieval: ``prompt`` "contextualize" (the "Add chat history" tutorial's
    prompt, through ``create_history_aware_retriever``), "quickstart" (the v0.1 quickstart's prompt, whose
    instruction is a user message after the user's own) or "lcel" (the contextualize prompt in an LCEL
    chain of the user's own); ``genai`` instruments the openai client with OpenTelemetry GenAI too."""
    from langchain_classic.chains import create_history_aware_retriever, create_retrieval_chain
    from langchain_classic.chains.combine_documents import create_stuff_documents_chain
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
    from langchain_core.runnables import RunnablePassthrough
    from langchain_openai import ChatOpenAI
    from openinference.instrumentation import using_session
    from openinference.instrumentation.langchain import LangChainInstrumentor

    LangChainInstrumentor().instrument(tracer_provider=provider)
    if genai:  # the GenAI instrumentation of the openai client under LangChain's: both write spans
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=provider)
    llm = ChatOpenAI(model=MODEL, base_url=base_url, api_key="not-used", temperature=0)
    retriever = _langchain_retriever()
    contextualize = ChatPromptTemplate.from_messages(
        [
            (
                "system",
                "Given a chat history and the latest user question which might reference context in the "
                "chat history, formulate a standalone question which can be understood without the chat "
                "history. Do NOT answer the question, just reformulate it if needed and otherwise return "
                "it as is.",
            ),
            MessagesPlaceholder("chat_history"),
            ("human", "{input}"),
        ]
    )
    if prompt == "quickstart":
        contextualize = ChatPromptTemplate.from_messages(
            [
                MessagesPlaceholder("chat_history"),
                ("user", "{input}"),
                (
                    "user",
                    "Given the above conversation, generate a search query to look up in order to get "
                    "information relevant to the conversation",
                ),
            ]
        )
    qa = ChatPromptTemplate.from_messages(
        [
            ("system", "Answer the question from this context only.\n\n{context}"),
            MessagesPlaceholder("chat_history"),
            ("human", "{input}"),
        ]
    )
    if prompt == "lcel":
        rephrase = contextualize | llm | StrOutputParser()

        def standalone(x: dict[str, Any]) -> Any:
            return rephrase if x.get("chat_history") else x["input"]

        chain: Any = RunnablePassthrough.assign(context=standalone | retriever).assign(
            answer=create_stuff_documents_chain(llm, qa)
        )
    else:
        history_aware = create_history_aware_retriever(llm, retriever, contextualize)
        chain = create_retrieval_chain(history_aware, create_stuff_documents_chain(llm, qa))
    expected = []
    for conv in CONVERSATIONS:
        history: list[tuple[str, str]] = []
        for i, turn in enumerate(conv["turns"]):
            messages = [HumanMessage(t) if r == "user" else AIMessage(t) for r, t in history]
            with using_session(conv["conv_id"]):
                out = chain.invoke({"input": turn["latest"], "chat_history": messages})
            if i:
                expected.append(_expected(conv, i, history))
            history += [("user", turn["latest"]), ("assistant", out["answer"])]
    return expected


def _llamaindex_setup(base_url: str) -> tuple[Any, Any]:
    from llama_index.core import Settings
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
    from llama_index.llms.openai import OpenAI

    # LlamaIndex counts tokens with tiktoken, which downloads its tables; whitespace is enough here.
    Settings.tokenizer = lambda s: s.split()

    class KeywordRetriever(BaseRetriever):
        def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
            return [
                NodeWithScore(node=TextNode(id_=i, text=body), score=score)
                for i, body, score in best_documents(query_bundle.query_str)
            ]

    llm = OpenAI(model=MODEL, api_base=base_url, api_key="not-used", temperature=0)
    return llm, KeywordRetriever()


def recipe_llamaindex(base_url: str, provider: Any, engine: str, genai: bool | str) -> list[dict[str, Any]]:
    """LlamaIndex's chat engine ``engine`` ("condense_question", "condense_plus_context") traced by
    OpenInference (``genai`` False), by GenAI ``openai-v2`` alone (True), or by both ("and")."""
    from llama_index.core.chat_engine import CondensePlusContextChatEngine, CondenseQuestionChatEngine
    from llama_index.core.query_engine import RetrieverQueryEngine

    if genai:
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=provider)
        session: Any = None
    if genai == "and":
        from openinference.instrumentation import using_session
        from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

        LlamaIndexInstrumentor().instrument(tracer_provider=provider)
        session = using_session
    elif not genai:
        from openinference.instrumentation import using_session
        from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

        LlamaIndexInstrumentor().instrument(tracer_provider=provider)
        session = using_session
    llm, retriever = _llamaindex_setup(base_url)
    expected = []
    for conv in CONVERSATIONS:
        if engine == "condense_question":
            chat: Any = CondenseQuestionChatEngine.from_defaults(
                query_engine=RetrieverQueryEngine.from_args(retriever, llm=llm), llm=llm
            )
        else:
            chat = CondensePlusContextChatEngine.from_defaults(retriever, llm=llm)
        history: list[tuple[str, str]] = []
        for i, turn in enumerate(conv["turns"]):
            if session is not None:
                with session(conv["conv_id"]):
                    out = chat.chat(turn["latest"])
            else:
                out = chat.chat(turn["latest"])
            if i:
                expected.append(_expected(conv, i, history))
            history += [("user", turn["latest"]), ("assistant", str(out.response))]
    return expected


REPHRASE_TEMPLATE = (
    "Given the following conversation and a follow up question, rephrase the follow up question to be a "
    "standalone question, in its original language.\n\nChat History:\n{chat_history}\n"
    "Follow Up Input: {question}\nStandalone question:"
)
"""LangChain's ``CONDENSE_QUESTION_PROMPT`` (``langchain.chains.conversational_retrieval.prompts``), which
the app renders itself and sends as one user message."""


def recipe_openai(base_url: str, provider: Any) -> list[dict[str, Any]]:
    from openai import OpenAI
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    OpenAIInstrumentor().instrument(tracer_provider=provider)
    client = OpenAI(base_url=base_url, api_key="not-used")
    expected = []
    for conv in CONVERSATIONS:
        history: list[tuple[str, str]] = []
        for i, turn in enumerate(conv["turns"]):
            if i:
                rendered = REPHRASE_TEMPLATE.format(
                    chat_history="\n".join(
                        f"{'Human' if r == 'user' else 'Assistant'}: {t}" for r, t in history
                    ),
                    question=turn["latest"],
                )
                client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": rendered}])
                expected.append(_expected(conv, i, history))
            history += [("user", turn["latest"]), ("assistant", turn["answer"])]
    return expected


RECIPES = {
    "openinference_langchain_history_aware": lambda url, p: recipe_langchain(url, p, "contextualize"),
    "openinference_langchain_history_aware_quickstart": lambda url, p: recipe_langchain(url, p, "quickstart"),
    "openinference_langchain_history_aware_and_genai": lambda url, p: recipe_langchain(
        url, p, "contextualize", genai=True
    ),
    "openinference_langchain_lcel": lambda url, p: recipe_langchain(url, p, "lcel"),
    "openinference_llamaindex_condense_question": lambda url, p: recipe_llamaindex(
        url, p, "condense_question", genai=False
    ),
    "openinference_llamaindex_condense_plus_context": lambda url, p: recipe_llamaindex(
        url, p, "condense_plus_context", genai=False
    ),
    "openinference_llamaindex_condense_question_and_genai": lambda url, p: recipe_llamaindex(
        url, p, "condense_question", genai="and"
    ),
    "genai_llamaindex_condense_question": lambda url, p: recipe_llamaindex(
        url, p, "condense_question", genai=True
    ),
    "genai_openai_condense": recipe_openai,
}


def run_one(name: str, out: Path) -> list[dict[str, Any]]:
    """Run recipe ``name`` in this process, write ``out/<name>.otlp.jsonl``; return its expectations."""
    os.environ.setdefault("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
    os.environ.setdefault("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "span_only")
    provider, exporter = tracer_provider(seed=sorted(RECIPES).index(name) + 1)
    with fake_model() as url:
        expected = RECIPES[name](url, provider)
    provider.force_flush()
    lines = otlp_lines(list(exporter.get_finished_spans()))
    (out / f"{name}.otlp.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return expected


def phoenix_export(otlp_path: Path, out_path: Path) -> int:
    """Write the spans of an OTLP JSON file as Arize Phoenix exports them: a JSON array (a
    ``.spans.json``) of Phoenix's span JSON, made by Phoenix's own decoder and encoder
    (``phoenix.trace.otel.decode_otlp_span``, ``phoenix.trace.span_json_encoder.span_to_json``). Needs
    ``arize-phoenix`` (:data:`PHOENIX`), in a virtualenv of its own: its openai pin differs from the
    instrumentors'. Returns the number of spans."""
    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.trace.v1.trace_pb2 import TracesData
    from phoenix.trace.otel import decode_otlp_span
    from phoenix.trace.span_json_encoder import span_to_json

    def b64_ids(node: Any) -> Any:  # OTLP JSON's hex ids back to the protobuf JSON mapping's base64
        if isinstance(node, dict):
            return {
                k: base64.b64encode(bytes.fromhex(v)).decode()
                if k in ("traceId", "spanId", "parentSpanId") and v
                else b64_ids(v)
                for k, v in node.items()
            }
        if isinstance(node, list):
            return [b64_ids(v) for v in node]
        return node

    spans = []
    for line in otlp_path.read_text(encoding="utf-8").splitlines():
        data = ParseDict(b64_ids(json.loads(line)), TracesData())
        for rs in data.resource_spans:
            for ss in rs.scope_spans:
                spans.extend(json.loads(span_to_json(decode_otlp_span(sp))) for sp in ss.spans)
    out_path.write_text(json.dumps(spans, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return len(spans)


PHOENIX = "arize-phoenix==20.26.1"
"""The Phoenix release whose span JSON ``phoenix_export`` writes."""
PHOENIX_RECIPE = "openinference_llamaindex_condense_question"
"""The recipe whose trace file is exported as Phoenix span JSON (``phoenix_<recipe>.spans.json``)."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"output folder (default {OUT})")
    parser.add_argument("--recipe", choices=sorted(RECIPES), help="run this recipe only, in this process")
    parser.add_argument(
        "--phoenix",
        action="store_true",
        help=f"only write phoenix_{PHOENIX_RECIPE}.spans.json from its trace file (needs {PHOENIX})",
    )
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.phoenix:
        n = phoenix_export(
            args.out / f"{PHOENIX_RECIPE}.otlp.jsonl", args.out / f"phoenix_{PHOENIX_RECIPE}.spans.json"
        )
        print(f"phoenix_{PHOENIX_RECIPE}.spans.json: {n} spans", file=sys.stderr)
        return 0
    if args.recipe:
        expected = run_one(args.recipe, args.out)
        print(json.dumps(expected))
        return 0
    manifest: dict[str, Any] = {}
    for name in sorted(RECIPES):
        done = subprocess.run(
            [sys.executable, __file__, "--out", str(args.out), "--recipe", name],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            print(f"{name}: failed\n{done.stderr[-3000:]}", file=sys.stderr)
            return 1
        manifest[name] = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"{name}: {len(manifest[name])} rewrites", file=sys.stderr)
    versions = {}
    from importlib.metadata import PackageNotFoundError, version

    for dist in TRACE_DISTRIBUTIONS:
        try:
            versions[dist] = version(dist)
        except PackageNotFoundError:
            versions[dist] = None
    (args.out / "expected.json").write_text(
        json.dumps({"versions": versions, "recipes": manifest}, indent=1, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    return 0


TRACE_DISTRIBUTIONS = (
    "langchain-classic",
    "langchain-core",
    "langchain-openai",
    "llama-index-core",
    "llama-index-llms-openai",
    "openai",
    "openinference-instrumentation-langchain",
    "openinference-instrumentation-llama-index",
    "opentelemetry-instrumentation-openai-v2",
    "opentelemetry-sdk",
)

if __name__ == "__main__":
    sys.exit(main())
