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

import fcntl
import glob
import hashlib
import json
import os
import pwd
import secrets
import shutil
import socket
import subprocess
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterator

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
class ServerInfo:
    """Where the local server is and how to reach it. The password is only in ``password_file``."""

    host: str
    port: int
    user: str
    database: str
    data_dir: str
    password_file: str
    os_user: str
    bindir: str

    @property
    def url(self) -> str:
        """A libpq URL without the password."""
        return f"postgresql://{self.user}@{self.host}:{self.port}/{self.database}"

    @property
    def jdbc_url(self) -> str:
        return f"jdbc:postgresql://{self.host}:{self.port}/{self.database}"

    def password(self) -> str:
        return Path(self.password_file).read_text().strip()

    def conninfo(self, database: str | None = None) -> dict[str, object]:
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
        import pgserver  # type: ignore[import-not-found]

        candidates.append(Path(pgserver.__file__).parent / "pginstall" / "bin")
    except ImportError:
        pass
    for candidate in candidates:
        if all((candidate / tool).exists() for tool in ("initdb", "pg_ctl", "postgres")):
            return candidate
    raise SetupError(
        "PostgreSQL server binaries not found (initdb, pg_ctl, postgres): install Debian's "
        "postgresql package, pip install pgserver, or set CBO_PG_BINDIR to their directory")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_is_free(port: int) -> bool:
    """Whether the server can listen on ``port`` now.

    PostgreSQL binds with SO_REUSEADDR, so the probe does too: a port whose connections are
    still in TIME_WAIT after the server stopped (the server closes its sessions on a fast
    stop) is free for it, and the restarted server keeps its port.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


class LocalPostgres:
    """The server whose state lives in ``<cache>/postgres``."""

    def __init__(self, root: Path | None = None):
        self.root = (root or cache_dir() / "postgres").resolve()
        self.state_file = self.root / "server.json"
        self.password_file = self.root / "password"

    # -- public operations -----------------------------------------------------------------

    def start(self) -> ServerInfo:
        """Start the server (creating it on first use), or return the running one."""
        with self._lock():
            info = self._read_state()
            if info and self._running(info):
                return info
            if info is None or not (Path(info.data_dir) / "PG_VERSION").exists():
                info = self._create()
            return self._launch(info)

    def stop(self) -> bool:
        """Stop the server; return whether one was running."""
        with self._lock():
            info = self._read_state()
            if info is None or not self._running(info):
                return False
            self._run_as_server([str(Path(info.bindir) / "pg_ctl"), "-D", info.data_dir,
                                 "-m", "fast", "-w", "-t", "60", "stop"], info.os_user)
            return True

    def state(self) -> ServerInfo | None:
        """The server's recorded address and credentials files, running or not (None if never created)."""
        return self._read_state()

    def status(self) -> ServerInfo | None:
        """The running server, or None."""
        info = self._read_state()
        return info if info and self._running(info) else None

    def destroy(self) -> None:
        """Stop the server and delete its data directory and state."""
        self.stop()
        info = self._read_state()
        if info:
            shutil.rmtree(Path(info.data_dir).parent, ignore_errors=True)
        shutil.rmtree(self.root, ignore_errors=True)

    # -- internals ---------------------------------------------------------------------------

    @contextmanager
    def _lock(self) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _read_state(self) -> ServerInfo | None:
        try:
            return ServerInfo(**json.loads(self.state_file.read_text()))
        except (OSError, ValueError, TypeError):
            return None

    def _write_state(self, info: ServerInfo) -> None:
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(info), indent=2))
        tmp.replace(self.state_file)

    def _running(self, info: ServerInfo) -> bool:
        pg_ctl = Path(info.bindir) / "pg_ctl"
        if not pg_ctl.exists() or not Path(info.data_dir).exists():
            return False
        result = self._run_as_server([str(pg_ctl), "-D", info.data_dir, "status"], info.os_user, check=False)
        if result.returncode != 0:
            return False
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.settimeout(2)
            return sock.connect_ex((info.host, info.port)) == 0

    def _server_user(self) -> str:
        if os.geteuid() != 0:
            return pwd.getpwuid(os.geteuid()).pw_name
        for name in (os.environ.get("CBO_PG_OS_USER"), "postgres", "nobody"):
            if not name:
                continue
            try:
                pwd.getpwnam(name)
                return name
            except KeyError:
                continue
        raise SetupError("running as root, but no unprivileged user to run PostgreSQL as: "
                         "create one, or set CBO_PG_OS_USER")

    def _server_home(self, os_user: str) -> Path:
        """A directory for the cluster that ``os_user`` can reach and own."""
        preferred = self.root / "server"
        if os.geteuid() != 0:
            return preferred
        probe = subprocess.run(["test", "-x", str(self.root)], user=os_user, check=False)
        if probe.returncode == 0:
            return preferred
        digest = hashlib.sha256(str(self.root).encode()).hexdigest()[:10]
        return Path("/var/tmp") / f"cbo-postgres-{digest}"

    def _create(self) -> ServerInfo:
        bindir = find_bindir()
        os_user = self._server_user()
        home = self._server_home(os_user)
        if home.exists():
            shutil.rmtree(home)
        home.mkdir(parents=True)
        account = pwd.getpwnam(os_user)
        if os.geteuid() == 0:
            os.chown(home, account.pw_uid, account.pw_gid)
        home.chmod(0o700)

        password = secrets.token_urlsafe(24)
        old_umask = os.umask(0o077)
        try:
            self.password_file.write_text(password + "\n")
            initdb_pwfile = home / "initdb-password"
            initdb_pwfile.write_text(password + "\n")
            if os.geteuid() == 0:
                os.chown(initdb_pwfile, account.pw_uid, account.pw_gid)
        finally:
            os.umask(old_umask)

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
            tail = _tail(log)
            raise SourceUnreachable(f"local PostgreSQL did not start (log {log}): {tail}")
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
            raise SourceUnreachable(f"local PostgreSQL at {info.host}:{info.port}: {_first_line(exc)}") from None

    def _run_as_server(self, argv: list[str], os_user: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        as_other = os.geteuid() == 0
        account = pwd.getpwnam(os_user) if as_other else None
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["LC_ALL"] = "C"
        kwargs: dict[str, object] = {}
        if account is not None:
            kwargs = dict(user=account.pw_uid, group=account.pw_gid, extra_groups=[])
            env["HOME"] = account.pw_dir
        result = subprocess.run(argv, capture_output=True, text=True, env=env, cwd="/",
                                check=False, **kwargs)  # type: ignore[arg-type]
        if check and result.returncode != 0:
            detail = (result.stderr or result.stdout).strip().splitlines()
            raise SetupError(f"{Path(argv[0]).name} failed: {detail[-1] if detail else 'exit ' + str(result.returncode)}")
        return result


def _tail(log: Path) -> str:
    try:
        lines = [line for line in log.read_text().splitlines() if line.strip()]
        return lines[-1] if lines else "(empty log)"
    except OSError:
        return "(no log)"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
