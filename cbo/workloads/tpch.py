"""TPC-H data: generation with tpchgen-cli, loading into PostgreSQL and MariaDB, and the placements.

``generate`` writes one Parquet file per table plus ``manifest.json`` (written last, so its
presence means the data is complete); running it again with the same scale factor does nothing.
``write_catalogs`` writes the catalog files of the three placements:

* ``all-spark``: every table from Parquet;
* ``all-postgres``: every table in PostgreSQL (Parquet copies listed for DuckDB);
* ``federated``: customer, orders, nation, region in PostgreSQL; lineitem, part, partsupp,
  supplier in Parquet;
* ``federated3`` (when MariaDB is loaded too): customer, orders in PostgreSQL; part, partsupp,
  supplier, nation, region in MariaDB; lineitem in Parquet. Each source holds tables that join
  among themselves (orders-customer; part-partsupp-supplier-nation-region), so every source has
  subtrees of its own to push, and most queries join across all three.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq
import tomli_w

from cbo.catalog_types import ForeignKey, TableKeys
from cbo.connectors.postgres.loader import load_parquet_schema
from cbo.errors import CboError, SetupError
from cbo.paths import scale_factor_identifier

if TYPE_CHECKING:
    import pymysql

TABLES = ("region", "nation", "part", "supplier", "partsupp", "customer", "orders", "lineitem")
FEDERATED_IN_POSTGRES = ("customer", "orders", "nation", "region")
FEDERATED3_IN_POSTGRES = ("customer", "orders")
FEDERATED3_IN_MARIADB = ("part", "partsupp", "supplier", "nation", "region")
PLACEMENTS = ("all-spark", "all-postgres", "federated", "federated3")


def _fk(columns: str, references: str, referenced: str) -> ForeignKey:
    return ForeignKey(tuple(columns.split(",")), references, tuple(referenced.split(",")))


KEYS: dict[str, TableKeys] = {
    "region": TableKeys(("r_regionkey",)),
    "nation": TableKeys(("n_nationkey",), (_fk("n_regionkey", "region", "r_regionkey"),)),
    "part": TableKeys(("p_partkey",)),
    "supplier": TableKeys(("s_suppkey",), (_fk("s_nationkey", "nation", "n_nationkey"),)),
    "partsupp": TableKeys(("ps_partkey", "ps_suppkey"), (
        _fk("ps_partkey", "part", "p_partkey"), _fk("ps_suppkey", "supplier", "s_suppkey"))),
    "customer": TableKeys(("c_custkey",), (_fk("c_nationkey", "nation", "n_nationkey"),)),
    "orders": TableKeys(("o_orderkey",), (_fk("o_custkey", "customer", "c_custkey"),)),
    "lineitem": TableKeys(("l_orderkey", "l_linenumber"), (
        _fk("l_orderkey", "orders", "o_orderkey"),
        _fk("l_partkey,l_suppkey", "partsupp", "ps_partkey,ps_suppkey"),
        _fk("l_partkey", "part", "p_partkey"),
        _fk("l_suppkey", "supplier", "s_suppkey"))),
}


@dataclass(frozen=True)
class Dataset:
    """Generated TPC-H Parquet files of one scale factor."""

    directory: Path
    sf: float
    manifest: dict

    def table_path(self, table: str) -> Path:
        return self.directory / f"{table}.parquet"

    @property
    def tables(self) -> dict[str, Path]:
        return {t: self.table_path(t) for t in TABLES}


def _tpchgen() -> str:
    beside_python = Path(sys.executable).parent / "tpchgen-cli"
    found = str(beside_python) if beside_python.exists() else shutil.which("tpchgen-cli")
    if not found:
        raise SetupError("tpchgen-cli not found: pip install tpchgen-cli (it is a dependency of cbo)")
    return found


def _generator_version(binary: str) -> str:
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, check=False)
    return out.stdout.strip() or "unknown"


def _read_manifest(directory: Path) -> dict | None:
    try:
        return json.loads((directory / "manifest.json").read_text())
    except (OSError, ValueError):
        return None


def existing(directory: Path, sf: float) -> Dataset | None:
    """The dataset in ``directory`` if it is complete and of scale factor ``sf``."""
    manifest = _read_manifest(directory)
    if not manifest or manifest.get("scale_factor") != sf:
        return None
    for table, rows in manifest.get("rows", {}).items():
        path = directory / f"{table}.parquet"
        try:
            if pq.ParquetFile(path).metadata.num_rows != rows:
                return None
        except (OSError, pa.ArrowException):
            return None
    if set(manifest.get("rows", {})) != set(TABLES):
        return None
    return Dataset(directory, sf, manifest)


def generate(sf: float, out: Path, progress: Callable[[str], None] = lambda _: None) -> tuple[Dataset, bool]:
    """Generate TPC-H Parquet at scale factor ``sf`` into ``out``; return (dataset, generated?)."""
    if sf <= 0:
        raise CboError(f"scale factor must be positive, got {sf:g}")
    out = out.resolve()
    found = existing(out, sf)
    if found:
        return found, False
    previous = _read_manifest(out)
    if previous is not None and previous.get("benchmark", "tpch") != "tpch":
        other = {"tpcds": "TPC-DS"}.get(str(previous.get("benchmark")), str(previous.get("benchmark")))
        raise CboError(f"{out} holds {other} data, not TPC-H: choose another --out directory")
    if previous is not None and previous.get("scale_factor") != sf:
        raise CboError(f"{out} holds TPC-H at scale factor {previous.get('scale_factor')}, "
                       f"not {sf:g}: choose another --out directory")
    binary = _tpchgen()
    out.mkdir(parents=True, exist_ok=True)
    scratch = out / ".generating"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir()
    progress(f"generating TPC-H sf {sf:g} with tpchgen-cli")
    result = subprocess.run([binary, "parquet", "-s", f"{sf:g}", "--output-dir", str(scratch)],
                            capture_output=True, text=True, check=False)
    if result.returncode != 0:
        shutil.rmtree(scratch, ignore_errors=True)
        raise CboError(f"tpchgen-cli failed: {(result.stderr or result.stdout).strip().splitlines()[-1:]}")
    rows = {}
    (out / "manifest.json").unlink(missing_ok=True)
    for table in TABLES:
        produced = scratch / f"{table}.parquet"
        rows[table] = pq.ParquetFile(produced).metadata.num_rows
        produced.replace(out / f"{table}.parquet")
    shutil.rmtree(scratch, ignore_errors=True)
    manifest = {"generator": "tpchgen-cli", "generator_version": _generator_version(binary),
                "scale_factor": sf, "rows": rows}
    tmp = out / "manifest.json.tmp"
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True))
    tmp.replace(out / "manifest.json")
    return Dataset(out, sf, manifest), True


def postgres_schema(sf: float) -> str:
    """The PostgreSQL schema that holds TPC-H at ``sf``: e.g. ``tpch_sf0_1``."""
    return scale_factor_identifier(sf)


def mariadb_database(sf: float) -> str:
    """The MariaDB database that holds TPC-H at ``sf`` (the federated3 tables): e.g. ``tpch_sf0_1``."""
    return scale_factor_identifier(sf)


def load_mariadb(dataset: Dataset, conn: pymysql.Connection,
                 progress: Callable[[str], None] = lambda _: None) -> bool:
    """Load the federated3 MariaDB tables with their keys; False if already there."""
    from cbo.connectors.mariadb.loader import load_parquet_database

    tables = {t: dataset.table_path(t) for t in FEDERATED3_IN_MARIADB}
    manifest = {"dataset": dataset.manifest, "loader": "cbo-mariadb/1", "tables": list(FEDERATED3_IN_MARIADB)}
    return load_parquet_database(conn, mariadb_database(dataset.sf), tables, KEYS, manifest, progress)


def load_postgres(dataset: Dataset, conn, progress: Callable[[str], None] = lambda _: None) -> bool:
    """Load all eight tables with primary and foreign keys, then ANALYZE; False if already there."""
    manifest = {"dataset": dataset.manifest, "loader": "cbo/1"}
    return load_parquet_schema(conn, postgres_schema(dataset.sf), dataset.tables, KEYS, manifest, progress)


@dataclass(frozen=True)
class PostgresTarget:
    """How catalogs reach the PostgreSQL copy: cbo's local server by its state directory, or a
    URL and where the password comes from."""

    jdbc_url: str | None = None
    user: str | None = None
    password_file: str | None = None
    password_env: str | None = None
    local_server: str | None = None   # the local server's state directory: no port in the catalog


def _spark_table(dataset: Dataset, table: str) -> dict:
    return {"path": str(dataset.table_path(table)), **_declared_keys(table)}


def _declared_keys(table: str) -> dict:
    keys = KEYS[table]
    body: dict = {"primary_key": list(keys.primary_key)}
    if keys.foreign_keys:
        body["foreign_keys"] = [{"columns": list(fk.columns), "references": fk.references,
                                 "referenced_columns": list(fk.referenced_columns)} for fk in keys.foreign_keys]
    return body


def _jdbc_source(dataset: Dataset, target: PostgresTarget, tables: tuple[str, ...]) -> dict:
    if target.local_server:
        source: dict = {"type": "jdbc", "local_server": target.local_server, "dialect": "postgres",
                        "schema": postgres_schema(dataset.sf)}
        source["tables"] = {t: {"parquet_copy": str(dataset.table_path(t)), **_declared_keys(t)} for t in tables}
        return source
    source = {"type": "jdbc", "url": target.jdbc_url, "dialect": "postgres",
              "schema": postgres_schema(dataset.sf)}
    if target.user:
        source["user"] = target.user
    if target.password_file:
        source["password_file"] = target.password_file
    elif target.password_env:
        source["password_env"] = target.password_env
    # The copies let DuckDB answer. The keys are declared too (the same as PostgreSQL's
    # constraints), so an engine that does not read the source plans with them all the same.
    source["tables"] = {t: {"parquet_copy": str(dataset.table_path(t)), **_declared_keys(t)} for t in tables}
    return source


@dataclass(frozen=True)
class MariaDBTarget:
    """How catalogs reach the MariaDB copy: cbo's local server by its state directory, or a URL
    (``jdbc:mariadb://...``) with the user and the environment variable holding the password."""

    jdbc_url: str | None = None
    user: str | None = None
    password_env: str | None = None
    local_server: str | None = None


def _mariadb_source(dataset: Dataset, target: MariaDBTarget, tables: tuple[str, ...]) -> dict:
    source: dict = {"type": "jdbc"}
    if target.local_server:
        source["local_server"] = target.local_server
    else:
        source["url"] = target.jdbc_url
        if target.user:
            source["user"] = target.user
        if target.password_env:
            source["password_env"] = target.password_env
    source.update({"dialect": "mysql", "schema": mariadb_database(dataset.sf)})
    source["tables"] = {t: {"parquet_copy": str(dataset.table_path(t)), **_declared_keys(t)} for t in tables}
    return source


def catalog_documents(dataset: Dataset, target: PostgresTarget | None,
                      maria: MariaDBTarget | None = None) -> dict[str, dict]:
    """The catalog of each placement as a TOML-ready dict (PostgreSQL ones only with a target,
    federated3 only with both targets)."""
    docs = {"all-spark": {"sources": {"lake": {"type": "spark", "tables": {
        t: _spark_table(dataset, t) for t in TABLES}}}}}
    if target is not None:
        docs["all-postgres"] = {"sources": {"pg": _jdbc_source(dataset, target, TABLES)}}
        local = tuple(t for t in TABLES if t not in FEDERATED_IN_POSTGRES)
        docs["federated"] = {"sources": {
            "lake": {"type": "spark", "tables": {t: _spark_table(dataset, t) for t in local}},
            "pg": _jdbc_source(dataset, target, tuple(t for t in TABLES if t in FEDERATED_IN_POSTGRES)),
        }}
    if target is not None and maria is not None:
        in_sources = FEDERATED3_IN_POSTGRES + FEDERATED3_IN_MARIADB
        docs["federated3"] = {"sources": {
            "lake": {"type": "spark", "tables": {t: _spark_table(dataset, t) for t in TABLES if t not in in_sources}},
            "pg": _jdbc_source(dataset, target, tuple(t for t in TABLES if t in FEDERATED3_IN_POSTGRES)),
            "maria": _mariadb_source(dataset, maria, tuple(t for t in TABLES if t in FEDERATED3_IN_MARIADB)),
        }}
    return docs


def write_catalogs(dataset: Dataset, target: PostgresTarget | None, directory: Path | None = None,
                   maria: MariaDBTarget | None = None) -> dict[str, Path]:
    """Write ``<placement>.toml`` files (atomically) and return their paths."""
    directory = directory or dataset.directory / "catalogs"
    directory.mkdir(parents=True, exist_ok=True)
    written = {}
    for placement, doc in catalog_documents(dataset, target, maria).items():
        path = directory / f"{placement}.toml"
        header = (f"# TPC-H sf {dataset.sf:g}, placement {placement}: written by `cbo datagen tpch`.\n"
                  "# Passwords are never stored here, only where to read them from.\n\n")
        tmp = path.with_suffix(".toml.tmp")
        tmp.write_text(header + tomli_w.dumps(doc))
        tmp.replace(path)
        written[placement] = path
    return written


def prepare(sf: float, *, data_dir: Path | None = None, postgres: str | None = "local",
            mariadb: str | None = None, progress: Callable[[str], None] = lambda _: None) -> dict[str, Path]:
    """Everything a TPC-H run needs: data, PostgreSQL loaded, catalogs; return placement -> catalog.

    ``postgres`` is "local" (cbo's throwaway server, started if needed), a PostgreSQL URL
    (``postgresql://user@host:port/db``; the password from the URL or ``$PGPASSWORD``), or None
    (Parquet only: just the all-spark placement). ``mariadb`` is "local" (cbo's throwaway
    MariaDB), a URL (``mariadb://user@host:port/db``; the password from ``$CBO_MARIADB_PASSWORD``),
    or None; with both, the federated3 placement is written too.
    """
    import os

    from cbo.connectors.postgres import client as pg
    from cbo.paths import cache_dir, scale_factor_label

    directory = data_dir or cache_dir() / "tpch" / scale_factor_label(sf)
    dataset, made = generate(sf, directory, progress)
    progress(f"TPC-H sf {sf:g}: {'generated' if made else 'present'} in {dataset.directory}")
    target = None
    if postgres == "local":
        from cbo.connectors.postgres.server import LocalPostgres

        server = LocalPostgres()
        info = server.start()
        progress(f"local PostgreSQL at {info.url}")
        address = pg.parse_url(info.jdbc_url, info.user, info.password())
        target = PostgresTarget(local_server=str(server.root))
    elif postgres:
        address = pg.parse_url(postgres, password=os.environ.get("PGPASSWORD"))
        if address.password and "PGPASSWORD" not in os.environ:
            os.environ["PGPASSWORD"] = address.password  # catalogs read it from there, never from disk
        target = PostgresTarget(address.jdbc_url(), address.user, password_env="PGPASSWORD")
    if target is not None:
        with pg.connect(address, what="PostgreSQL") as conn:
            loaded = load_postgres(dataset, conn, lambda m: progress(f"PostgreSQL: {m}"))
        progress(f"PostgreSQL schema {postgres_schema(sf)}: {'loaded' if loaded else 'already loaded'}")
    maria = _prepare_mariadb(dataset, mariadb, progress) if mariadb and target is not None else None
    return write_catalogs(dataset, target, maria=maria)


MARIADB_PASSWORD_ENV = "CBO_MARIADB_PASSWORD"


def _prepare_mariadb(dataset: Dataset, mariadb: str, progress: Callable[[str], None]) -> MariaDBTarget:
    """Start (``local``) or reach MariaDB, load the federated3 tables, say how catalogs reach it."""
    import os

    from cbo.connectors.mariadb import client as maria

    if mariadb == "local":
        from cbo.connectors.mariadb.server import LocalMariaDB

        server = LocalMariaDB()
        info = server.start()
        progress(f"local MariaDB at {info.url}")
        address = maria.MariaAddress(info.host, info.port, info.database, info.user, info.password())
        target = MariaDBTarget(local_server=str(server.root))
    else:
        address = maria.parse_url(mariadb, password=os.environ.get(MARIADB_PASSWORD_ENV))
        target = MariaDBTarget(f"jdbc:mariadb://{address.host}:{address.port}/{address.database}", address.user,
                               password_env=MARIADB_PASSWORD_ENV)
    with maria.connect(address, what="MariaDB") as conn:
        loaded = load_mariadb(dataset, conn, lambda m: progress(f"MariaDB: {m}"))
    progress(f"MariaDB database {mariadb_database(dataset.sf)}: {'loaded' if loaded else 'already loaded'}")
    return target
