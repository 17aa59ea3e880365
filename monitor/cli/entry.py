"""The console script: the command line when the server is installed, else a clear word on what to install.

The base install of rewrite-monitor is the client (``monitor.instrument``, standard library only); the
command line needs the ``[server]`` extra. Standard library only here, so the message reaches a user who
has just the client.
"""

from __future__ import annotations

import sys

INSTALL_HINT = (
    "pip install 'rewrite-monitor[server]' (add dashboard, replay or postgres in the brackets as needed, "
    "or 'rewrite-monitor[all]')"
)


def main() -> None:
    """Run ``monitor.cli.main.main``; exit 2 naming the missing module and the install line when a
    dependency of the server is not installed (a module of this package that fails to import is a bug,
    and raises as it is). ``--version`` alone is answered here when the server is missing too."""
    try:
        from monitor.cli.main import main as run
    except ModuleNotFoundError as exc:
        top = (exc.name or "").split(".")[0]
        if not top or top == "monitor":
            raise
        if sys.argv[1:] == ["--version"]:  # the client install can still say what it is
            from monitor import __version__

            sys.stdout.write(f"rewrite-monitor {__version__} (client install)\n")
            return
        sys.stderr.write(
            f"rewrite-monitor: the command line is not installed here (no module {top!r}): this is the "
            f"client install, monitor.instrument only. Install the tool with: {INSTALL_HINT}\n"
        )
        raise SystemExit(2) from None
    run()
