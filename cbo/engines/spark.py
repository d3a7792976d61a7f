"""Spark as cbo's execution engine: one shared session, catalog tables registered as views.

Sessions are expensive (about 9 s to start), so one is shared per process: the first caller's
settings win, later callers get the same session. The JDBC drivers are found in this order:
``$CBO_JDBC_JAR``, the catalog's ``[spark] jdbc_jars``, the jars Debian installs for the
connectors (``Connector.driver_jar``: PostgreSQL's, MariaDB's, SQLite's, those installed), then
Maven coordinates from ``[spark] jdbc_packages`` (resolved by Spark through
``spark.jars.packages`` on machines that reach Maven).

A JDBC source is read with its connector's URL and reader options (``cbo.connectors``: the
driver's class, MariaDB's URL as Spark's MySQL dialect reads it, a fetch size).

The session reports its start (10-20 s in which nothing else shows) through a ``step``
callback the caller gives (``cbo.app.progress.step`` for the command line): engines print
nothing themselves.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from cbo.catalog_types import Catalog, Source, SparkSettings, TableDef
from cbo.connectors import CONNECTORS, connector_of
from cbo.errors import CboError, SetupError, SourceUnreachable

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, DataFrameReader, SparkSession

    from cbo.cost.cluster import ClusterShape

DEBIAN_JDBC_JAR = Path("/usr/share/java/postgresql.jar")   # PostgreSQL's, the one every catalog may need
DEFAULT_LOCAL_DRIVER_MEMORY = "6g"

# A long step's progress: called with its title, a context manager around the step
# (``cbo.app.progress.step`` prints "title ..." and "title: done in 1.2 s").
Step = Callable[[str], AbstractContextManager[Any]]

LOG4J_CONFIG = Path(__file__).with_name("log4j2.properties")

# Settings cbo always applies: quiet console, UTC so dates mean the same in every engine.
BASE_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
}

# Lines the JVM prints on every start that tell a user nothing: Spark's launcher always adds
# --add-modules=jdk.incubator.vector, and the JVM then warns about it (no flag turns that off).
JVM_NOISE = ("WARNING: Using incubator modules",)

_session: SparkSession | None = None
_verbose = False


def set_verbose(verbose: bool) -> None:
    """Show Spark's own error log lines (``cbo --debug``); by default Spark's log is off, since
    every failure reaches the user as cbo's one-line error with its cause."""
    global _verbose
    _verbose = verbose


@dataclass(frozen=True)
class JdbcDriver:
    jars: tuple[str, ...] = ()
    packages: tuple[str, ...] = ()

    def describe(self) -> str:
        return ", ".join(self.jars + self.packages) or "none"


def find_jdbc_driver(settings: SparkSettings) -> JdbcDriver | None:
    """The PostgreSQL JDBC driver to give Spark, or None when there is none to be had."""
    from_env = [p for p in os.environ.get("CBO_JDBC_JAR", "").split(os.pathsep) if p]
    for jar in from_env:
        if not Path(jar).is_file():
            raise SetupError(f"CBO_JDBC_JAR names {jar}, which does not exist")
    if from_env:
        return JdbcDriver(jars=tuple(from_env))
    if settings.jdbc_jars:
        missing = [j for j in settings.jdbc_jars if not Path(j).is_file()]
        if missing:
            raise SetupError(f"[spark] jdbc_jars names {missing[0]}, which does not exist")
        return JdbcDriver(jars=settings.jdbc_jars)
    # Debian's jars and the catalog's Maven coordinates together: a machine may have one
    # driver installed and fetch the other.
    debian = tuple(str(c.driver_jar) for c in CONNECTORS if c.driver_jar is not None and c.driver_jar.is_file())
    if debian or settings.jdbc_packages:
        return JdbcDriver(jars=debian, packages=settings.jdbc_packages)
    return None


MISSING_DRIVER = (
    "PostgreSQL JDBC driver not found: install Debian's libpostgresql-jdbc-java "
    f"(gives {DEBIAN_JDBC_JAR}), or set CBO_JDBC_JAR=/path/to/postgresql.jar, or on a machine "
    "that reaches Maven add jdbc_packages = [\"org.postgresql:postgresql:42.7.4\"] to the catalog's [spark] section")


