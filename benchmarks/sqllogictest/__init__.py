"""SQLite's sqllogictest corpus run through cbo (``python -m benchmarks.sqllogictest``)."""
