"""A rewrite step that logs both events and traces its span (the README's client example)."""

import logging
import sys

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

from monitor.instrument import log_ctx_input, log_rewrite, otel_attributes

provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=sys.stderr)))
tracer = provider.get_tracer("rag-app")
log = logging.getLogger("rag.rewrites")
log.addHandler(logging.StreamHandler(sys.stdout))  # a FileHandler in production: the line is the event
log.setLevel(logging.INFO)

history = [("user", "How do I schedule nightly backups of a Postgres database?"),
           ("assistant", "Create a backup policy with a daily window.")]
latest, conv, req = "Can they be encrypted with my own key?", "conv-7", "req-7-2"
log_ctx_input(log, conv_id=conv, request_id=req, turn=2, messages=history, client_turn_count=2)
with tracer.start_as_current_span("rewrite") as span:
    query = "Can nightly backups of a Postgres database be encrypted with my own key?"  # your rewriter
    span.set_attributes(otel_attributes(conv_id=conv, request_id=req, turn=2, messages=history,
                                        latest=latest, query=query, client_turn_count=2))
log_rewrite(log, conv_id=conv, request_id=req, turn=2, latest=latest, query=query, model="my-rewriter")
