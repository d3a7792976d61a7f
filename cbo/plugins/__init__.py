"""The cardinality plug-ins cbo ships, as examples and baselines (``cbo.estimate.plugin``):
PostgreSQL's own EXPLAIN estimates (``postgres.PostgresEstimates``) and a sampling estimator
over the stored row samples (``samples.SampleEstimates``)."""

from cbo.plugins.postgres import PostgresEstimates
from cbo.plugins.samples import SampleEstimates

__all__ = ["PostgresEstimates", "SampleEstimates"]
