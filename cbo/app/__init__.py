"""What users run: the Python session, EXPLAIN, the ``cbo`` command, the demo, and their output."""
