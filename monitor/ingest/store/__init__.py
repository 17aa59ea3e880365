"""The only door to ingest's tables: ``events`` and ``records`` (``batches`` writes them in idempotent
batches and joins the halves of a request; ``records`` reads them back as check input), ``quarantine``
(rejected lines), ``source_cursors`` (the worker's read positions, ``cursors``) and the removal of old
transcripts (``retention``). Functions take a session and return plain rows, never ORM objects.
"""
