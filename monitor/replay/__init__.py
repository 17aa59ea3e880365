"""Replay: run the eval set through the rewriter (anthropic SDK), judge the new rewrites, report and price."""
