"""The only door to the database: keyword-only functions that take a session and return plain data.

``records`` builds check input from stored events; ``checks`` stores check runs and reads findings.
"""
