"""Cost of physical alternatives: quantities per operator (``model``) times constants (``profile``)."""

from cbo.cost.model import CostModel
from cbo.cost.profile import QUANTITIES, CostProfile, default_profile

__all__ = ["QUANTITIES", "CostModel", "CostProfile", "default_profile"]
