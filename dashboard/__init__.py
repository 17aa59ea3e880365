"""Installed as the package ``monitor.dashboard`` (see ``monitor.bundled``), so the wheel carries the app.

Nothing imports it as a package: Streamlit runs ``app.py`` as a script, and its modules import each
other by their plain names (``import reads``) from this folder, which Streamlit puts on ``sys.path``.
"""
