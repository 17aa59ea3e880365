"""Ingest: log files, directories and stdin to stored events and joined records, losing nothing.

``events`` parses and validates one line of log format v1; ``store`` writes events and joins records;
``tail`` follows growing and rotated files for the worker; ``quarantine`` keeps every rejected line.
"""
