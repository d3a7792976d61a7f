"""Small data to explore cbo with: ``cbo.tpch_catalog(sf=0.01)``, and cbo's local servers.

The notebooks and a first session need a catalog without a database server: TPC-H generated
as Parquet into cbo's cache (``$CBO_CACHE_DIR``, else ``$XDG_CACHE_HOME/cbo`` or
``~/.cache/cbo``: set ``CBO_CACHE_DIR`` to put it elsewhere, as the test suite does), the
all-spark catalog written beside it, and cbo's statistics of its tables collected. Each step
is skipped when its result is already there, so a second call returns at once.

The placements with database sources (all-postgres, federated, federated3) need cbo's
throwaway PostgreSQL (and, for federated3, MariaDB) of the same cache. ``LocalServers`` starts
them and later stops only the ones it started, so a notebook leaves a server that was already
running (a user's, or a test session's) as it found it::

    servers = cbo.LocalServers("postgres", "mariadb").start()
    catalog = cbo.tpch_catalog(sf=0.01, placement="federated3")
    ...
    servers.stop()
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from cbo.connectors import by_server_command, with_servers
from cbo.errors import CboError

PLACEMENTS = ("all-spark", "all-postgres", "federated", "federated3")
SERVERS = tuple(c.server_command for c in with_servers() if c.server_command is not None)


def tpch_catalog(sf: float = 0.01, *, placement: str = "all-spark", statistics: bool = True,
                 progress: Callable[[str], None] | None = None) -> Path:
    """The TPC-H catalog of ``placement`` at scale factor ``sf`` (Parquet in the cache, generated
    once with tpchgen-cli); with ``statistics``, cbo's statistics of every table collected where
    missing or stale (one scan per table, about a minute at SF 0.01 the first time).

    ``all-spark`` starts no server and touches no source but the cache. The other placements
    load the tables they place in PostgreSQL (and MariaDB for federated3) into cbo's local
    servers of the cache, starting them if they are not running: start them with
    ``LocalServers`` first to have them stopped again."""
    from cbo.sources.catalog import load_catalog
    from cbo.sources.statistics import analyze
    from cbo.workloads import tpch

    if placement not in PLACEMENTS:
        raise CboError(f"unknown placement {placement!r} (expected one of: {', '.join(PLACEMENTS)})")
    say = progress or (lambda _: None)
    if placement == "all-spark":
        catalog = tpch.prepare(sf, postgres=None, progress=say)["all-spark"]
    else:
        mariadb = "local" if placement == "federated3" else None
        catalog = tpch.prepare(sf, postgres="local", mariadb=mariadb, progress=say)[placement]
    if statistics:
        from cbo.app.progress import step

        analyze(load_catalog(catalog), progress=say, step=step)
    return catalog


class LocalServers:
    """cbo's throwaway local servers (``"postgres"``, ``"mariadb"``, ``"sqlite"``) of the cache:
    ``start`` starts those not running and remembers them; ``stop`` stops exactly those (a
    server that was running before ``start`` stays running). Also a context manager."""

    def __init__(self, *kinds: str) -> None:
        unknown = [k for k in kinds if k not in SERVERS]
        if unknown or not kinds:
            raise CboError(f"LocalServers: unknown server {', '.join(map(repr, unknown)) or '(none given)'} "
                           f"(expected some of: {', '.join(SERVERS)})")
        self.kinds = tuple(dict.fromkeys(kinds))
        self.started: list[str] = []

    @staticmethod
    def _server(kind: str) -> Any:
        return by_server_command(kind).local_server()

    def running(self) -> dict[str, bool]:
        """Each server's state now: running or not."""
        return {kind: self._server(kind).status() is not None for kind in self.kinds}

    def start(self) -> LocalServers:
        for kind in self.kinds:
            server = self._server(kind)
            if server.status() is None:
                server.start()
                if kind not in self.started:
                    self.started.append(kind)
        return self

    def stop(self) -> list[str]:
        """Stop the servers ``start`` started; return their names."""
        stopped = []
        while self.started:
            kind = self.started.pop()
            if self._server(kind).stop():
                stopped.append(kind)
        return stopped

    def __enter__(self) -> LocalServers:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        states = ", ".join(f"{k}: {'running' if up else 'stopped'}" for k, up in self.running().items())
        return f"LocalServers({states}; started here: {', '.join(self.started) or 'none'})"
