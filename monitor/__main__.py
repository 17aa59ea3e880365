"""``python -m monitor`` is the same as the ``rewrite-monitor`` console script (with only the client
installed, it says which extra to install, as the script does)."""

from monitor.cli.entry import main

if __name__ == "__main__":
    main()
