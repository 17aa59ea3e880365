"""Observability of rewrite-monitor itself: structured logs without transcript text, and Sentry."""
