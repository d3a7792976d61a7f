"""The catalog: named data sources, their tables and declared keys, and Spark settings.

A catalog is a TOML file::

    [spark]
    master = "local[*]"            # or spark://host:7077, yarn, k8s://...
    driver_memory = "4g"
    [spark.conf]
    "spark.sql.shuffle.partitions" = "8"

    [sources.lake]
    type = "spark"
    [sources.lake.tables.lineitem]
    path = "data/lineitem.parquet"          # relative to the catalog file; or table = "db.t"
    primary_key = ["l_orderkey", "l_linenumber"]
    foreign_keys = [{ columns = ["l_orderkey"], references = "orders", referenced_columns = ["o_orderkey"] }]

    [sources.pg]
    type = "jdbc"
    url = "jdbc:postgresql://127.0.0.1:5432/cbo"
    user = "cbo"
    password_env = "CBO_PG_PASSWORD"        # or password_file = "/path/to/file"
    schema = "tpch"
    [sources.pg.tables.customer]
    parquet_copy = "data/customer.parquet"  # optional: lets DuckDB answer for this table

    [sources.local]
    type = "jdbc"
    local_server = true                     # cbo's local PostgreSQL (``cbo postgres start``)
    schema = "tpch_sf0_1"

    [sources.maria]
    type = "jdbc"
    url = "jdbc:mariadb://127.0.0.1:3306/tpch"   # MariaDB: the "mysql" dialect; schema = its database
    user = "cbo"
    password_env = "CBO_MARIADB_PASSWORD"
    [sources.maria.pushdown]                     # optional: what cbo may push into this source
    disable = ["like", "left_join"]              # beyond the dialect's capabilities (cbo.sources.capabilities)
    enable = []

``local_server`` names cbo's own local server instead of a URL: ``true`` for the server of the
cache directory in use, or the path of a server's state directory (``<cache>/postgres``, as
``cbo datagen`` writes). With ``dialect = "mysql"`` it is cbo's local MariaDB (``cbo mariadb
start``, state in ``<cache>/mariadb``). Its address, user and password file are read from the server's state
when a connection is made, so a catalog keeps working when the server restarts on another
port. Older catalogs that give the local server's URL and its password file are read the same
way.

Passwords are never written in a catalog: only the name of an environment variable or a file
that holds one. Every validation error names the file, the line and the key at fault.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cbo.errors import CatalogError, SourceUnreachable

SOURCE_TYPES = ("spark", "jdbc")
DIALECT_BY_JDBC_SUBPROTOCOL = {"postgresql": "postgres", "mysql": "mysql", "mariadb": "mysql", "db2": "db2",
                               "sqlserver": "tsql", "oracle": "oracle", "duckdb": "duckdb"}


@dataclass(frozen=True)
class ForeignKey:
    columns: tuple[str, ...]
    references: str
    referenced_columns: tuple[str, ...]


@dataclass(frozen=True)
class TableDef:
    """One table of a source, with the keys declared for it (or read from the database)."""

    name: str
    source: str
    path: Path | None = None          # spark sources: a file or directory
    format: str = "parquet"
    spark_table: str | None = None    # spark sources: a table of Spark's catalog
    remote_name: str | None = None    # jdbc sources: the table's name in the database
    parquet_copy: Path | None = None  # jdbc sources: an optional Parquet copy for DuckDB
    primary_key: tuple[str, ...] = ()
    unique_keys: tuple[tuple[str, ...], ...] = ()
    foreign_keys: tuple[ForeignKey, ...] = ()

    @property
    def qualified_name(self) -> str:
        return f"{self.source}.{self.name}"


@dataclass(frozen=True)
class Source:
    name: str
    type: str
    tables: dict[str, TableDef]
    url: str | None = None
    user: str | None = None
    password_env: str | None = None
    password_file: Path | None = None
    dialect: str | None = None
    schema: str | None = None
    where: str = ""  # "file:line" of the source's definition, for error messages
    local_server: Path | None = None  # jdbc sources: cbo's local server, by its state directory
    # jdbc sources: capabilities taken from / added to the dialect's ([sources.NAME.pushdown],
    # ``cbo.sources.capabilities``)
    pushdown_disable: tuple[str, ...] = ()
    pushdown_enable: tuple[str, ...] = ()

    @property
    def server_kind(self) -> str:
        """The kind of cbo's local server: "MariaDB" for the mysql dialect, else "PostgreSQL"."""
        return "MariaDB" if self.dialect == "mysql" else "PostgreSQL"

    # A local server's address is looked up at each use, never kept: it changes when the
    # server restarts on another port.

    def jdbc_url(self) -> str:
        """The JDBC URL to connect to now (for a local server: where it runs now)."""
        if self.local_server is not None:
            return self._local().jdbc_url
        assert self.url is not None
        return self.url

    def login_user(self) -> str | None:
        if self.local_server is not None:
            return self._local().user
        return self.user

    def location(self) -> str:
        """Where the source is, for messages (never with a password)."""
        if self.local_server is not None:
            return f"cbo's local {self.server_kind} ({self.local_server})"
        from cbo.engines.postgres import redact

        return redact(self.url) if self.url else "(no url)"

    def _local(self) -> Any:
        """The running local server's state, or SourceUnreachable saying how to start it."""
        import socket

        from cbo.paths import cache_dir
        from cbo.sources.localmariadb import LocalMariaDB
        from cbo.sources.localpg import LocalPostgres

        assert self.local_server is not None
        mariadb = self.server_kind == "MariaDB"
        info = (LocalMariaDB if mariadb else LocalPostgres)(self.local_server).state()
        running = False
        if info is not None:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                sock.settimeout(2)
                running = sock.connect_ex((info.host, info.port)) == 0
        if not running:
            command = "cbo mariadb start" if mariadb else "cbo postgres start"
            default = cache_dir() / ("mariadb" if mariadb else "postgres")
            if self.local_server.resolve() != default.resolve():
                command = f"CBO_CACHE_DIR={self.local_server.parent} {command}"
            state = "is not running" if info is not None else "has not been created"
            raise SourceUnreachable(f"source '{self.name}' is cbo's local {self.server_kind} ({self.local_server}), "
                                    f"which {state}: start it with `{command}`")
        return info

    def password(self) -> str | None:
        """The password, read now from the environment or the password file."""
        if self.local_server is not None:
            return self._local().password()
        if self.password_env:
            value = os.environ.get(self.password_env)
            if value is None:
                raise CatalogError(
                    f"{self.where}: source '{self.name}' takes its password from the environment "
                    f"variable {self.password_env}, which is not set")
            return value
        if self.password_file:
            try:
                return self.password_file.read_text().strip()
            except OSError as exc:
                raise CatalogError(
                    f"{self.where}: source '{self.name}': cannot read password_file "
                    f"{self.password_file}: {exc.strerror}") from None
        return None

    def remote_table(self, table: TableDef) -> str:
        """The table as the remote database names it, schema-qualified when a schema is set."""
        name = table.remote_name or table.name
        return f"{self.schema}.{name}" if self.schema else name


