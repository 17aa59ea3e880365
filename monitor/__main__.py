"""``python -m monitor`` is the same as the ``rewrite-monitor`` console script."""

from monitor.cli.main import main

if __name__ == "__main__":
    main()
