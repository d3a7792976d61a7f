"""cbo: a cost-based query optimizer research framework whose plans run on Apache Spark."""

from cbo.catalog import Catalog, load_catalog
from cbo.errors import CboError

__all__ = ["Catalog", "CboError", "load_catalog"]
__version__ = "0.1.0"