@dataclass(frozen=True)
class SparkSettings:
    master: str = "local[*]"
    driver_memory: str | None = None
    executor_memory: str | None = None
    jdbc_jars: tuple[str, ...] = ()
    jdbc_packages: tuple[str, ...] = ()
    conf: dict[str, str] = field(default_factory=dict)
    remote: str | None = None   # a Spark Connect server (sc://host:port): plans run there, not in a local driver


@dataclass(frozen=True)
class Catalog:
    sources: dict[str, Source]
    spark: SparkSettings = field(default_factory=SparkSettings)
    path: Path | None = None

    def tables(self) -> Iterable[TableDef]:
        for source in self.sources.values():
            yield from source.tables.values()

    def table(self, name: str) -> TableDef:
        """Look a table up by ``name`` or ``source.name``; ambiguous or unknown names are errors."""
        if "." in name:
            source_name, table_name = name.split(".", 1)
            source = self.sources.get(source_name)
            if source and table_name in source.tables:
                return source.tables[table_name]
        matches = [t for t in self.tables() if t.name == name]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            names = ", ".join(t.qualified_name for t in matches)
            raise CatalogError(f"table '{name}' is ambiguous: it exists as {names}")
        known = sorted(t.name for t in self.tables())
        raise CatalogError(f"unknown table '{name}'{_closest(name, known)}")

    def source_of(self, table: TableDef) -> Source:
        return self.sources[table.source]

    def jdbc_sources(self) -> list[Source]:
        return [s for s in self.sources.values() if s.type == "jdbc"]


