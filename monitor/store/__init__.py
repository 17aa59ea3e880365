"""The store: the engine (with the SQLite and PostgreSQL set-up), the ORM models and the Alembic migrations.

Only ``store.py`` modules of the stages import the models; everything else gets plain rows from them.
"""
