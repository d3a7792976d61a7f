"""Benchmarks of cbo: scripts that print a table and save JSON with machine, versions and seed."""
