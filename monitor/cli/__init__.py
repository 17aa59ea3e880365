"""The ``rewrite-monitor`` command line: ``app`` holds the typer app; ``commands`` registers the commands."""
