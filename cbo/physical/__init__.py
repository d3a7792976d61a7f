"""Physical plans: how each operator runs (``algorithm``) and the one tree the search returns
(``plan``), which execution, EXPLAIN, the cost figures and the plan files all read."""
