"""Cardinality estimation from the statistics of ``stats/`` (see ``estimator``)."""

from cbo.estimate.estimator import Estimator
from cbo.estimate.relation import RelEstimate

__all__ = ["Estimator", "RelEstimate"]
