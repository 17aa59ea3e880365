"""The files the package ships from top-level folders (monitor.bundled), and the wheel's package list.

From a checkout each bundled folder is the checkout's own: through setuptools' editable finder after
``pip install -e .``, or through the fallback when the checkout is only on ``sys.path``. That the
installed wheel finds them outside the checkout is ``scripts/wheel_smoke.sh``'s job.
"""

from __future__ import annotations

import fnmatch
import os
import subprocess
import sys
import tomllib
from pathlib import Path, PurePosixPath

import pytest

from monitor import bundled
from monitor.bundled import PACKAGES, bundled_dir, bundled_file
from monitor.errors import ConfigError

REPO = Path(__file__).resolve().parent.parent
SETUPTOOLS = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]

FILES = {
    "dashboard": [
        "app.py",
        "artifacts.py",
        "reads.py",
        "resources.py",
        "views/eval_set.py",
        "views/item.py",
        "views/overview.py",
        "views/queue.py",
    ],
    "migrations": [
        "env.py",
        "script.py.mako",
        "versions/0001_initial.py",
        "versions/0002_checks.py",
        "versions/0003_queue.py",
        "versions/0004_worker.py",
        "versions/0005_admission_indexes.py",
        "versions/0006_added_lemmas.py",
        "versions/0007_quarantine_resolution.py",
        "versions/0008_records_request_key.py",
        "versions/0009_alert_deliveries.py",
        "versions/0010_learned_overrides.py",
        "versions/0011_double_review.py",
        "versions/0012_finding_steps.py",
        "versions/0013_store_keys.py",
        "versions/0014_accepted_terms.py",
        "versions/0015_check_sets.py",
        "versions/0016_added_lemmas_by_conversation.py",
    ],
    "rules": ["aliases.yaml", "neutral.yaml", "qualifiers.yaml", "README.md"],
    "schemas": [
        "answer.schema.json",
        "ctx_input.schema.json",
        "regression_case.schema.json",
        "retrieve.schema.json",
        "rewrite.schema.json",
    ],
}


@pytest.mark.parametrize("name", sorted(PACKAGES))
def test_each_bundled_file_is_found_in_the_checkout(name: str) -> None:
    assert bundled_dir(name).resolve() == REPO / name
    for filename in FILES[name]:
        path = bundled_file(name, filename)
        assert path.is_file(), path
        assert path.resolve() == REPO / name / filename


def test_the_migration_revisions_are_all_listed_above() -> None:
    found = sorted(f"versions/{p.name}" for p in (REPO / "migrations" / "versions").glob("*.py"))
    assert found == [f for f in FILES["migrations"] if f.startswith("versions/")]


def test_an_unknown_name_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        bundled_dir("docs")


def test_without_the_package_the_checkout_folder_is_used() -> None:
    # No site-packages (-S), so no editable finder: the mapped packages cannot be imported, as when
    # the checkout is only on PYTHONPATH.
    code = (
        "import importlib.util\n"
        "from monitor.bundled import PACKAGES, bundled_dir\n"
        "for name, package in sorted(PACKAGES.items()):\n"
        "    assert importlib.util.find_spec(package) is None, package\n"
        "    print(name, bundled_dir(name))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-S", "-c", code], capture_output=True, text=True, check=True, env=env, cwd="/"
    )
    assert out.stdout.splitlines() == [f"{name} {REPO / name}" for name in sorted(PACKAGES)]


def test_neither_package_nor_checkout_folder_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(PACKAGES, "rules", "monitor.data.no_such_package")
    monkeypatch.setattr(bundled, "CHECKOUT", tmp_path)
    with pytest.raises(ConfigError) as exc:
        bundled_dir("rules")
    assert str(exc.value) == (
        f"bundled rules/ not found: no package monitor.data.no_such_package and no folder "
        f"{tmp_path / 'rules'}; reinstall rewrite-monitor"
    )


def test_the_package_dir_mapping_is_the_one_bundled_reads() -> None:
    assert SETUPTOOLS["package-dir"] == {package: name for name, package in PACKAGES.items()}


def _folders() -> dict[str, Path]:
    """Every package the wheel should hold -> its folder in the checkout: each folder of monitor/ and
    of the mapped top-level folders that holds a file (``__pycache__`` aside)."""
    roots = {"monitor": REPO / "monitor"} | {package: REPO / name for name, package in PACKAGES.items()}
    folders = {}
    for package, root in roots.items():
        for folder in [root, *root.rglob("*")]:
            if folder.is_dir() and "__pycache__" not in folder.parts and _files(folder):
                folders[".".join([package, *folder.relative_to(root).parts])] = folder
    return folders


def _files(folder: Path) -> list[Path]:
    return [f for f in folder.iterdir() if f.is_file() and not f.name.startswith(".")]


def test_every_package_folder_is_listed_for_the_wheel() -> None:
    # The package list is explicit (discovery cannot map the top-level folders), so a new package
    # under monitor/ would silently be missing from the wheel.
    listed, folders = set(SETUPTOOLS["packages"]), set(_folders())
    assert {"not listed": sorted(folders - listed), "no such folder": sorted(listed - folders)} == {
        "not listed": [],
        "no such folder": [],
    }


def test_every_data_file_is_matched_by_package_data() -> None:
    data = SETUPTOOLS["package-data"]
    missing = []
    for package, folder in _folders().items():
        for f in _files(folder):
            if f.suffix == ".py":
                continue  # the modules of a listed package are always in the wheel
            patterns = [PurePosixPath(p) for p in data.get(package, [])]
            if not any(str(p.parent) == "." and fnmatch.fnmatch(f.name, p.name) for p in patterns):
                missing.append(f"{package}: {f.relative_to(REPO)}")
    assert missing == []
