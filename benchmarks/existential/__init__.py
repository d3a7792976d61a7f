"""Existential subqueries as early-out joins, on Spark: the semi join and its two inner-join rewrites."""