JVM_THREAD_STACK = "256m"


def spark_session(settings: SparkSettings | None = None, *, need_jdbc: bool = False,
                  step: Step = nullcontext) -> SparkSession:
    """The process's shared Spark session, created on first use from ``settings``; ``step``
    reports its start."""
    global _session
    settings = settings or SparkSettings()
    driver = find_jdbc_driver(settings)
    if _session is not None:
        if need_jdbc and not _session.conf.get("spark.jars", "") and not _session.conf.get("spark.jars.packages", ""):
            raise SetupError("the running Spark session was started without a JDBC driver; " + MISSING_DRIVER)
        return _session
    if settings.remote:
        _session = _connect_session(settings, step)
        return _session
    if need_jdbc and driver is None:
        raise SetupError(MISSING_DRIVER)
    os.environ.setdefault("PYSPARK_PYTHON", _python())
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(settings.master).appName("cbo")
    conf = dict(BASE_CONF)
    # The log level reaches log4j as a system property so that start-up is quiet too.
    logging_options = f"-Dlog4j.configurationFile=file:{LOG4J_CONFIG} -Dcbo.log.level={_log_level()}"
    # Spark's SQL parser recurses per level of nesting, on the JVM thread that serves the Python
    # call: a plan at cbo's limits (cbo.limits) renders nested far past what a thread's default
    # 1 MB of stack parses (FAILED_TO_PARSE_TOO_COMPLEX). Stacks are reserved, touched as used.
    logging_options += f" -Xss{JVM_THREAD_STACK}"
    conf["spark.driver.extraJavaOptions"] = logging_options
    if settings.master.startswith("local"):
        conf["spark.driver.memory"] = settings.driver_memory or DEFAULT_LOCAL_DRIVER_MEMORY
    elif settings.driver_memory:
        conf["spark.driver.memory"] = settings.driver_memory
    if settings.executor_memory:
        conf["spark.executor.memory"] = settings.executor_memory
    conf.update(_driver_address(settings.master))
    if driver and driver.jars:
        conf["spark.jars"] = ",".join(driver.jars)
    if driver and driver.packages:
        conf["spark.jars.packages"] = ",".join(driver.packages)
    conf.update(settings.conf)
    if settings.conf.get("spark.driver.extraJavaOptions"):  # the catalog's options beside cbo's logging
        conf["spark.driver.extraJavaOptions"] = f"{logging_options} {settings.conf['spark.driver.extraJavaOptions']}"
    for key, value in conf.items():
        builder = builder.config(key, value)
    _quiet_python_loggers()
    try:
        with step(f"starting Spark ({settings.master})"):  # 10-20 s in which nothing else shows
            _launch_gateway(settings.master, conf)
            _session = builder.getOrCreate()
    except Exception as exc:  # Java missing, bad master URL, ...: say so in one line
        raise SetupError(f"cannot start Spark (master {settings.master}): {str(exc).strip().splitlines()[0]}") from None
    _session.sparkContext.setLogLevel(_log_level())
    return _session


CONNECT_MISSING = "Spark Connect needs PySpark's connect extra: pip install 'pyspark[connect]'"


def _connect_session(settings: SparkSettings, step: Step) -> SparkSession:
    """A session on a Spark Connect server (``[spark] remote``).

    The server owns the driver, so the driver's settings (memory, jars, master) are the server's;
    only SQL settings (``spark.sql.*`` in ``[spark.conf]``, and cbo's time zone) are set, per
    session. The JDBC driver must be on the server (``cbo spark start --connect`` passes it)."""
    try:
        from pyspark.sql.connect.utils import check_dependencies

        check_dependencies()
    except ImportError:
        raise SetupError(CONNECT_MISSING) from None
    from pyspark.sql import SparkSession

    from cbo.connectors.localserver import accepts_connections

    # The client retries an unreachable server for minutes; a closed port is known at once.
    host, port = _connect_address(str(settings.remote))
    if not accepts_connections(host, port):
        raise SourceUnreachable(f"Spark Connect at {settings.remote}: nothing accepts connections on {host}:{port}")
    try:
        with step(f"connecting to Spark ({settings.remote})"):
            session = SparkSession.builder.remote(str(settings.remote)).getOrCreate()
            sql_conf = {"spark.sql.session.timeZone": "UTC",
                        **{k: v for k, v in settings.conf.items() if k.startswith("spark.sql.")}}
            for key, value in sql_conf.items():
                session.conf.set(key, value)
    except Exception as exc:  # unreachable server, bad URL: one line
        raise SetupError(f"cannot reach Spark Connect at {settings.remote}: {_first_line(str(exc))}") from None
    return session


