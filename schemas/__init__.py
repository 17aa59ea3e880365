"""Installed as the package ``monitor.data.schemas`` (see ``monitor.bundled``); this folder holds data."""
