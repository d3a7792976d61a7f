"""A throwaway MariaDB server on 127.0.0.1, managed by cbo for demos, tests and benchmarks.

``cbo mariadb start`` creates a data directory under the cache on first use
(``mariadb-install-db``), starts ``mariadbd`` on a free port and prints its URL; starting again
while it runs reuses it; ``stop`` waits until the server process has exited. It behaves like
``cbo postgres`` (:mod:`cbo.connectors.postgres.server`) and shares its state handling
(:mod:`cbo.connectors.localserver`).

The server listens on 127.0.0.1 only. Its Unix socket (MariaDB always has one) is inside the
server's private directory. The user ``cbo`` logs in from 127.0.0.1 with a generated password
kept in a file readable only by the invoking user; the password is handed to the server once,
on standard input of the bootstrap run, and is never on a command line or in a log.

When cbo runs as root the server runs as ``$CBO_MARIADB_OS_USER``, else ``mysql`` (Debian's
``mariadb-server`` creates it), else ``nobody``.

Tables and text compare as Spark does: the server's default collation is ``utf8mb4_nopad_bin``
(case-sensitive, trailing spaces significant). MariaDB's default (``utf8mb4_general_ci``) would
make a pushed ``c = 'abc'`` match ``'ABC '``, unlike the same filter run by Spark. The server is
tuned for loads and analytics, not durability. Binaries come from ``$CBO_MARIADB_BINDIR`` or the
system (``/usr/sbin/mariadbd``, ``mariadb-install-db`` on the ``PATH``).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path

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

USER = "cbo"
DATABASE = "cbo"
START_TIMEOUT_S = 60.0

# Server options: loopback only, no name lookups, and Spark's string semantics (see above).
# Durability is traded for load speed: this is a scratch server.
SERVER_OPTIONS = (
    "--bind-address=127.0.0.1",
    "--skip-name-resolve",
    "--character-set-server=utf8mb4",
    "--collation-server=utf8mb4_nopad_bin",
    "--local-infile=0",  # cbo loads with INSERTs; no server may ask a client for its files
    "--innodb-buffer-pool-size=512M",
    "--innodb-flush-log-at-trx-commit=0",
    "--innodb-doublewrite=0",
    "--skip-log-bin",
    "--max-allowed-packet=256M",
    "--sql-mode=STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION",
)


@dataclass(frozen=True)
class MariaDBInfo(ServerAddress):
    """Where the local MariaDB is and how to reach it, its server binary and process."""

    scheme = "mariadb"

    server_binary: str
    pid: int = 0

    @property
    def socket_path(self) -> str:
        return str(Path(self.data_dir).parent / "mariadbd.sock")

    @property
    def log_path(self) -> str:
        return str(Path(self.data_dir).parent / "server.log")


def find_binaries() -> tuple[Path, Path]:
    """``mariadbd`` and ``mariadb-install-db``."""
    directories = [Path(os.environ["CBO_MARIADB_BINDIR"])] if os.environ.get("CBO_MARIADB_BINDIR") else []
    directories += [Path("/usr/sbin"), Path("/usr/bin"), Path("/usr/local/bin"), Path("/usr/local/sbin")]
    server = install = None
    for directory in directories:
        for name in ("mariadbd", "mysqld"):
            if server is None and (directory / name).is_file():
                server = directory / name
        for name in ("mariadb-install-db", "mysql_install_db"):
            if install is None and (directory / name).is_file():
                install = directory / name
    server = server or _which("mariadbd")
    install = install or _which("mariadb-install-db")
    if server is None or install is None:
        raise SetupError("MariaDB server binaries not found (mariadbd, mariadb-install-db): install Debian's "
                         "mariadb-server package (./run setup does), or set CBO_MARIADB_BINDIR to their directory")
    return server, install


def _which(name: str) -> Path | None:
    found = shutil.which(name)
    return Path(found) if found else None


class LocalMariaDB(LocalServerState):
    """The server whose state lives in ``<cache>/mariadb``."""

    kind = "MariaDB"
    os_user_variable = "CBO_MARIADB_OS_USER"
    os_users = ("mysql", "nobody")
    info_type = MariaDBInfo

    def __init__(self, root: Path | None = None):
        super().__init__(root or cache_dir() / "mariadb")

    # -- the flavour's hooks (the shared operations are in LocalServerState) ------------------

    def _created(self, info: MariaDBInfo) -> bool:
        return (Path(info.data_dir) / "mysql").is_dir() and Path(info.server_binary).exists()

    def _running(self, info: MariaDBInfo) -> bool:
        return _alive(info.pid) and accepts_connections(info.host, info.port)

    def _create(self) -> MariaDBInfo:
        server, install = find_binaries()
        os_user = self._server_user()
        home = self._fresh_home(os_user)
        password = self._new_password()
        data_dir = home / "data"
        basedir = server.resolve().parent.parent  # /usr for /usr/sbin/mariadbd
        self._run_as_server([str(install), "--no-defaults", f"--datadir={data_dir}", f"--basedir={basedir}",
                             "--auth-root-authentication-method=socket", "--skip-test-db",
                             f"--user={os_user}"], os_user, environment_prefix="MYSQL")
        # The login user and database, made by a bootstrap run that reads its SQL (with the
        # password) from standard input: nothing holding the password touches the disk.
        statements = _bootstrap_sql(password)
        self._run_as_server([str(server), "--no-defaults", f"--datadir={data_dir}", f"--basedir={basedir}",
                             "--bootstrap", "--skip-networking", "--log-error=" + str(home / "bootstrap.log")],
                            os_user, environment_prefix="MYSQL", stdin=statements)
        info = MariaDBInfo(host="127.0.0.1", port=free_port(), user=USER, database=DATABASE,
                           data_dir=str(data_dir), password_file=str(self.password_file),
                           os_user=os_user, server_binary=str(server))
        self._write_state(info)
        return info

    def _launch(self, info: MariaDBInfo) -> MariaDBInfo:
        if not port_is_free(info.port):
            info = MariaDBInfo(**{**asdict(info), "port": free_port()})
        basedir = Path(info.server_binary).resolve().parent.parent
        argv = [info.server_binary, "--no-defaults", f"--datadir={info.data_dir}", f"--basedir={basedir}",
                f"--port={info.port}", f"--socket={info.socket_path}", f"--log-error={info.log_path}",
                f"--pid-file={Path(info.data_dir).parent / 'mariadbd.pid'}", *SERVER_OPTIONS]
        options = self._server_process_options(info.os_user, "MYSQL")
        # Its own session: a Ctrl-C in cbo does not reach the server, as with pg_ctl.
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, start_new_session=True, **options)
        _CHILDREN[process.pid] = process
        info = MariaDBInfo(**{**asdict(info), "pid": process.pid})
        deadline = time.monotonic() + START_TIMEOUT_S
        while not accepts_connections(info.host, info.port):
            if process.poll() is not None or time.monotonic() > deadline:
                if process.poll() is None:
                    process.kill()
                    process.wait()
                raise SourceUnreachable(f"local MariaDB did not start (log {info.log_path}): "
                                        f"{tail(Path(info.log_path))}")
            time.sleep(0.2)
        self._write_state(info)
        self._check_login(info)
        return info

    def _shutdown(self, info: MariaDBInfo) -> None:
        # SIGTERM is MariaDB's normal shutdown: it flushes and exits. Wait until it has.
        try:
            os.kill(info.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + START_TIMEOUT_S
        while _alive(info.pid):
            if time.monotonic() > deadline:
                os.kill(info.pid, signal.SIGKILL)
            time.sleep(0.1)

    def _check_login(self, info: MariaDBInfo) -> None:
        from cbo.connectors.mariadb.client import MariaAddress, connect

        try:
            with connect(MariaAddress(info.host, info.port, info.database, info.user, info.password()),
                         what="local MariaDB"):
                pass
        except SourceUnreachable as exc:
            raise SourceUnreachable(first_line(exc)) from None


# Servers started by this process: their exit must be reaped, or they linger as zombies that
# still look alive to a signal probe.
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    child = _CHILDREN.get(pid)
    if child is not None:
        return child.poll() is None
    try:
        with open(f"/proc/{pid}/stat") as handle:
            # "pid (comm) state ...": a zombie (Z) or dead (X) process has exited, and a pid
            # reused by another program (after a reboot) is not the server.
            text = handle.read()
    except OSError:
        return False
    command = text[text.find("(") + 1:text.rfind(")")]
    state = text[text.rfind(")") + 1:].split()[:1]
    return command in ("mariadbd", "mysqld") and state not in (["Z"], ["X"])


def _bootstrap_sql(password: str) -> str:
    from cbo.connectors.mariadb.client import sql_string

    # Bootstrap mode runs with the grant tables loaded but without privilege checks; FLUSH
    # PRIVILEGES first makes account statements work in it.
    return "\n".join([
        "FLUSH PRIVILEGES;",
        f"CREATE USER '{USER}'@'127.0.0.1' IDENTIFIED BY {sql_string(password)};",
        f"GRANT ALL PRIVILEGES ON *.* TO '{USER}'@'127.0.0.1' WITH GRANT OPTION;",
        f"CREATE DATABASE IF NOT EXISTS `{DATABASE}`;",
    ]) + "\n"
