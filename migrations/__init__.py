"""Installed as the package ``monitor.store.migrations`` (see ``monitor.bundled``): Alembic's script folder.

Alembic loads ``env.py`` and ``versions/*.py`` by path; nothing imports them as modules.
"""
