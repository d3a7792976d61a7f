"""cbo: a cost-based query optimizer research framework whose plans run on Apache Spark."""

from cbo.app.datasets import LocalServers, tpch_catalog
from cbo.app.session import Session
from cbo.errors import CboError
from cbo.sources.catalog import Catalog, load_catalog

__all__ = ["Catalog", "CboError", "LocalServers", "Session", "load_catalog", "tpch_catalog"]
__version__ = "0.1.0"
