"""Where the files the package ships beside its code are: the dashboard, the migrations, rules, schemas.

They live in top-level folders of the repository, and the wheel maps each folder to a package
(``pyproject.toml``, ``[tool.setuptools.package-dir]``)::

    folder        package                    holds
    dashboard/    monitor.dashboard          the Streamlit app (app.py, views/)
    migrations/   monitor.store.migrations   Alembic's env.py, script.py.mako, versions/
    rules/        monitor.data.rules         aliases.yaml, neutral.yaml, qualifiers.yaml
    schemas/      monitor.data.schemas       the *.schema.json of the log format and the eval set

Each folder is found through ``importlib.resources`` on its package:

- installed from the wheel, the package is a folder under ``site-packages/monitor/``;
- installed editable (``pip install -e .``, what ``make test`` does), setuptools' import finder maps
  each package to its folder in the checkout;
- run from a checkout that is not installed (``PYTHONPATH=.``), or whose editable install predates the
  mapping (its finder knows only the packages of its time), the package cannot be imported: then the
  folder beside ``monitor/`` is used.
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path

from monitor.errors import ConfigError

PACKAGES = {
    "dashboard": "monitor.dashboard",
    "migrations": "monitor.store.migrations",
    "rules": "monitor.data.rules",
    "schemas": "monitor.data.schemas",
}
"""Each bundled folder (its name in the repository) and the package the wheel installs it as."""

CHECKOUT = Path(__file__).resolve().parent.parent
"""The folder that holds ``monitor/``: the repository root when running from a checkout."""


def bundled_dir(name: str) -> Path:
    """The folder on disk of the bundled ``name`` (a key of :data:`PACKAGES`: ``dashboard``,
    ``migrations``, ``rules`` or ``schemas``).

    A real folder, not a ``Traversable``: Alembic and Streamlit are handed the path itself.
    Raises ``KeyError`` for another name, ``ConfigError`` when neither the package nor the checkout's
    folder exists (an incomplete installation) or the package is not a folder on disk (a zip import).
    """
    package = PACKAGES[name]
    try:
        root = importlib.resources.files(package)
    except ModuleNotFoundError:
        # Not installed with the mapping (see the module docstring): the checkout's own folder.
        folder = CHECKOUT / name
        if folder.is_dir():
            return folder
        raise ConfigError(
            f"bundled {name}/ not found: no package {package} and no folder {folder}; reinstall "
            "rewrite-monitor"
        ) from None
    if not isinstance(root, Path):
        raise ConfigError(
            f"bundled {name}/ is not a folder on disk ({package} was imported from {root}); install "
            "rewrite-monitor unpacked (pip install)"
        )
    return root


def bundled_file(name: str, filename: str) -> Path:
    """The path of ``filename`` (relative, ``/``-separated) inside the bundled folder ``name``.

    The file may not exist (a caller reports that in its own terms); raises as :func:`bundled_dir`.
    """
    return bundled_dir(name).joinpath(*filename.split("/"))
