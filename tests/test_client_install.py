"""The base install is the client (issue 33, part 5): ``monitor.instrument`` imports the standard library
only, the console script names the extra to install when the server's dependencies are missing, and a
command whose extra is missing says which. (The wheel smoke test installs the client alone, with no
dependency, and runs the README's traced app: scripts/wheel_smoke.sh.)"""

from __future__ import annotations

import subprocess
import sys
import tomllib

import pytest
import typer

from monitor.cli.app import require_extra
from tests.helpers import REPO


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=False)


def test_the_client_module_imports_the_standard_library_only() -> None:
    done = _run(
        "import sys, monitor.instrument\n"
        "extra = {m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names)\n"
        # the editable install's import hook and setuptools' .pth hook are the environment's, not imports
        "extra -= {'__main__', '_distutils_hack'}\n"
        "print(sorted(m for m in extra if not m.startswith('__editable__')))"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['monitor']"


def test_the_base_install_has_no_dependency_and_the_extras_build_on_server() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["dependencies"] == []
    extras = project["optional-dependencies"]
    for name in ("dashboard", "replay", "postgres"):
        assert "rewrite-monitor[server]" in extras[name]
    assert extras["all"] == ["rewrite-monitor[server,dashboard,replay,postgres]"]
    assert "rewrite-monitor[all]" in extras["dev"]
    assert project["scripts"]["rewrite-monitor"] == "monitor.cli.entry:main"


def test_the_console_script_without_the_server_names_the_install_line() -> None:
    # typer missing stands for a client-only install
    done = _run("import sys; sys.modules['typer'] = None\nfrom monitor.cli.entry import main\nmain()")
    assert done.returncode == 2
    assert "no module 'typer'" in done.stderr
    assert "pip install 'rewrite-monitor[server]'" in done.stderr


def test_the_client_install_still_answers_version() -> None:
    from monitor import __version__

    done = _run(
        "import sys; sys.modules['typer'] = None; sys.argv = ['rewrite-monitor', '--version']\n"
        "from monitor.cli.entry import main\nmain()"
    )
    assert (done.returncode, done.stdout) == (0, f"rewrite-monitor {__version__} (client install)\n")


def test_a_command_whose_extra_is_missing_exits_2_naming_it(capsys: pytest.CaptureFixture[str]) -> None:
    require_extra("json", "replay", "replay")  # present: nothing happens
    with pytest.raises(typer.Exit) as exc:
        require_extra("no_such_module_here", "dashboard", "the dashboard")
    assert exc.value.exit_code == 2
    said = " ".join(capsys.readouterr().err.split())  # the console wraps long lines
    assert "the dashboard needs the [dashboard] extra (no module 'no_such_module_here')" in said
    assert "pip install 'rewrite-monitor[dashboard]'" in said


def test_a_postgresql_url_without_its_extra_names_the_install_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server extra alone has no PostgreSQL driver: a postgresql:// URL says which extra to install
    (one line, exit 2) instead of a traceback from the driver's import."""
    import importlib.util

    from typer.testing import CliRunner

    from monitor.cli.main import app

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "psycopg" else real(name, *a)
    )
    done = CliRunner().invoke(app, ["--database-url", "postgresql://u:pw@127.0.0.1:1/db", "queue"])
    assert done.exit_code == 2
    said = " ".join(done.output.split())
    assert "a PostgreSQL database URL needs the [postgres] extra" in said
    assert "pip install 'rewrite-monitor[postgres]'" in said and "pw" not in said
