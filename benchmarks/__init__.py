"""Benchmarks: scripts that print figures. Targets live here, never in timed tests."""