def _connect_address(url: str) -> tuple[str, int]:
    """``sc://host:port/;options`` -> (host, port); Spark Connect's default port is 15002."""
    from urllib.parse import urlparse

    parsed = urlparse(url.split(";", 1)[0])
    try:
        return parsed.hostname or "localhost", parsed.port or 15002
    except ValueError:
        raise SetupError(f"[spark] remote {url!r}: not a Spark Connect URL (sc://host:port)") from None


def is_connect(spark: SparkSession) -> bool:
    """Whether ``spark`` is a Spark Connect session (no SparkContext, no JVM in this process)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def default_parallelism(spark: SparkSession) -> int:
    """The session's default parallelism: the SparkContext's (executors × cores on a cluster),
    or on Spark Connect, which has no SparkContext, ``spark.default.parallelism`` when the server
    sets it, else this machine's cores."""
    if not is_connect(spark):
        return int(spark.sparkContext.defaultParallelism)
    value = spark.conf.get("spark.default.parallelism", None)
    return int(value) if value else os.cpu_count() or 2


def cluster_shape(spark: SparkSession, wait_s: float = 30.0) -> ClusterShape | None:
    """The shape of the cluster ``spark`` runs on (``cbo.cost.cluster``), or None in local mode.

    With a SparkContext: the executors registered with the driver (its block managers, less its
    own), waiting up to ``wait_s`` for the first and then until their count holds still for two
    seconds (a standalone cluster's executors register a few seconds after the session starts,
    and Spark does not wait for them unless ``spark.cores.max`` is set); cores each from
    ``spark.executor.cores``, else the default parallelism (the registered cores) shared out.
    Over Spark Connect there is no SparkContext: the server's settings say it
    (``spark.executor.instances``, else ``spark.cores.max`` / ``spark.executor.cores``)."""
    from cbo.cost.cluster import ClusterShape

    def setting(key: str) -> str | None:
        try:
            value = spark.conf.get(key, None)
        except Exception:  # a key the server does not know
            return None
        return str(value) if value not in (None, "") else None

    partitions = int(setting("spark.sql.shuffle.partitions") or 200)
    threshold = parse_bytes(setting("spark.sql.autoBroadcastJoinThreshold") or "10MB")
    executor_cores = int(setting("spark.executor.cores") or 0)
    if is_connect(spark):
        master = setting("spark.master") or ""
        if master.startswith("local"):
            return None
        instances, most = int(setting("spark.executor.instances") or 0), int(setting("spark.cores.max") or 0)
        cores = executor_cores or (most // instances if most and instances else 0) or most or default_parallelism(spark)
        executors = instances or (most // cores if most else 1)
        return ClusterShape(max(1, executors), max(1, cores), partitions, threshold, master)
    context = spark.sparkContext
    assert context.master is not None   # a started context has one
    if context.master.startswith("local"):
        return None
    status = context._jsc.sc().getExecutorMemoryStatus
    deadline, count, since = time.monotonic() + wait_s, -1, time.monotonic()
    while time.monotonic() < deadline:
        now = status().size() - 1
        if now != count:
            count, since = now, time.monotonic()
        elif count > 0 and time.monotonic() - since >= 2.0:
            break
        time.sleep(0.25)
    executors = max(1, count)
    cores = executor_cores or max(1, int(context.defaultParallelism) // executors)
    return ClusterShape(executors, cores, partitions, threshold, context.master)


def parse_bytes(text: str) -> int:
    """Spark's byte strings (``10MB``, ``10485760b``, ``1g``, ``-1``) in bytes; units are binary."""
    import re

    found = re.fullmatch(r"\s*(-?\d+(?:\.\d+)?)\s*([kmgtp]?)i?b?\s*", text.lower())
    if not found:
        raise SetupError(f"not a size in bytes: {text!r}")
    power = " kmgtp".index(found.group(2) or " ")
    return int(float(found.group(1)) * 1024**power)


def _driver_address(master: str) -> dict[str, str]:
    """Where executors reach the driver. On a cluster on this machine's loopback (``cbo spark
    start``), the driver listens on the loopback too: the host name's address may not be routable
    (or may name another interface that a firewall closes), and the executors are local anyway."""
    if not master.startswith("spark://"):
        return {}
    hosts = [part.rsplit(":", 1)[0] for part in master[len("spark://"):].split(",")]
    if all(host in ("127.0.0.1", "localhost") for host in hosts):
        return {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}
    return {}


def _log_level() -> str:
    return "ERROR" if _verbose else "OFF"


def _quiet_python_loggers() -> None:
    """PySpark logs every SQL error it raises, as JSON with the Java stack, to stderr; the error
    itself reaches cbo, which reports it in one line."""
    import logging

    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        logging.getLogger(name).disabled = not _verbose


def _launch_gateway(master: str, conf: dict[str, str]) -> None:
    """Start Spark's JVM as PySpark would, but with its stderr passed through a filter that drops
    the JVM's start-up noise (``JVM_NOISE``); everything else still reaches stderr."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None or "PYSPARK_GATEWAY_PORT" in os.environ:
        return  # a JVM already runs (an earlier session of this process, or a PySpark shell)
    spark_conf = SparkConf(loadDefaults=False).setMaster(master).setAppName("cbo")
    for key, value in conf.items():
        spark_conf.set(key, value)
    gateway = launch_gateway(spark_conf, popen_kwargs={"stderr": subprocess.PIPE})
    proc = getattr(gateway, "proc", None)
    if proc is not None and proc.stderr is not None:
        threading.Thread(target=_forward_stderr, args=(proc.stderr,), name="cbo-jvm-stderr", daemon=True).start()
    SparkContext._gateway = gateway
    SparkContext._jvm = gateway.jvm


def _forward_stderr(stream: IO[bytes]) -> None:
    # To file descriptor 2 itself, as the JVM wrote before: sys.stderr may be replaced (pytest).
    for line in iter(stream.readline, b""):
        if not line.startswith(tuple(n.encode() for n in JVM_NOISE)):
            try:
                os.write(2, line)
            except OSError:
                return


def current_session() -> SparkSession | None:
    """The shared session if it has started (progress reporting must not start one)."""
    return _session


def stop_session() -> None:
    global _session
    if _session is not None:
        _session.stop()
        _session = None


def _python() -> str:
    import sys

    return sys.executable


def remote_table_sql(source: Source, table: TableDef) -> str:
    """The remote table's name, quoted for the source's dialect by sqlglot."""
    connector = connector_of(source)
    return connector.render(connector.remote_table(source, table))


def read_table(spark: SparkSession, catalog: Catalog, table: TableDef) -> DataFrame:
    """A DataFrame over one catalog table, wherever it lives."""
    source = catalog.source_of(table)
    if source.type == "spark":
        if table.spark_table:
            return spark.table(table.spark_table)
        assert table.path is not None
        if not table.path.exists():
            raise CboError(f"table '{table.qualified_name}': {table.path} does not exist")
        return spark.read.format(table.format).load(str(table.path))
    options = connector_of(source).table_options(source, table)
    return jdbc_reader(spark, source).option("dbtable", remote_table_sql(source, table)).options(**options).load()


def jdbc_reader(spark: SparkSession, source: Source) -> DataFrameReader:
    """Spark's JDBC reader for a source: URL, driver and credentials (the password read now,
    kept out of every rendered statement); the caller says what to read."""
    connector = connector_of(source)
    url = source.jdbc_url()
    reader = spark.read.format("jdbc").option("url", connector.spark_url(url)).options(**connector.spark_options(url))
    user = source.login_user()
    if user:
        reader = reader.option("user", user)
    password = source.password()
    if password is not None:
        reader = reader.option("password", password)
    return reader


def register_catalog(spark: SparkSession, catalog: Catalog) -> None:
    """Register every table of the catalog as a temporary view named after the table."""
    for table in catalog.tables():
        try:
            read_table(spark, catalog, table).createOrReplaceTempView(table.name)
        except CboError:
            raise
        except Exception as exc:
            raise SourceUnreachable(f"cannot read table '{table.qualified_name}': {_java_reason(exc)}") from None


def spark_failure(exc: BaseException) -> str | None:
    """The cause of a failed Spark call in one line, or None when ``exc`` is not from Spark.

    A failure inside a job reaches Python as a Py4J error whose message is only "An error
    occurred while calling o59.collectToPython"; the cause is down the Java exception's cause
    chain (e.g. an ExecutionException around a SparkRuntimeException). Spark's own errors carry
    a condition such as ``SCALAR_SUBQUERY_TOO_MANY_ROWS`` and a message; the innermost one is
    the cause. PySpark's converted exceptions (``CapturedException``) carry the same."""
    java = getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)
    if java is None:
        if hasattr(exc, "getCondition") and exc.getCondition():
            return _spark_message(exc.getCondition(), exc.getMessage())  # type: ignore[attr-defined]
        return None
    chain: list[Any] = []
    cause = java
    while cause is not None and len(chain) < 32:
        chain.append(cause)
        try:
            cause = cause.getCause()
        except Exception:
            break
    for throwable in reversed(chain):
        condition = _java_call(throwable, "getCondition")
        if condition:
            return _spark_message(condition, _java_call(throwable, "getMessage") or "")
    innermost = chain[-1]
    message = _java_call(innermost, "getMessage")
    name = _java_call(innermost.getClass(), "getSimpleName") or "error"
    return f"{name}: {_first_line(message)}" if message else name


def _java_call(target: Any, method: str) -> Any:
    try:
        return getattr(target, method)()
    except Exception:  # not a SparkThrowable, or the JVM is gone
        return None


def _spark_message(condition: str, message: str) -> str:
    """``[COND] text SQLSTATE: X`` -> ``text (COND)``; an error raised by the plan itself
    (``raise_error``, e.g. a scalar subquery with two rows) is just its text."""
    text = _first_line(message)
    prefix = f"[{condition}]"
    if text.startswith(prefix):
        text = text[len(prefix):].strip()
    text = text.split(" SQLSTATE:")[0].strip()
    return text if condition == "USER_RAISED_EXCEPTION" else f"{text} ({condition})"


def _first_line(text: str) -> str:
    for line in str(text).strip().splitlines():
        if line.strip():
            return line.strip()[:300]
    return ""


def _java_reason(exc: BaseException) -> str:
    text = str(exc).strip()
    for line in text.splitlines():
        if "PSQLException" in line or "Connection refused" in line:
            return line.split(":", 1)[-1].strip()
    return text.splitlines()[0] if text else type(exc).__name__


def run_sql(spark: SparkSession, text: str) -> tuple[list[str], list[tuple[Any, ...]], float]:
    """Run SQL on Spark; return column names, rows and elapsed seconds."""
    started = time.perf_counter()
    frame = spark.sql(text)
    rows = [tuple(row) for row in frame.collect()]
    return list(frame.columns), rows, time.perf_counter() - started


def optimizer_settings(spark: SparkSession) -> dict[str, str]:
    """The Spark settings that decide how Spark plans, for benchmark reports."""
    keys = ["spark.sql.adaptive.enabled", "spark.sql.cbo.enabled", "spark.sql.cbo.joinReorder.enabled",
            "spark.sql.autoBroadcastJoinThreshold", "spark.sql.shuffle.partitions",
            "spark.sql.ansi.enabled", "spark.sql.statistics.histogram.enabled", "spark.driver.memory",
            "spark.master"]
    settings: dict[str, str] = {}
    for key in keys:
        try:
            settings[key] = spark.conf.get(key) or "(unset)"  # without a default: Spark's own default value
        except Exception:  # a key nobody set and that has no SQL default
            settings[key] = "(unset)"
    return settings
