"""What cbo's throwaway local database servers share: state, locking, the server's OS user.

A local server (``cbo postgres``, ``cbo mariadb``) keeps its state in a directory under the cache
(``<cache>/postgres``, ``<cache>/mariadb``): ``server.json`` says where it runs and which files
hold its data and password; ``password`` holds a generated password, readable only by the
invoking user. Operations on one server are serialized by a lock file in that directory, so two
cbo processes starting it at once get the same server.

Database servers refuse to run as root (PostgreSQL) or should not (MariaDB). When cbo runs as
root the server runs as an unprivileged system user, and its data directory is owned by that
user. If that user cannot reach the cache directory (``/root`` is private), the data directory
goes under ``/var/tmp`` instead. The flavours (:mod:`cbo.connectors.postgres.server`,
:mod:`cbo.connectors.mariadb.server`) say how to create, start, probe and stop their server.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import pwd
import secrets
import shutil
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

from cbo.errors import SetupError


@dataclass(frozen=True)
class ServerAddress:
    """Where one of cbo's local servers is and how to reach it; the password is only in
    ``password_file``. Subclasses name their URL scheme."""

    scheme: ClassVar[str]    # the URL scheme: postgresql, mariadb

    host: str
    port: int
    user: str
    database: str
    data_dir: str
    password_file: str
    os_user: str

    @property
    def url(self) -> str:
        """A URL without the password."""
        return f"{self.scheme}://{self.user}@{self.host}:{self.port}/{self.database}"

    @property
    def jdbc_url(self) -> str:
        return f"jdbc:{self.scheme}://{self.host}:{self.port}/{self.database}"

    def password(self) -> str:
        return Path(self.password_file).read_text().strip()

    def describe(self) -> list[str]:
        """What ``cbo postgres start`` (or ``mariadb``) prints (never the password)."""
        return [f"running: {self.url}", f"  jdbc url:       {self.jdbc_url}",
                f"  password file:  {self.password_file}",
                f"  data directory: {self.data_dir} (server runs as {self.os_user})"]

    def summary(self) -> str:
        """What ``status`` prints of a running server."""
        return f"running: {self.url} (data directory {self.data_dir})"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_is_free(port: int) -> bool:
    """Whether a server can listen on ``port`` now.

    The servers bind with SO_REUSEADDR, so the probe does too: a port whose connections are
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


