"""WordNet 3.0 synonym sets (``synsets.json.gz``), built by ``scripts/build_wordnet.py`` from Debian's
``wordnet-base``; ``LICENSE`` is Princeton's WordNet 3.0 licence. Read through
:func:`monitor.lexicon.synsets`."""
