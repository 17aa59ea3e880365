"""The fault suite: the README's promises (nothing lost, nothing stuck, nothing leaked) under the faults
that break them, measured on SQLite and on PostgreSQL and printed as figures (issue 12).

``python -m tests.faults`` (``make faults``) runs every scenario at full size and prints one line of
figures per scenario and database, exiting 1 when any expectation fails; ``tests/faults/test_faults.py``
runs the same scenarios at the small size in the README's test command (marked ``slow``). Each scenario
is a function of a database URL, a working directory and a :class:`~tests.faults.common.Size` that
returns a :class:`~tests.faults.common.Result`: its figures and the expectations that failed.

- ``kill_rotate``: the worker SIGKILLed at random points while a log grows and is rotated by rename to
  numbered and to date-named generations, sometimes twice between cycles. Expected: every line stored
  once, none read twice, findings and queue equal to a one-shot run.
- ``kill_rotate_traces``: the same with OpenTelemetry traces for a log, each request a trace over two
  lines, rotated also as the Collector's file exporter rotates. Expected: every span stored once, every
  trace mapped once, findings and queue equal to a one-shot run.
- ``copytruncate``: the log rotated by copytruncate while the worker runs. Expected: the truncations
  reported by the worker (at least one; two rotations between passes show as one), nothing stored
  twice; the lines lost in the window between copy and truncation counted against the producer.
- ``split_halves``: each request's ``ctx_input`` and ``rewrite`` in different files, three workers on
  PostgreSQL (one on SQLite, which allows one). Expected: no half-record, findings and queue equal to a
  one-shot run.
- ``poison``: non-finite numbers, extreme and far-future timestamps, over-long fields and a BOM between
  good lines, then a spike of fabrications; a corrupt store file. Expected: every good line stored,
  every bad one quarantined with its reason, the next cycle reading on, the spike alerted; on SQLite,
  the corrupt store a one-line error with exit 4.
- ``contention`` (SQLite): the worker running beside two reviewers who claim and submit through the
  dashboard's functions. Expected: no failed cycle, no failed submit.
- ``secrets``: an exception raised with a password in the database URL, sent to a capturing fake Sentry
  ingest. Expected: the password in no byte received.
- ``pii_export``: an export of a fixture with 60+ realistic personal details (``pii_fixture.json``).
  Expected: every detail inside the documented scope replaced, assertions included; what is out of scope
  is listed in the fixture, with why.
- ``pii_ids``: request and conversation ids built from e-mail addresses and phone numbers, a spike among
  them alerted by one worker cycle to Sentry, a webhook, Slack and PagerDuty, and ``findings --otlp``.
  Expected: no byte sent, logged or written holds a personal id; the ids are ``pid_`` hashes ``show``
  opens.
- ``db_outage``: the database gone for 6 s (small) or 35 s (full) while a worker follows a growing log:
  on PostgreSQL a proxy between them cut and refusing, on SQLite the write lock held by another process.
  Expected: the worker survives and exits 0 on SIGTERM, each failed cycle reaches the cron monitor as an
  ``error`` check-in, and afterwards every event is stored once, findings and queue equal to a one-shot
  run.
- ``source_shapes``: a ``**`` source over a folder holding symlinks to itself and its parent, a FIFO, a
  socket and (not as root) an unreadable file. Expected: the cycle ends within 120 s, every good event is
  stored once, the FIFO and socket are named as skipped, a second cycle stores nothing more.

The dashboard's Markdown fault (logged fields carrying Markdown images and links, in headless Chromium)
is ``tests/e2e/test_browser.py::test_markdown_in_logged_fields_renders_as_text_and_fetches_nothing``,
which the README's test command runs.
"""
