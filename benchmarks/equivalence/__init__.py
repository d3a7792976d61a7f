"""Equivalence testing at scale (``python -m benchmarks.equivalence``): random cases, every
alternative of a family forced out of the memo, checked against DuckDB (PostgreSQL where DuckDB
fails) and against TLP."""
