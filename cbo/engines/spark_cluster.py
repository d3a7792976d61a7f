"""A Spark standalone cluster on 127.0.0.1, managed by cbo for tests, demos and benchmarks.

``cbo spark start`` launches one master and N workers (default 2) from the pip-installed
PySpark's own launcher (``bin/spark-class org.apache.spark.deploy.master.Master`` and
``...worker.Worker``; PySpark's package has no ``sbin`` scripts), each on free ports, and prints
the master URL and its web UI. Each worker offers a share of the machine: its cores divided
among the workers, and half its memory divided among them (at least 1 GiB each, the default
executor's size). Starting again while the cluster runs reuses it. ``stop`` ends every process
the cluster started, executors included, and waits until they are gone.

State is kept like that of cbo's local database servers (:mod:`cbo.connectors.localserver`):
``<cache>/spark-cluster/server.json`` records the processes and ports, a lock file serializes
operations, and the work (executors' files, shuffle spills) and log directories are beside it.
Spark runs as the invoking user (it does not refuse root, unlike PostgreSQL).

Every daemon runs in a session of its own, detached from the command that started it, so the
cluster outlives ``cbo spark start``. The executors a worker launches are in the worker's
process group, so stopping signals the group, not just the worker.
"""

from __future__ import annotations

import json
import os
import signal
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cbo.connectors.localserver import LocalServerState, accepts_connections, free_port, tail
from cbo.errors import SetupError, SourceUnreachable
from cbo.paths import cache_dir

HOST = "127.0.0.1"
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
CONNECT_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
DEFAULT_WORKERS = 2
MIN_WORKER_MEMORY_MB = 1024   # Spark's default executor (spark.executor.memory = 1g) must fit
START_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class ClusterInfo:
    """Where the cluster runs and which processes it is made of."""

    host: str
    master_port: int
    webui_port: int
    master_pid: int
    worker_pids: list[int]
    worker_cores: int
    worker_memory_mb: int
    data_dir: str          # the cluster's work directory (executors' files, shuffle spills)
    log_dir: str
    spark_home: str
    connect_port: int = 0  # a Spark Connect server, when started with --connect
    connect_pid: int = 0

    @property
    def url(self) -> str:
        return f"spark://{self.host}:{self.master_port}"

    @property
    def web_ui(self) -> str:
        return f"http://{self.host}:{self.webui_port}"

    @property
    def connect_url(self) -> str | None:
        return f"sc://{self.host}:{self.connect_port}" if self.connect_port else None

    def pids(self) -> list[int]:
        return [p for p in (self.connect_pid, *self.worker_pids, self.master_pid) if p]


def spark_home() -> Path:
    """The pip-installed PySpark's directory, which holds ``bin/spark-class`` and ``jars/``."""
    try:
        import pyspark
    except ImportError:
        raise SetupError("PySpark is not installed: pip install pyspark") from None
    home = Path(pyspark.__file__).parent
    if not (home / "bin" / "spark-class").exists():
        raise SetupError(f"{home} has no bin/spark-class: PySpark's package is incomplete")
    return home


def machine_memory_mb() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024)


def parse_memory_mb(text: str) -> int:
    """``1g``, ``1536m``, ``2G`` -> megabytes; anything else is a clear error."""
    value = text.strip().lower()
    units = {"g": 1024, "m": 1}
    try:
        if value and value[-1] in units:
            return int(float(value[:-1]) * units[value[-1]])
        return int(value)
    except ValueError:
        raise SetupError(f"memory size {text!r}: expected e.g. 1g or 1536m") from None


