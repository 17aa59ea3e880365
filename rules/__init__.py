"""Installed as the package ``monitor.data.rules`` (see ``monitor.bundled``); this folder holds data."""
