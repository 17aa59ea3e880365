"""The data files the package ships: ``monitor.data.rules`` and ``monitor.data.schemas``.

Both subpackages live outside this folder, in the repository's top-level ``rules/`` and ``schemas/``;
``pyproject.toml`` (``[tool.setuptools.package-dir]``) maps them here in the wheel. Find their files
with :mod:`monitor.bundled`, never by a path relative to the code.
"""
