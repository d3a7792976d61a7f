"""A throwaway PostgreSQL server on 127.0.0.1, managed by cbo for demos, tests and benchmarks.

``cbo postgres start`` creates a cluster under the cache directory on first use (``initdb``),
starts it on a free port and prints its URL; starting again while it runs reuses it. The server
listens on 127.0.0.1 only, has no Unix socket, and requires a generated password kept in a file
readable only by the invoking user, so other local users cannot connect.

PostgreSQL refuses to run as root. When cbo runs as root the server runs as an unprivileged
system user (``$CBO_PG_OS_USER``, else ``postgres``, else ``nobody``) and its data directory is
owned by that user. If that user cannot reach the cache directory (``/root`` is private), the
data directory goes under ``/var/tmp`` instead and ``status`` says where.

The cluster is tuned for loads and analytics, not durability (``fsync = off``): it is a scratch
server. Binaries come from ``$CBO_PG_BINDIR``, ``pg_config --bindir``, the system's
``/usr/lib/postgresql/*/bin``, the ``PATH``, or a pip-installed ``pgserver`` package.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from cbo.connectors.localserver import (
    LocalServerState,
    ServerAddress,
    accepts_connections,
    first_line,
    free_port,
    port_is_free,
    tail,
)
from cbo.errors import SetupError, SourceUnreachable
from cbo.paths import cache_dir

SUPERUSER = "cbo"
DATABASE = "cbo"

TUNING = """\
# Written by cbo: a scratch server for analytics, not for data that must survive a crash.
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
fsync = off
synchronous_commit = off
full_page_writes = off
shared_buffers = '1GB'
work_mem = '64MB'
maintenance_work_mem = '512MB'
effective_cache_size = '8GB'
max_wal_size = '4GB'
max_parallel_workers_per_gather = 2
"""


@dataclass(frozen=True)
class ServerInfo(ServerAddress):
    """Where the local PostgreSQL is and how to reach it, and its binaries' directory."""

    scheme = "postgresql"

    bindir: str

    def conninfo(self, database: str | None = None) -> dict[str, Any]:
        """Keyword arguments for ``psycopg.connect``."""
        return dict(host=self.host, port=self.port, user=self.user,
                    dbname=database or self.database, password=self.password())


def find_bindir() -> Path:
    """The directory holding ``initdb``, ``pg_ctl`` and ``postgres``."""
    candidates: list[Path] = []
    if os.environ.get("CBO_PG_BINDIR"):
        candidates.append(Path(os.environ["CBO_PG_BINDIR"]))
    pg_config = shutil.which("pg_config")
    if pg_config:
        try:
            out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, timeout=10)
            if out.returncode == 0:
                candidates.append(Path(out.stdout.strip()))
        except (OSError, subprocess.TimeoutExpired):
            pass
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name)
                      if Path(p).parent.name.isdigit() else 0, reverse=True)
    candidates += [Path(p) for p in versions]
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    try:  # a pip-installed server (the pgserver package ships its binaries)
        import pgserver

        candidates.append(Path(pgserver.__file__).parent / "pginstall" / "bin")
    except ImportError:
        pass
    for candidate in candidates:
        if all((candidate / tool).exists() for tool in ("initdb", "pg_ctl", "postgres")):
            return candidate
    raise SetupError(
        "PostgreSQL server binaries not found (initdb, pg_ctl, postgres): install Debian's "
        "postgresql package, pip install pgserver, or set CBO_PG_BINDIR to their directory")


class LocalPostgres(LocalServerState):
    """The server whose state lives in ``<cache>/postgres``."""

    kind = "PostgreSQL"
    os_user_variable = "CBO_PG_OS_USER"
    os_users = ("postgres", "nobody")
    info_type = ServerInfo

    def __init__(self, root: Path | None = None):
        super().__init__(root or cache_dir() / "postgres")

    # -- the flavour's hooks (the shared operations are in LocalServerState) ------------------

    def _created(self, info: ServerInfo) -> bool:
        return (Path(info.data_dir) / "PG_VERSION").exists()

    def _shutdown(self, info: ServerInfo) -> None:
        self._run_as_server([str(Path(info.bindir) / "pg_ctl"), "-D", info.data_dir,
                             "-m", "fast", "-w", "-t", "60", "stop"], info.os_user)

    # -- internals ---------------------------------------------------------------------------

    def _running(self, info: ServerInfo) -> bool:
        pg_ctl = Path(info.bindir) / "pg_ctl"
        if not pg_ctl.exists() or not Path(info.data_dir).exists():
            return False
        result = self._run_as_server([str(pg_ctl), "-D", info.data_dir, "status"], info.os_user, check=False)
        return result.returncode == 0 and accepts_connections(info.host, info.port)

    def _create(self) -> ServerInfo:
        bindir = find_bindir()
        os_user = self._server_user()
        home = self._fresh_home(os_user)
        password = self._new_password()
        initdb_pwfile = home / "initdb-password"
        self._private_file_for_server(initdb_pwfile, password + "\n", os_user)

        data_dir = home / "data"
        try:
            self._run_as_server([str(bindir / "initdb"), "-D", str(data_dir), "-U", SUPERUSER,
                                 f"--pwfile={initdb_pwfile}", "--auth=scram-sha-256",
                                 "-E", "UTF8", "--locale=C"], os_user)
        finally:
            initdb_pwfile.unlink(missing_ok=True)
        conf = data_dir / "postgresql.conf"
        with conf.open("a") as handle:
            handle.write("\n" + TUNING)
        info = ServerInfo(host="127.0.0.1", port=free_port(), user=SUPERUSER, database=DATABASE,
                          data_dir=str(data_dir), password_file=str(self.password_file),
                          os_user=os_user, bindir=str(bindir))
        self._write_state(info)
        return info

    def _launch(self, info: ServerInfo) -> ServerInfo:
        if not port_is_free(info.port):
            info = ServerInfo(**{**asdict(info), "port": free_port()})
        log = Path(info.data_dir).parent / "server.log"
        result = self._run_as_server(
            [str(Path(info.bindir) / "pg_ctl"), "-D", info.data_dir, "-l", str(log),
             "-o", f"-p {info.port}", "-w", "-t", "60", "start"], info.os_user, check=False)
        if result.returncode != 0:
            raise SourceUnreachable(f"local PostgreSQL did not start (log {log}): {tail(log)}")
        self._write_state(info)
        self._ensure_database(info)
        return info

    def _ensure_database(self, info: ServerInfo) -> None:
        import psycopg

        try:
            with psycopg.connect(**info.conninfo("postgres"), autocommit=True, connect_timeout=10) as conn:
                exists = conn.execute("select 1 from pg_database where datname = %s", (info.database,)).fetchone()
                if not exists:
                    conn.execute(f'create database "{info.database}"')
        except psycopg.OperationalError as exc:
            raise SourceUnreachable(f"local PostgreSQL at {info.host}:{info.port}: {first_line(exc)}") from None

