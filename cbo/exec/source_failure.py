"""Which JDBC source failed, when a query fails while Spark reads from it.

A server that goes away mid-query reaches Python as a Spark job failure whose innermost cause is
the driver's ("Could not connect to address=...", "Connection refused", "An I/O error occurred
while sending to the backend"), naming neither the source nor the catalog. When a query fails,
the catalog's JDBC sources are probed (a TCP connection to each, a few seconds at most) and the
first one that no longer answers is named in the one-line error, with how to reach it again.
"""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

from cbo.errors import CboError
from cbo.sources.catalog import Catalog, Source


def unreachable_source(catalog: Catalog, cause: str) -> str | None:
    """The error to show when a failed query's JDBC source no longer answers, else None."""
    for source in catalog.jdbc_sources():
        problem = _probe(source)
        if problem is not None:
            return f"source '{source.name}' failed while the query ran: {problem} (Spark: {cause})"
    return None


def _probe(source: Source) -> str | None:
    try:
        url = source.jdbc_url()  # a local server that stopped says so, and how to start it
    except CboError as exc:
        return str(exc)
    parts = urlsplit(url[len("jdbc:"):])
    host, port = parts.hostname or "localhost", parts.port
    if port is None:
        return None
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(3)
        if sock.connect_ex((host, port)) != 0:
            return f"{source.location()} does not answer"
    return None
