"""CLI commands by area, each module registering its commands on ``monitor.cli.app.app``.

``monitor.cli.app`` imports these at the end, so ``rewrite-monitor --help`` lists them all; an area keeps
its commands (and their imports) in its own module.
"""