def _closest(name: str, candidates: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(name, candidates, n=3)
    return f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""


# --------------------------------------------------------------------------------------------
# Loading and validation


def load_catalog(path: str | os.PathLike[str]) -> Catalog:
    """Read and validate a catalog file; raise :class:`CatalogError` naming file, line and key."""
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise CatalogError(f"catalog file not found: {path}") from None
    except OSError as exc:
        raise CatalogError(f"cannot read catalog file {path}: {exc.strerror}") from None
    return parse_catalog(text, path)


def parse_catalog(text: str, path: Path) -> Catalog:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib reports "... (at line L, column C)"; show it in the file:line form.
        match = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        where = f"{path}:{match.group(1)}:{match.group(2)}" if match else str(path)
        raise CatalogError(f"{where}: invalid TOML: {message}") from None
    return _Validator(text, path).catalog(data)


class _Validator:
    """Turns parsed TOML into a :class:`Catalog`, locating every complaint in the source text."""

    def __init__(self, text: str, path: Path):
        self.path = path
        self.base = path.parent
        self.lines = _key_lines(text)

    def fail(self, key_path: tuple[str, ...], message: str) -> CatalogError:
        line = _locate(self.lines, key_path)
        where = f"{self.path}:{line}" if line else str(self.path)
        dotted = ".".join(key_path)
        return CatalogError(f"{where}: {dotted}: {message}" if dotted else f"{where}: {message}")

    def where(self, key_path: tuple[str, ...]) -> str:
        line = _locate(self.lines, key_path)
        return f"{self.path}:{line}" if line else str(self.path)

    # -- helpers on values ---------------------------------------------------------------------

    def check_keys(self, at: tuple[str, ...], table: dict[str, Any], allowed: Iterable[str]) -> None:
        allowed = list(allowed)
        for key in table:
            if key not in allowed:
                hint = _closest(key, allowed) or f" (expected one of: {', '.join(allowed)})"
                raise self.fail(at + (key,), f"unknown key '{key}'{hint}")

    def string(self, at: tuple[str, ...], value: Any) -> str:
        if not isinstance(value, str) or not value:
            raise self.fail(at, f"expected a non-empty string, got {value!r}")
        return value

    def table_of(self, at: tuple[str, ...], value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(at, f"expected a table, got {value!r}")
        return value

    def names(self, at: tuple[str, ...], value: Any) -> tuple[str, ...]:
        if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
            raise self.fail(at, f"expected a non-empty list of column names, got {value!r}")
        return tuple(value)

    def file_path(self, value: str) -> Path:
        candidate = Path(value).expanduser()
        return candidate if candidate.is_absolute() else (self.base / candidate).resolve()

    # -- the document --------------------------------------------------------------------------

    def catalog(self, data: dict[str, Any]) -> Catalog:
        self.check_keys((), data, ["spark", "sources"])
        spark = self.spark(self.table_of(("spark",), data.get("spark", {})))
        if "sources" not in data:
            raise self.fail((), "no [sources] defined: a catalog needs at least one source")
        sources_table = self.table_of(("sources",), data["sources"])
        if not sources_table:
            raise self.fail(("sources",), "no sources defined")
        sources = {name: self.source(name, self.table_of(("sources", name), body))
                   for name, body in sources_table.items()}
        catalog = Catalog(sources=sources, spark=spark, path=self.path)
        self.check_foreign_keys(catalog)
        return catalog

    def spark(self, body: dict[str, Any]) -> SparkSettings:
        at = ("spark",)
        self.check_keys(at, body, ["master", "remote", "driver_memory", "executor_memory", "jdbc_jars",
                                   "jdbc_packages", "conf"])
        remote = body.get("remote") and self.string(at + ("remote",), body["remote"])
        if remote and not remote.startswith("sc://"):
            raise self.fail(at + ("remote",), f"expected a Spark Connect URL (sc://host:port), got {remote!r}")
        if remote and "master" in body:
            raise self.fail(at + ("remote",), "give master (a driver in this process) or remote (Spark Connect), "
                            "not both")
        conf = self.table_of(at + ("conf",), body.get("conf", {}))
        for key, value in conf.items():
            if not isinstance(value, (str, int, float, bool)):
                raise self.fail(at + ("conf", key), f"expected a string, number or boolean, got {value!r}")
        lists = {}
        for key in ("jdbc_jars", "jdbc_packages"):
            value = body.get(key, [])
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise self.fail(at + (key,), f"expected a list of strings, got {value!r}")
            lists[key] = tuple(str(self.file_path(v)) if key == "jdbc_jars" else v for v in value)
        return SparkSettings(
            master=self.string(at + ("master",), body.get("master", "local[*]")),
            driver_memory=body.get("driver_memory") and self.string(at + ("driver_memory",), body["driver_memory"]),
            executor_memory=(body.get("executor_memory")
                             and self.string(at + ("executor_memory",), body["executor_memory"])),
            conf={k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in conf.items()},
            remote=remote or None,
            **lists,
        )

    def source(self, name: str, body: dict[str, Any]) -> Source:
        at = ("sources", name)
        if "type" not in body:
            raise self.fail(at, f"source '{name}' has no type (expected one of: {', '.join(SOURCE_TYPES)})")
        kind = body["type"]
        if kind not in SOURCE_TYPES:
            raise self.fail(at + ("type",),
                            f"unknown source type {kind!r} (expected one of: {', '.join(SOURCE_TYPES)})")
        if "password" in body:
            raise self.fail(at + ("password",), "passwords are not stored in catalog files; "
                            "name an environment variable with password_env or a file with password_file")
        if kind == "spark":
            self.check_keys(at, body, ["type", "tables"])
            extra: dict[str, Any] = {}
        else:
            self.check_keys(at, body, ["type", "url", "local_server", "user", "password_env", "password_file",
                                       "dialect", "schema", "tables", "pushdown"])
            extra = self.jdbc_settings(at, body)
            extra.update(self.pushdown(at + ("pushdown",), body.get("pushdown", {})))
        tables_body = self.table_of(at + ("tables",), body.get("tables", {}))
        if not tables_body:
            raise self.fail(at, f"source '{name}' lists no tables (add [sources.{name}.tables.NAME])")
        tables = {table: self.table(name, kind, table, self.table_of(at + ("tables", table), tbody))
                  for table, tbody in tables_body.items()}
        return Source(name=name, type=kind, tables=tables, where=self.where(at), **extra)

    def jdbc_settings(self, at: tuple[str, ...], body: dict[str, Any]) -> dict[str, Any]:
        if "local_server" in body:
            return self.local_server_settings(at, body)
        if "url" not in body:
            raise self.fail(at, "a jdbc source needs a url, e.g. url = \"jdbc:postgresql://host:5432/db\", "
                            "or local_server = true for cbo's local PostgreSQL")
        url = self.string(at + ("url",), body["url"])
        match = re.match(r"jdbc:([a-z0-9]+):", url)
        if not match:
            raise self.fail(at + ("url",), f"not a JDBC URL: {url!r} (expected jdbc:SUBPROTOCOL://...)")
        if "password_env" in body and "password_file" in body:
            raise self.fail(at + ("password_file",), "give password_env or password_file, not both")
        dialect = body.get("dialect") or DIALECT_BY_JDBC_SUBPROTOCOL.get(match.group(1))
        if dialect is None:
            raise self.fail(at + ("url",), f"cannot infer the SQL dialect of {match.group(1)!r}: set dialect = \"...\"")
        password_file = body.get("password_file")
        legacy = self.legacy_local_server(url, password_file)
        if legacy is not None:
            return dict(local_server=legacy, dialect="postgres",
                        schema=body.get("schema") and self.string(at + ("schema",), body["schema"]))
        return dict(
            url=url,
            user=body.get("user") and self.string(at + ("user",), body["user"]),
            password_env=body.get("password_env") and self.string(at + ("password_env",), body["password_env"]),
            password_file=(self.file_path(self.string(at + ("password_file",), password_file))
                           if password_file else None),
            dialect=self.string(at + ("dialect",), dialect),
            schema=body.get("schema") and self.string(at + ("schema",), body["schema"]),
        )

    def pushdown(self, at: tuple[str, ...], value: Any) -> dict[str, tuple[str, ...]]:
        """``[sources.NAME.pushdown]``: ``disable`` / ``enable``, lists of capability names
        (``cbo.sources.capabilities.NAMES``) taken from or added to the dialect's."""
        from cbo.sources.capabilities import NAMES

        body = self.table_of(at, value)
        self.check_keys(at, body, ["disable", "enable"])
        found: dict[str, tuple[str, ...]] = {}
        for key in ("disable", "enable"):
            names = body.get(key, [])
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise self.fail(at + (key,), f"expected a list of capability names, got {names!r}")
            for name in names:
                if name not in NAMES:
                    hint = _closest(name, list(NAMES)) or " (see cbo.sources.capabilities for the names)"
                    raise self.fail(at + (key,), f"unknown capability {name!r}{hint}")
            found[f"pushdown_{key}"] = tuple(names)
        both = set(found.get("pushdown_disable", ())) & set(found.get("pushdown_enable", ()))
        if both:
            raise self.fail(at, f"capability {sorted(both)[0]!r} is both disabled and enabled")
        return found

    def local_server_settings(self, at: tuple[str, ...], body: dict[str, Any]) -> dict[str, Any]:
        # The server's state says where it runs and how to log in: a URL or credentials given
        # beside it would be ignored, so they are refused.
        for key in ("url", "user", "password_env", "password_file"):
            if key in body:
                raise self.fail(at + (key,), f"{key} cannot be given with local_server: the local server's "
                                "address and credentials come from its state")
        value = body["local_server"]
        dialect = body.get("dialect", "postgres")
        if dialect not in ("postgres", "mysql"):
            raise self.fail(at + ("dialect",), "cbo's local servers are PostgreSQL (dialect \"postgres\") and "
                            f"MariaDB (dialect \"mysql\"), not {dialect!r}")
        if value is True:
            from cbo.paths import cache_dir

            server = cache_dir() / ("mariadb" if dialect == "mysql" else "postgres")
        elif isinstance(value, str) and value:
            server = self.file_path(value)
        else:
            raise self.fail(at + ("local_server",), "expected true (the server of the cache directory) or the "
                            f"path of a server's state directory such as \"~/.cache/cbo/postgres\", got {value!r}")
        return dict(local_server=server, dialect=dialect,
                    schema=body.get("schema") and self.string(at + ("schema",), body["schema"]))

    def legacy_local_server(self, url: str, password_file: Any) -> Path | None:
        """The local server's state directory when an older catalog names it by URL and password file.

        Catalogs written before ``local_server`` existed carry the server's port, which changes
        when it restarts; its password file sits in the state directory beside ``server.json``.
        """
        if not isinstance(password_file, str) or not password_file:
            return None
        directory = self.file_path(password_file).parent
        host = re.match(r"jdbc:postgresql://([^:/]+)", url)
        if host and host.group(1) in ("127.0.0.1", "localhost") and (directory / "server.json").is_file():
            return directory
        return None

    def table(self, source: str, kind: str, name: str, body: dict[str, Any]) -> TableDef:
        at = ("sources", source, "tables", name)
        key_fields = ["primary_key", "unique_keys", "foreign_keys"]
        location: dict[str, Any]
        if kind == "spark":
            self.check_keys(at, body, ["path", "table", "format", *key_fields])
            if ("path" in body) == ("table" in body):
                raise self.fail(at, f"table '{name}' needs exactly one of path (files) "
                                "or table (a Spark catalog table)")
            location = dict(
                path=self.file_path(self.string(at + ("path",), body["path"])) if "path" in body else None,
                spark_table=self.string(at + ("table",), body["table"]) if "table" in body else None,
                format=self.string(at + ("format",), body.get("format", "parquet")),
            )
        else:
            self.check_keys(at, body, ["remote_name", "parquet_copy", *key_fields])
            copy = body.get("parquet_copy")
            location = dict(
                remote_name=body.get("remote_name") and self.string(at + ("remote_name",), body["remote_name"]),
                parquet_copy=self.file_path(self.string(at + ("parquet_copy",), copy)) if copy else None,
            )
        primary = self.names(at + ("primary_key",), body["primary_key"]) if "primary_key" in body else ()
        uniques = body.get("unique_keys", [])
        if not isinstance(uniques, list):
            raise self.fail(at + ("unique_keys",), f"expected a list of column lists, got {uniques!r}")
        foreign = body.get("foreign_keys", [])
        if not isinstance(foreign, list):
            raise self.fail(at + ("foreign_keys",), f"expected a list of inline tables, got {foreign!r}")
        return TableDef(
            name=name, source=source, **location,
            primary_key=primary,
            unique_keys=tuple(self.names(at + ("unique_keys",), u) for u in uniques),
            foreign_keys=tuple(self.foreign_key(at + ("foreign_keys",), fk) for fk in foreign),
        )

    def foreign_key(self, at: tuple[str, ...], body: Any) -> ForeignKey:
        body = self.table_of(at, body)
        self.check_keys(at, body, ["columns", "references", "referenced_columns"])
        for needed in ("columns", "references", "referenced_columns"):
            if needed not in body:
                raise self.fail(at, "a foreign key needs columns, references and referenced_columns; "
                                f"{needed} is missing")
        fk = ForeignKey(columns=self.names(at, body["columns"]),
                        references=self.string(at, body["references"]),
                        referenced_columns=self.names(at, body["referenced_columns"]))
        if len(fk.columns) != len(fk.referenced_columns):
            raise self.fail(at, f"foreign key {list(fk.columns)} -> {fk.references}{list(fk.referenced_columns)} "
                            "has different numbers of columns on each side")
        return fk

    def check_foreign_keys(self, catalog: Catalog) -> None:
        for table in catalog.tables():
            for fk in table.foreign_keys:
                at = ("sources", table.source, "tables", table.name, "foreign_keys")
                try:
                    catalog.table(fk.references)
                except CatalogError as exc:
                    raise self.fail(at, f"foreign key references {exc}") from None


def _split_dotted(key_text: str) -> tuple[str, ...]:
    """Split a TOML dotted key (``a."b.c".d``) into its parts."""
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|([A-Za-z0-9_\-]+)', key_text)
    return tuple(a or b or c for a, b, c in parts)


def _key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Map every table header and key path in a TOML text to the line it is first defined on.

    tomllib gives no positions for values, so errors about a key are located by this scan.
    Inline tables are located by the key that holds them, which is close enough to point at.
    """
    found: dict[tuple[str, ...], int] = {}
    header: tuple[str, ...] = ()
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = re.match(r"^\[\[?\s*(.+?)\s*\]\]?\s*(#.*)?$", stripped)
        if match:
            header = _split_dotted(match.group(1))
            found.setdefault(header, number)
            continue
        match = re.match(r'^((?:"[^"]*"|\'[^\']*\'|[A-Za-z0-9_\-.\s])+?)\s*=', stripped)
        if match:
            found.setdefault(header + _split_dotted(match.group(1)), number)
    return found


def _locate(lines: dict[tuple[str, ...], int], key_path: tuple[str, ...]) -> int | None:
    for length in range(len(key_path), 0, -1):
        if key_path[:length] in lines:
            return lines[key_path[:length]]
    return None
