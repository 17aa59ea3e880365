"""rewrite-monitor: audit the query rewriter of a conversational retrieval (RAG) system.

The package reads logged rewrites (``ctx_input`` + ``rewrite`` events), stores them losslessly,
runs deterministic checks on each rewrite and feeds a human review queue.
"""

__version__ = "0.1.0"