def accepts_connections(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(2)
        return sock.connect_ex((host, port)) == 0


class LocalServerState:
    """The state directory of one local server and the operations every flavour shares.

    ``kind`` names the server in paths and messages; ``os_user_variable`` and ``os_users`` say
    which unprivileged user runs it when cbo runs as root; ``info_type`` is the dataclass kept
    in ``server.json``.
    """

    kind = "server"
    os_user_variable = "CBO_SERVER_OS_USER"
    os_users: tuple[str, ...] = ("nobody",)
    info_type: Any = None

    def __init__(self, root: Path):
        self.root = root.resolve()
        self.state_file = self.root / "server.json"
        self.password_file = self.root / "password"

    # -- public operations -----------------------------------------------------------------

    def start(self) -> Any:
        """Start the server (creating it on first use), or return the running one."""
        with self._lock():
            info = self._read_state()
            if info and self._running(info):
                return info
            if info is None or not self._created(info):
                info = self._create()
            return self._launch(info)

    def stop(self) -> bool:
        """Stop the server; return whether one was running."""
        with self._lock():
            info = self._read_state()
            if info is None or not self._running(info):
                return False
            self._shutdown(info)
            return True

    def state(self) -> Any:
        """The server's recorded address and credentials files, running or not (None if never created)."""
        return self._read_state()

    def status(self) -> Any:
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

    # -- what each flavour provides ------------------------------------------------------------

    def _created(self, info: Any) -> bool:
        """Whether the server's data directory exists and is initialized."""
        raise NotImplementedError

    def _create(self) -> Any:
        """Initialize a new data directory and password; return the info to launch with."""
        raise NotImplementedError

    def _launch(self, info: Any) -> Any:
        """Start the server (on another free port when its own is taken); return where it runs."""
        raise NotImplementedError

    def _running(self, info: Any) -> bool:
        raise NotImplementedError

    def _shutdown(self, info: Any) -> None:
        """Stop the running server and wait until it has exited."""
        raise NotImplementedError

    # -- shared internals -----------------------------------------------------------------------

    @contextmanager
    def _lock(self) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _read_state(self) -> Any:
        try:
            return self.info_type(**json.loads(self.state_file.read_text()))
        except (OSError, ValueError, TypeError):
            return None

    def _write_state(self, info: Any) -> None:
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(info), indent=2))
        tmp.replace(self.state_file)

    def _server_user(self) -> str:
        if os.geteuid() != 0:
            return pwd.getpwuid(os.geteuid()).pw_name
        for name in (os.environ.get(self.os_user_variable), *self.os_users):
            if not name:
                continue
            try:
                pwd.getpwnam(name)
                return name
            except KeyError:
                continue
        raise SetupError(f"running as root, but no unprivileged user to run the local {self.kind} as: "
                         f"create one, or set {self.os_user_variable}")

    def _server_home(self, os_user: str) -> Path:
        """A directory for the server's files that ``os_user`` can reach and own."""
        preferred = self.root / "server"
        if os.geteuid() != 0:
            return preferred
        probe = subprocess.run(["test", "-x", str(self.root)], user=os_user, check=False)
        if probe.returncode == 0:
            return preferred
        digest = hashlib.sha256(str(self.root).encode()).hexdigest()[:10]
        return Path("/var/tmp") / f"cbo-{self.kind.lower()}-{digest}"

    def _fresh_home(self, os_user: str) -> Path:
        """An empty directory for a new server, owned by ``os_user``, private to it."""
        home = self._server_home(os_user)
        if home.exists():
            shutil.rmtree(home)
        home.mkdir(parents=True)
        if os.geteuid() == 0:
            account = pwd.getpwnam(os_user)
            os.chown(home, account.pw_uid, account.pw_gid)
        home.chmod(0o700)
        return home

    def _new_password(self) -> str:
        """Generate the server's password and keep it in ``password`` (mode 0600)."""
        password = secrets.token_urlsafe(24)
        old_umask = os.umask(0o077)
        try:
            self.password_file.write_text(password + "\n")
        finally:
            os.umask(old_umask)
        return password

    def _private_file_for_server(self, path: Path, text: str, os_user: str) -> None:
        """Write ``text`` to ``path`` readable by the server's user only (e.g. a password to
        hand over at creation)."""
        old_umask = os.umask(0o077)
        try:
            path.write_text(text)
            if os.geteuid() == 0:
                account = pwd.getpwnam(os_user)
                os.chown(path, account.pw_uid, account.pw_gid)
        finally:
            os.umask(old_umask)

    def _server_process_options(self, os_user: str, environment_prefix: str) -> dict[str, Any]:
        """``subprocess`` keyword arguments that run a program as the server's user, with an
        environment free of the client settings (``PG*``, ``MYSQL*``) that would redirect it."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(environment_prefix)}
        env["LC_ALL"] = "C"
        options: dict[str, Any] = dict(env=env, cwd="/")
        if os.geteuid() == 0:
            account = pwd.getpwnam(os_user)
            options.update(user=account.pw_uid, group=account.pw_gid, extra_groups=[])
            env["HOME"] = account.pw_dir
        return options

    def _run_as_server(self, argv: list[str], os_user: str, check: bool = True,
                       environment_prefix: str = "PG", stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        options = self._server_process_options(os_user, environment_prefix)
        result = subprocess.run(argv, capture_output=True, text=True, check=False, input=stdin,
                                **options)
        if check and result.returncode != 0:
            detail = (result.stderr or result.stdout).strip().splitlines()
            reason = detail[-1] if detail else f"exit {result.returncode}"
            raise SetupError(f"{Path(argv[0]).name} failed: {reason}")
        return result


def tail(log: Path) -> str:
    try:
        lines = [line for line in log.read_text().splitlines() if line.strip()]
        return lines[-1] if lines else "(empty log)"
    except OSError:
        return "(no log)"


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
