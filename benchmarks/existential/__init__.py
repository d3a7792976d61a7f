"""Seed 003's existential subqueries on Spark: the semi join and its two inner-join rewrites."""
