"""The estimator's defaults: what it assumes when statistics cannot answer.

Every estimate that rests on one of these carries a note saying so, and EXPLAIN shows it.
The selectivities are PostgreSQL's (``src/include/utils/selfuncs.h``), so a plan without
statistics is estimated as PostgreSQL would estimate it.
"""

TABLE_ROWS = 1000.0          # a table without statistics
EQ_SELECTIVITY = 0.005       # x = <something unknown> (DEFAULT_EQ_SEL)
RANGE_SELECTIVITY = 1 / 3    # x < <something unknown> (DEFAULT_INEQ_SEL)
LIKE_SELECTIVITY = 0.005     # LIKE without a usable prefix, when no sample can be used (DEFAULT_MATCH_SEL)
UNKNOWN_SELECTIVITY = 0.5    # a boolean expression of unknown shape

# Sample use (see cbo.estimate.filters): below MIN_SAMPLE_HITS matching sample rows the
# sample only bounds the estimate; at or above it the sample's share is the estimate.
MIN_SAMPLE_HITS = 10
# Column distributions are re-weighted from the rows of the sample that pass a filter when
# at least this many do.
MIN_SAMPLE_FOR_REWEIGHT = 50
