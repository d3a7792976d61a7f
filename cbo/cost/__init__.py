"""Cost of physical alternatives (see ``model``)."""

from cbo.cost.model import DEFAULT, CostConstants, CostModel

__all__ = ["DEFAULT", "CostConstants", "CostModel"]
