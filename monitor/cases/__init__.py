"""Regression cases: verdicts turned into eval-set cases, redacted and exported."""
