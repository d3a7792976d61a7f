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
    disable = ["like", "left_join"]              # beyond the connector's capabilities (cbo.connectors.capabilities)
    enable = []

    [sources.lite]
    type = "jdbc"
    url = "jdbc:sqlite:/data/tpch.db"            # SQLite: a database file

A JDBC source's connector (``cbo.connectors``: what cbo can push into it, how it reads its
statistics) comes from the URL's subprotocol, or from ``dialect``.

``local_server`` names cbo's own local server instead of a URL: ``true`` for the server of the
cache directory in use, or the path of a server's state directory (``<cache>/postgres``, as
``cbo datagen`` writes). With ``dialect = "mysql"`` it is cbo's local MariaDB (``cbo mariadb
start``, state in ``<cache>/mariadb``), with ``dialect = "sqlite"`` a database file of cbo's
local SQLite directory (``<cache>/sqlite/<schema>.db``). Its address, user and password file
are read from the server's state when a connection is made, so a catalog keeps working when
the server restarts on another port. Older catalogs that give the local server's URL and its
password file are read the same way.

Passwords are never written in a catalog: only the name of an environment variable or a file
that holds one. Every validation error names the file, the line and the key at fault.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from cbo.catalog_types import (  # noqa: F401  (the catalog's value types, imported from here by callers)
    Catalog,
    ColumnInfo,
    ForeignKey,
    Source,
    SparkSettings,
    TableDef,
    TableKeys,
    closest,
)
from cbo.connectors import POSTGRES, by_dialect, by_subprotocol, with_servers
from cbo.connectors.base import Connector
from cbo.errors import CatalogError

SOURCE_TYPES = ("spark", "jdbc")
_closest = closest


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
        if "dialect" in body:
            connector = self.connector(at + ("dialect",), body["dialect"])
        else:
            found = by_subprotocol(match.group(1))
            if found is None:
                raise self.fail(at + ("url",), f"cannot infer the SQL dialect of {match.group(1)!r}: "
                                "set dialect = \"...\"")
            connector = found
        schema = body.get("schema") and self.string(at + ("schema",), body["schema"])
        if schema and not connector.schemas:
            raise self.fail(at + ("schema",), f"a {connector.title} source's url names its database; "
                            "schema names a database of cbo's local server (local_server = true)")
        password_file = body.get("password_file")
        legacy = self.legacy_local_server(at, url, body.get("user"), password_file)
        if legacy is not None:
            return dict(local_server=legacy[1], connector=legacy[0], schema=schema)
        return dict(
            url=url,
            user=body.get("user") and self.string(at + ("user",), body["user"]),
            password_env=body.get("password_env") and self.string(at + ("password_env",), body["password_env"]),
            password_file=(self.file_path(self.string(at + ("password_file",), password_file))
                           if password_file else None),
            connector=connector,
            schema=schema,
        )

    def connector(self, at: tuple[str, ...], value: Any) -> Connector:
        try:
            return by_dialect(self.string(at, value))
        except ValueError as exc:
            raise self.fail(at, str(exc)) from None

    def pushdown(self, at: tuple[str, ...], value: Any) -> dict[str, tuple[str, ...]]:
        """``[sources.NAME.pushdown]``: ``disable`` / ``enable``, lists of capability names
        (``cbo.connectors.capabilities.NAMES``) taken from or added to the connector's."""
        from cbo.connectors.capabilities import NAMES

        body = self.table_of(at, value)
        self.check_keys(at, body, ["disable", "enable"])
        found: dict[str, tuple[str, ...]] = {}
        for key in ("disable", "enable"):
            names = body.get(key, [])
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise self.fail(at + (key,), f"expected a list of capability names, got {names!r}")
            for name in names:
                if name not in NAMES:
                    hint = _closest(name, list(NAMES)) or " (see cbo.connectors.capabilities for the names)"
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
        # without a dialect: cbo's local PostgreSQL, the first local server cbo had
        connector = self.connector(at + ("dialect",), body["dialect"]) if "dialect" in body else POSTGRES
        if connector.server_command is None:
            servers = " and ".join(f"{c.title} (dialect \"{c.dialect}\")" for c in with_servers())
            raise self.fail(at + ("dialect",), f"cbo's local servers are {servers}, not {connector.dialect!r}")
        if value is True:
            server = connector.default_server_root()
        elif isinstance(value, str) and value:
            server = self.file_path(value)
        else:
            raise self.fail(at + ("local_server",), "expected true (the server of the cache directory) or the "
                            f"path of a server's state directory such as \"~/.cache/cbo/postgres\", got {value!r}")
        return dict(local_server=server, connector=connector,
                    schema=body.get("schema") and self.string(at + ("schema",), body["schema"]))

    def legacy_local_server(self, at: tuple[str, ...], url: str, user: Any,
                            password_file: Any) -> tuple[Connector, Path] | None:
        """The connector and state directory of cbo's local server, when an older catalog names
        it by URL and password file.

        Catalogs written before ``local_server`` existed carry the server's port, which changes
        when it restarts; its password file sits in the state directory beside ``server.json``.
        Such a source is read as ``local_server`` only when nothing else in it says otherwise:
        the URL's host is this machine, its database is the local server's, and ``user`` is the
        local server's or left out; only the port may differ (it is the one that moves). A
        password file of the local server beside another database or user is a contradiction,
        refused rather than resolved by silently replacing either.
        """
        if not isinstance(password_file, str) or not password_file:
            return None
        directory = self.file_path(password_file).parent
        address = re.match(r"jdbc:([a-z0-9]+)://([^:/?]+)(?::\d+)?(?:/([^?;]*))?", url)
        connector = by_subprotocol(address.group(1)) if address else None
        if address is None or connector is None or connector.server_command is None \
                or not (directory / "server.json").is_file():
            return None
        host, database = address.group(2), address.group(3) or ""
        if host not in ("127.0.0.1", "localhost"):
            return None   # another machine's server, whatever file holds the password
        expected_database, expected_user = connector.local_database, connector.local_user
        if database != expected_database or user not in (None, expected_user):
            named = f"database {database!r}" + (f" and user {user!r}" if user not in (None, expected_user) else "")
            raise self.fail(at + ("password_file",),
                            f"password_file is cbo's local {connector.title}'s ({directory}), whose database and "
                            f"user are {expected_database!r}, but url names {named}: write local_server = "
                            f"\"{directory}\" (without url, user and password_file) for that server, or give the "
                            "other server's own password")
        return connector, directory

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