class LocalSparkCluster(LocalServerState):
    """The cluster whose state lives in ``<cache>/spark-cluster``.

    ``workers``, ``worker_cores``, ``worker_memory_mb`` and ``connect`` give the shape of the
    cluster the next ``start`` launches; a running cluster is reused as it is.
    """

    kind = "Spark cluster"

    info_type = ClusterInfo

    def __init__(self, root: Path | None = None, *, workers: int = DEFAULT_WORKERS,
                 worker_cores: int | None = None, worker_memory_mb: int | None = None,
                 connect: bool = False):
        super().__init__(root or cache_dir() / "spark-cluster")
        if workers < 1:
            raise SetupError(f"a cluster needs at least one worker, not {workers}")
        self.workers = workers
        self.worker_cores = worker_cores or max(1, (os.cpu_count() or 1) // workers)
        self.worker_memory_mb = worker_memory_mb or max(MIN_WORKER_MEMORY_MB,
                                                        machine_memory_mb() // 2 // workers)
        self.connect = connect

    def alive_workers(self, info: ClusterInfo) -> int:
        """How many workers the master counts as alive (its web UI's JSON)."""
        try:
            with urllib.request.urlopen(f"{info.web_ui}/json/", timeout=5) as response:
                state = json.load(response)
        except (OSError, ValueError):
            return 0
        return sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")

    def connect_state(self, info: ClusterInfo) -> str | None:
        """The Spark Connect server's state: ``running``, or why not; None without one."""
        if not info.connect_pid:
            return None
        if not _is_process(info.connect_pid, CONNECT_CLASS):
            return f"not running (its process {info.connect_pid} has ended)"
        if not accepts_connections(info.host, info.connect_port):
            return f"starting or stuck: process {info.connect_pid} does not accept connections on {info.connect_port}"
        return "running"

    def leftovers(self, info: ClusterInfo | None = None) -> list[str]:
        """The recorded cluster's processes still alive (each as ``what pid``), running or not."""
        info = info or self._read_state()
        if info is None:
            return []
        named = [("master", info.master_pid), *((f"worker {i}", p) for i, p in enumerate(info.worker_pids)),
                 ("Spark Connect server", info.connect_pid)]
        return [f"{what} {pid}" for what, pid in named if pid and _group_alive(pid)]

    def stop(self) -> bool:
        """Stop every process of the recorded cluster, also what is left of a cluster whose master
        has ended (a Connect server, workers); return whether any was running."""
        with self._lock():
            info = self._read_state()
            if info is None or not self.leftovers(info):
                return False
            self._shutdown(info)
            return True

    # -- the flavour's hooks (the shared operations are in LocalServerState) ------------------

    def _created(self, info: ClusterInfo) -> bool:
        return False  # nothing persists between runs: every start launches afresh

    def _running(self, info: ClusterInfo) -> bool:
        return self._not_running_because(info) is None

    def _not_running_because(self, info: ClusterInfo) -> str | None:
        if not _is_process(info.master_pid, MASTER_CLASS):
            return f"its master (process {info.master_pid}) has ended"
        # A loaded machine may be slow to accept: a few tries before the port counts as closed.
        for _ in range(5):
            if accepts_connections(info.host, info.master_port):
                return None
            time.sleep(1)
        return f"its master does not accept connections on port {info.master_port}"

    def _create(self) -> ClusterInfo:
        leftover = self._read_state()
        if leftover is not None:  # a cluster half gone (its master died): end what is left
            import sys

            reason = self._not_running_because(leftover)
            if reason and any(_is_process(pid) for pid in leftover.pids()):
                print(f"the recorded Spark cluster is not running ({reason}): ending what is left of it",
                      file=sys.stderr)
            self._shutdown(leftover)
        home = spark_home()
        work, logs = self.root / "work", self.root / "logs"
        for directory in (work, logs):
            directory.mkdir(parents=True, exist_ok=True)
        return ClusterInfo(host=HOST, master_port=0, webui_port=0, master_pid=0, worker_pids=[],
                           worker_cores=self.worker_cores, worker_memory_mb=self.worker_memory_mb,
                           data_dir=str(work), log_dir=str(logs), spark_home=str(home))

    def _launch(self, info: ClusterInfo) -> ClusterInfo:
        master_port, webui_port = free_port(), free_port()
        logs = Path(info.log_dir)
        launched: list[int] = []
        try:
            master = self._daemon(info, MASTER_CLASS, ["--host", HOST, "--port", str(master_port),
                                                       "--webui-port", str(webui_port)], logs / "master.log")
            launched.append(master)
            _wait_for(lambda: accepts_connections(HOST, master_port), master, logs / "master.log", "master")
            url = f"spark://{HOST}:{master_port}"
            workers = []
            for index in range(self.workers):
                work = Path(info.data_dir) / f"worker-{index}"
                work.mkdir(parents=True, exist_ok=True)
                pid = self._daemon(info, WORKER_CLASS,
                                   ["--host", HOST, "--port", str(free_port()), "--webui-port", str(free_port()),
                                    "--cores", str(info.worker_cores), "--memory", f"{info.worker_memory_mb}m",
                                    "--work-dir", str(work), url], logs / f"worker-{index}.log")
                launched.append(pid)
                workers.append(pid)
            info = ClusterInfo(**{**_fields(info), "master_port": master_port, "webui_port": webui_port,
                                  "master_pid": master, "worker_pids": workers})
            self._write_state(info)  # from here on, stop finds every process
            _wait_for(lambda: self.alive_workers(info) >= self.workers, master, logs / "master.log",
                      f"{self.workers} workers to register")
            if self.connect:
                info = self._launch_connect(info)
        except BaseException:
            for pid in launched:
                _end_group(pid)
            raise
        return info

    def _launch_connect(self, info: ClusterInfo) -> ClusterInfo:
        """A Spark Connect server (the ``spark-connect`` jar PySpark ships) whose sessions run on
        the cluster, with the JDBC driver cbo finds (``cbo.engines.spark.find_jdbc_driver``)."""
        from cbo.catalog_types import SparkSettings
        from cbo.engines.spark import find_jdbc_driver

        port = free_port()
        log = Path(info.log_dir) / "connect.log"
        # The server's application holds half the cluster (cores, and half of each worker's
        # memory per executor), so that a session with a driver of its own runs beside it.
        cores = max(1, self.workers * info.worker_cores // 2)
        driver = find_jdbc_driver(SparkSettings())
        jars = ["--jars", ",".join(driver.jars)] if driver and driver.jars else []
        pid = self._daemon(info, "org.apache.spark.deploy.SparkSubmit",
                           ["--master", info.url, "--class", CONNECT_CLASS, "--name", "cbo Spark Connect", *jars,
                            "--conf", f"spark.cores.max={cores}",
                            "--conf", f"spark.executor.cores={max(1, cores // self.workers)}",
                            "--conf", f"spark.executor.memory={max(256, info.worker_memory_mb // 2)}m",
                            "--conf", f"spark.connect.grpc.binding.port={port}",
                            "--conf", f"spark.connect.grpc.binding.address={HOST}",
                            "--conf", f"spark.driver.host={HOST}", "--conf", f"spark.driver.bindAddress={HOST}",
                            "--conf", "spark.ui.enabled=false", "--conf", "spark.sql.session.timeZone=UTC"], log)
        info = ClusterInfo(**{**_fields(info), "connect_port": port, "connect_pid": pid})
        self._write_state(info)
        _wait_for(lambda: accepts_connections(HOST, port), pid, log, "Spark Connect server")
        return info

    def _shutdown(self, info: ClusterInfo) -> None:
        for pid in info.pids():  # the Connect server and workers before the master
            _end_group(pid)

    # -- internals ---------------------------------------------------------------------------

    def _daemon(self, info: ClusterInfo, main_class: str, arguments: list[str], log: Path) -> int:
        """Start ``spark-class main_class arguments`` detached (its own session, reparented to
        init, output to ``log``); return its process id, which becomes the JVM's (spark-class
        ends with ``exec java``)."""
        import subprocess

        env = dict(os.environ)
        env.update(SPARK_HOME=info.spark_home, SPARK_LOCAL_IP=HOST, SPARK_LOG_DIR=info.log_dir,
                   SPARK_WORKER_DIR=info.data_dir, SPARK_LOCAL_DIRS=info.data_dir,
                   SPARK_NO_DAEMONIZE="1",
                   # Applications' directories (jars copied per executor) go when the app ends.
                   SPARK_WORKER_OPTS="-Dspark.worker.cleanup.enabled=true -Dspark.worker.cleanup.appDataTtl=600")
        for key in ("PYSPARK_GATEWAY_PORT", "PYSPARK_GATEWAY_SECRET", "SPARK_CONF_DIR"):
            env.pop(key, None)  # a PySpark driver's variables would confuse the launched JVM
        launcher = str(Path(info.spark_home) / "bin" / "spark-class")
        # sh starts the daemon in the background and exits, so the daemon is nobody's child here
        # (no zombie once it ends) and setsid gives it a session and process group of its own.
        script = 'setsid "$@" </dev/null >>"$CBO_LOG" 2>&1 & echo $!'
        env["CBO_LOG"] = str(log)
        result = subprocess.run(["sh", "-c", script, "sh", launcher, main_class, *arguments], env=env,
                                capture_output=True, text=True, check=False, cwd=info.data_dir)
        try:
            return int(result.stdout.strip())
        except ValueError:
            raise SetupError(f"cannot launch {main_class}: {result.stderr.strip() or 'no process id'}") from None


def _fields(info: ClusterInfo) -> dict[str, Any]:
    from dataclasses import asdict

    return asdict(info)


def _is_process(pid: int, main_class: str | None = None) -> bool:
    """Whether ``pid`` is a live process (running ``main_class`` when given: a process id
    recorded long ago may belong to another program now)."""
    if pid <= 0:
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        status = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    if status.rsplit(")", 1)[-1].split()[0] == "Z":
        return False
    return main_class is None or main_class in cmdline


def _group_alive(pgid: int) -> bool:
    """Whether any live (not zombie) process is in process group ``pgid``."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def _end_group(pgid: int) -> None:
    """Stop a daemon and every process of its group (a worker's executors): SIGTERM, then
    SIGKILL after ``STOP_TIMEOUT_S``; return when none is left."""
    if not _group_alive(pgid):
        return
    for sig, wait in ((signal.SIGTERM, STOP_TIMEOUT_S), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not _group_alive(pgid):
                return
            time.sleep(0.2)
    raise SetupError(f"process group {pgid} of the local Spark cluster did not end")


def _wait_for(condition: Any, pid: int, log: Path, what: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if condition():
            return
        if not _is_process(pid):
            raise SourceUnreachable(f"the local Spark cluster's {what} did not start (log {log}): {tail(log)}")
        time.sleep(0.5)
    raise SourceUnreachable(f"timed out waiting for the local Spark cluster's {what} (log {log}): {tail(log)}")
