"""Which JDBC source failed, when a query fails while Spark reads from it.

A server that goes away mid-query reaches Python as a Spark job failure whose innermost cause is
the driver's ("Could not connect to address=...", "Connection refused", "An I/O error occurred
while sending to the backend"), naming neither the source nor the catalog. When a query fails,
the catalog's JDBC sources are probed (``Connector.probe``: a TCP connection to a server, a
few seconds at most; a database file's existence) and the first one that no longer answers is
named in the one-line error, with how to reach it again.
"""

from __future__ import annotations

from cbo.catalog_types import Catalog
from cbo.connectors import connector_of


def unreachable_source(catalog: Catalog, cause: str) -> str | None:
    """The error to show when a failed query's JDBC source no longer answers, else None."""
    for source in catalog.jdbc_sources():
        problem = connector_of(source).probe(source)
        if problem is not None:
            return f"source '{source.name}' failed while the query ran: {problem} (Spark: {cause})"
    return None

