"""CLI commands of the dashboard area: ``dashboard`` (the review web app) and ``rules proposals``.

``dashboard`` runs ``streamlit run`` on the bundled ``dashboard/app.py`` (:func:`app_path`), from any
folder. The database URL reaches the app through the environment, never argv, because it may hold a
password and argv is visible to every local user (``ps``). Without a login configured the server binds
to the loopback address only.
"""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path
from typing import Annotated

import typer

from monitor.bundled import bundled_file
from monitor.cli.app import State, out, require_extra
from monitor.errors import ConfigError
from monitor.settings import auth_missing, is_loopback


def app_path() -> Path:
    """The Streamlit app: ``app.py`` of the bundled dashboard (the repository's ``dashboard/``, the
    package ``monitor.dashboard`` in the wheel). Raises ``ConfigError`` when it is not installed."""
    path = bundled_file("dashboard", "app.py")
    if not path.is_file():
        raise ConfigError(
            f"dashboard app not found at {path}: the installation is incomplete; reinstall rewrite-monitor"
        )
    return path


def secrets_files(cwd: Path) -> list[Path]:
    """Where Streamlit reads ``secrets.toml`` from by default: the user's and the working folder's."""
    return [Path.home() / ".streamlit" / "secrets.toml", cwd / ".streamlit" / "secrets.toml"]


def auth_configured(files: list[Path]) -> bool:
    """True when any of ``files`` has a complete ``[auth]`` table (Streamlit's OIDC login, ``st.login``).

    Raises ``ConfigError`` naming the file when one exists but is not valid TOML.
    """
    for f in files:
        if not f.is_file():
            continue
        try:
            data = tomllib.loads(f.read_text())
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{f}: invalid TOML: {exc}") from exc
        auth = data.get("auth")
        if isinstance(auth, dict) and _complete(auth):
            return True
    return False


def _complete(auth: dict[str, object]) -> bool:
    """Whether an ``[auth]`` table can log users in (``monitor.settings.auth_missing`` finds nothing)."""
    return not auth_missing(auth)


def streamlit_command(
    *, address: str, port: int, database_url: str, config: Path | None, auth: bool, environ: dict[str, str]
) -> tuple[list[str], dict[str, str]]:
    """The argv and environment that start the dashboard.

    The URL goes into ``REWRITE_MONITOR_DATABASE_URL`` of the returned environment, and the config file
    (if any) into ``REWRITE_MONITOR_CONFIG``, so the app builds the same settings. Raises
    ``ConfigError`` when ``address`` is not a loopback address and no login is configured (a
    dashboard without auth must not be reachable from other machines), or when the app is not
    installed (:func:`app_path`).
    """
    if not auth and not is_loopback(address):
        raise ConfigError(
            f"dashboard_address {address!r} exposes the dashboard without a login: configure [auth] in "
            ".streamlit/secrets.toml (Streamlit OIDC) or use 127.0.0.1"
        )
    argv = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(app_path()),
        "--server.address",
        address,
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        # Reviewers need no "Deploy" or developer menu entries.
        "--client.toolbarMode",
        "viewer",
        # No reloading of edited files in a served app; it also spares an inotify watch per file.
        "--server.fileWatcherType",
        "none",
        # Streamlit collects every generation after each script run, holding the GIL while the
        # page's messages wait to be sent: 0.1-0.2 s of the reviewer's wait after each radio click
        # (issue 16). Python's own collector still runs by its thresholds.
        "--runner.postScriptGC",
        "false",
    ]
    env = dict(environ)
    env["REWRITE_MONITOR_DATABASE_URL"] = database_url
    if config is not None:
        env["REWRITE_MONITOR_CONFIG"] = str(config.resolve())
    return argv, env


def dashboard(
    ctx: typer.Context,
    port: Annotated[int | None, typer.Option("--port", help="Port; default: dashboard_port.")] = None,
) -> None:
    """Serve the review dashboard (Queue, Item, Overview, Eval set) until interrupted.

    Binds to dashboard_address (127.0.0.1); a non-local address needs a login configured in
    .streamlit/secrets.toml ([auth], Streamlit OIDC). Without one, verdicts are signed with
    reviewer_name and the page shows a "running without auth" banner.

    Example: REWRITE_MONITOR_REVIEWER_NAME=alice rewrite-monitor dashboard --port 8502
    """
    from monitor.text import mask_url

    require_extra("streamlit", "dashboard", "the dashboard")
    state: State = ctx.obj
    settings = state.settings
    port = port or settings.dashboard_port
    argv, env = streamlit_command(
        address=settings.dashboard_address,
        port=port,
        database_url=state.url,
        config=state.config,
        auth=auth_configured(secrets_files(Path.cwd())),
        environ=dict(os.environ),
    )
    out.print(
        f"dashboard on http://{settings.dashboard_address}:{port} (database {mask_url(state.url)}); "
        "Ctrl+C stops it"
    )
    # exec, not a child process: SIGTERM from a service manager (or `kill`) then reaches Streamlit
    # itself instead of orphaning it on the port, and its exit code is the command's.
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(argv[0], argv, env)


def register(app: typer.Typer) -> None:
    """Register this module's commands on the root ``app`` (``monitor.cli.main`` calls it)."""
    app.command("dashboard")(dashboard)
