"""TPC-DS data: generation with tpcgen-cli, loading into PostgreSQL, and the placements.

The API is TPC-H's (``cbo.workloads.tpch``): ``generate`` writes one Parquet file per table plus
``manifest.json`` (written last, so its presence means the data is complete; running it again
with the same scale factor does nothing), ``load_postgres`` loads every table with its keys,
``write_catalogs`` writes the catalog of each placement and ``prepare`` does all three:

* ``all-spark``: every table from Parquet;
* ``all-postgres``: every table in PostgreSQL (Parquet copies listed for DuckDB);
* ``federated``: the dimension tables in PostgreSQL, the seven fact tables (sales, returns,
  inventory) in Parquet: every star join crosses the two sources.

Primary keys are TPC-DS's own (a surrogate key per dimension, item and order or ticket number
for sales and returns). Foreign keys are declared only where the generated data honours them:
each fact table's date, item, customer and other dimension keys, and a return's reference to
its sale. They were checked on tpcgen-cli's data at SF 0.01 and 0.1 (every non-NULL value is
found), and ``tests/integration/test_tpcds_answers.py`` checks them again on the data it uses.
``dbgen_version`` (the generator's own record) is left out.
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
from cbo.workloads.tpch import PostgresTarget

if TYPE_CHECKING:
    import psycopg

FACT_TABLES = ("store_sales", "store_returns", "catalog_sales", "catalog_returns", "web_sales", "web_returns",
               "inventory")
DIMENSION_TABLES = ("call_center", "catalog_page", "customer", "customer_address", "customer_demographics",
                    "date_dim", "household_demographics", "income_band", "item", "promotion", "reason",
                    "ship_mode", "store", "time_dim", "warehouse", "web_page", "web_site")
TABLES = DIMENSION_TABLES + FACT_TABLES
FEDERATED_IN_POSTGRES = DIMENSION_TABLES
PLACEMENTS = ("all-spark", "all-postgres", "federated")


def _fk(columns: str, references: str, referenced: str) -> ForeignKey:
    return ForeignKey(tuple(columns.split(",")), references, tuple(referenced.split(",")))


def _dims(prefix: str, pairs: str) -> tuple[ForeignKey, ...]:
    """Foreign keys ``prefix + column -> table(key)`` from ``"column:table.key ..."``."""
    found = []
    for pair in pairs.split():
        column, target = pair.split(":")
        table, key = target.split(".")
        found.append(_fk(prefix + column, table, key))
    return tuple(found)


_SALES_DIMS = ("sold_date_sk:date_dim.d_date_sk sold_time_sk:time_dim.t_time_sk item_sk:item.i_item_sk "
               "promo_sk:promotion.p_promo_sk")
_WEB_CATALOG_SALES = ("ship_date_sk:date_dim.d_date_sk bill_customer_sk:customer.c_customer_sk "
                      "bill_cdemo_sk:customer_demographics.cd_demo_sk "
                      "bill_hdemo_sk:household_demographics.hd_demo_sk bill_addr_sk:customer_address.ca_address_sk "
                      "ship_customer_sk:customer.c_customer_sk ship_cdemo_sk:customer_demographics.cd_demo_sk "
                      "ship_hdemo_sk:household_demographics.hd_demo_sk ship_addr_sk:customer_address.ca_address_sk "
                      "ship_mode_sk:ship_mode.sm_ship_mode_sk warehouse_sk:warehouse.w_warehouse_sk")
_RETURNS_DIMS = ("returned_date_sk:date_dim.d_date_sk item_sk:item.i_item_sk reason_sk:reason.r_reason_sk")
_WEB_CATALOG_RETURNS = ("returned_time_sk:time_dim.t_time_sk refunded_customer_sk:customer.c_customer_sk "
                        "refunded_cdemo_sk:customer_demographics.cd_demo_sk "
                        "refunded_hdemo_sk:household_demographics.hd_demo_sk "
                        "refunded_addr_sk:customer_address.ca_address_sk "
                        "returning_customer_sk:customer.c_customer_sk "
                        "returning_cdemo_sk:customer_demographics.cd_demo_sk "
                        "returning_hdemo_sk:household_demographics.hd_demo_sk "
                        "returning_addr_sk:customer_address.ca_address_sk")

KEYS: dict[str, TableKeys] = {
    "call_center": TableKeys(("cc_call_center_sk",)),
    "catalog_page": TableKeys(("cp_catalog_page_sk",)),
    "customer": TableKeys(("c_customer_sk",), _dims("c_", (
        "current_cdemo_sk:customer_demographics.cd_demo_sk current_hdemo_sk:household_demographics.hd_demo_sk "
        "current_addr_sk:customer_address.ca_address_sk"))),
    "customer_address": TableKeys(("ca_address_sk",)),
    "customer_demographics": TableKeys(("cd_demo_sk",)),
    "date_dim": TableKeys(("d_date_sk",)),
    "household_demographics": TableKeys(("hd_demo_sk",), _dims("hd_", "income_band_sk:income_band.ib_income_band_sk")),
    "income_band": TableKeys(("ib_income_band_sk",)),
    "item": TableKeys(("i_item_sk",)),
    "promotion": TableKeys(("p_promo_sk",)),
    "reason": TableKeys(("r_reason_sk",)),
    "ship_mode": TableKeys(("sm_ship_mode_sk",)),
    "store": TableKeys(("s_store_sk",)),
    "time_dim": TableKeys(("t_time_sk",)),
    "warehouse": TableKeys(("w_warehouse_sk",)),
    "web_page": TableKeys(("wp_web_page_sk",)),
    "web_site": TableKeys(("web_site_sk",)),
    "store_sales": TableKeys(("ss_item_sk", "ss_ticket_number"), _dims("ss_", _SALES_DIMS + (
        " customer_sk:customer.c_customer_sk cdemo_sk:customer_demographics.cd_demo_sk "
        "hdemo_sk:household_demographics.hd_demo_sk addr_sk:customer_address.ca_address_sk "
        "store_sk:store.s_store_sk"))),
    "store_returns": TableKeys(("sr_item_sk", "sr_ticket_number"), _dims("sr_", _RETURNS_DIMS + (
        " return_time_sk:time_dim.t_time_sk customer_sk:customer.c_customer_sk "
        "cdemo_sk:customer_demographics.cd_demo_sk hdemo_sk:household_demographics.hd_demo_sk "
        "addr_sk:customer_address.ca_address_sk store_sk:store.s_store_sk")) + (
        _fk("sr_item_sk,sr_ticket_number", "store_sales", "ss_item_sk,ss_ticket_number"),)),
    "catalog_sales": TableKeys(("cs_item_sk", "cs_order_number"), _dims("cs_", (
        f"{_SALES_DIMS} {_WEB_CATALOG_SALES} call_center_sk:call_center.cc_call_center_sk "
        "catalog_page_sk:catalog_page.cp_catalog_page_sk"))),
    "catalog_returns": TableKeys(("cr_item_sk", "cr_order_number"), _dims("cr_", _RETURNS_DIMS + " " + (
        _WEB_CATALOG_RETURNS) + (
        " call_center_sk:call_center.cc_call_center_sk catalog_page_sk:catalog_page.cp_catalog_page_sk "
        "ship_mode_sk:ship_mode.sm_ship_mode_sk warehouse_sk:warehouse.w_warehouse_sk")) + (
        _fk("cr_item_sk,cr_order_number", "catalog_sales", "cs_item_sk,cs_order_number"),)),
    "web_sales": TableKeys(("ws_item_sk", "ws_order_number"), _dims("ws_", _SALES_DIMS + " " + _WEB_CATALOG_SALES + (
        " web_page_sk:web_page.wp_web_page_sk web_site_sk:web_site.web_site_sk"))),
    "web_returns": TableKeys(("wr_item_sk", "wr_order_number"), _dims("wr_", _RETURNS_DIMS + " " + (
        _WEB_CATALOG_RETURNS) + " web_page_sk:web_page.wp_web_page_sk") + (
        _fk("wr_item_sk,wr_order_number", "web_sales", "ws_item_sk,ws_order_number"),)),
    "inventory": TableKeys(("inv_date_sk", "inv_item_sk", "inv_warehouse_sk"), _dims("inv_", (
        "date_sk:date_dim.d_date_sk item_sk:item.i_item_sk warehouse_sk:warehouse.w_warehouse_sk"))),
}


@dataclass(frozen=True)
class Dataset:
    """Generated TPC-DS Parquet files of one scale factor."""

    directory: Path
    sf: float
    manifest: dict

    def table_path(self, table: str) -> Path:
        return self.directory / f"{table}.parquet"

    @property
    def tables(self) -> dict[str, Path]:
        return {t: self.table_path(t) for t in TABLES}


def _tpcgen() -> str:
    beside_python = Path(sys.executable).parent / "tpcgen-cli"
    found = str(beside_python) if beside_python.exists() else shutil.which("tpcgen-cli")
    if not found:
        raise SetupError("tpcgen-cli not found: pip install tpcgen-cli (it is a dependency of cbo)")
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
    if not manifest or manifest.get("scale_factor") != sf or manifest.get("benchmark") != "tpcds":
        return None
    if set(manifest.get("rows", {})) != set(TABLES):
        return None
    for table, rows in manifest["rows"].items():
        try:
            if pq.ParquetFile(directory / f"{table}.parquet").metadata.num_rows != rows:
                return None
        except (OSError, pa.ArrowException):
            return None
    return Dataset(directory, sf, manifest)


def generate(sf: float, out: Path, progress: Callable[[str], None] = lambda _: None) -> tuple[Dataset, bool]:
    """Generate TPC-DS Parquet at scale factor ``sf`` into ``out``; return (dataset, generated?)."""
    if sf <= 0:
        raise CboError(f"scale factor must be positive, got {sf:g}")
    out = out.resolve()
    found = existing(out, sf)
    if found:
        return found, False
    previous = _read_manifest(out)
    if previous is not None and (previous.get("scale_factor") != sf or previous.get("benchmark") != "tpcds"):
        what = "TPC-DS" if previous.get("benchmark") == "tpcds" else "another data set"
        raise CboError(f"{out} holds {what} at scale factor {previous.get('scale_factor')}, not TPC-DS at "
                       f"{sf:g}: choose another --out directory")
    binary = _tpcgen()
    out.mkdir(parents=True, exist_ok=True)
    scratch = out / ".generating"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir()
    progress(f"generating TPC-DS sf {sf:g} with tpcgen-cli")
    result = subprocess.run([binary, "tpcds", "parquet", "--scale-factor", f"{sf:g}", "--output-dir", str(scratch),
                             "--tables", ",".join(TABLES), "--quiet", "--no-progress"],
                            capture_output=True, text=True, check=False)
    if result.returncode != 0:
        shutil.rmtree(scratch, ignore_errors=True)
        lines = (result.stderr or result.stdout).strip().splitlines()
        raise CboError(f"tpcgen-cli failed: {lines[-1] if lines else f'exit status {result.returncode}'}")
    rows = {}
    (out / "manifest.json").unlink(missing_ok=True)
    for table in TABLES:
        produced = scratch / f"{table}.parquet"
        rows[table] = pq.ParquetFile(produced).metadata.num_rows
        produced.replace(out / f"{table}.parquet")
    shutil.rmtree(scratch, ignore_errors=True)
    manifest = {"benchmark": "tpcds", "generator": "tpcgen-cli", "generator_version": _generator_version(binary),
                "scale_factor": sf, "rows": rows}
    tmp = out / "manifest.json.tmp"
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True))
    tmp.replace(out / "manifest.json")
    return Dataset(out, sf, manifest), True


def postgres_schema(sf: float) -> str:
    """The PostgreSQL schema that holds TPC-DS at ``sf``: e.g. ``tpcds_sf0_1``."""
    return "tpcds_" + scale_factor_identifier(sf).removeprefix("tpch_")


def load_postgres(dataset: Dataset, conn: psycopg.Connection,
                  progress: Callable[[str], None] = lambda _: None) -> bool:
    """Load every table with primary and foreign keys, then ANALYZE; False if already there."""
    manifest = {"dataset": dataset.manifest, "loader": "cbo/1"}
    return load_parquet_schema(conn, postgres_schema(dataset.sf), dataset.tables, KEYS, manifest, progress)


def _declared_keys(table: str) -> dict:
    keys = KEYS[table]
    body: dict = {"primary_key": list(keys.primary_key)}
    if keys.foreign_keys:
        body["foreign_keys"] = [{"columns": list(fk.columns), "references": fk.references,
                                 "referenced_columns": list(fk.referenced_columns)} for fk in keys.foreign_keys]
    return body


def _spark_source(dataset: Dataset, tables: tuple[str, ...]) -> dict:
    return {"type": "spark", "tables": {t: {"path": str(dataset.table_path(t)), **_declared_keys(t)} for t in tables}}


def _jdbc_source(dataset: Dataset, target: PostgresTarget, tables: tuple[str, ...]) -> dict:
    source: dict = {"type": "jdbc"}
    if target.local_server:
        source["local_server"] = target.local_server
    else:
        source["url"] = target.jdbc_url
        if target.user:
            source["user"] = target.user
        if target.password_file:
            source["password_file"] = target.password_file
        elif target.password_env:
            source["password_env"] = target.password_env
    source.update({"dialect": "postgres", "schema": postgres_schema(dataset.sf)})
    # The copies let DuckDB answer; the keys are declared too (PostgreSQL's constraints), so an
    # engine that does not read the source plans with them all the same.
    source["tables"] = {t: {"parquet_copy": str(dataset.table_path(t)), **_declared_keys(t)} for t in tables}
    return source


def catalog_documents(dataset: Dataset, target: PostgresTarget | None) -> dict[str, dict]:
    """The catalog of each placement as a TOML-ready dict (the PostgreSQL ones only with a target).

    A foreign key may name a table of another source in the federated placement (a fact table's
    date key names ``date_dim`` in PostgreSQL): it is qualified with that source's name."""
    docs = {"all-spark": {"sources": {"lake": _spark_source(dataset, TABLES)}}}
    if target is not None:
        docs["all-postgres"] = {"sources": {"pg": _jdbc_source(dataset, target, TABLES)}}
        lake = _spark_source(dataset, FACT_TABLES)
        for body in lake["tables"].values():
            for fk in body.get("foreign_keys", []):
                if fk["references"] in FEDERATED_IN_POSTGRES:
                    fk["references"] = f"pg.{fk['references']}"
        docs["federated"] = {"sources": {"lake": lake, "pg": _jdbc_source(dataset, target, FEDERATED_IN_POSTGRES)}}
    return docs


def write_catalogs(dataset: Dataset, target: PostgresTarget | None, directory: Path | None = None) -> dict[str, Path]:
    """Write ``<placement>.toml`` files (atomically) and return their paths."""
    directory = directory or dataset.directory / "catalogs"
    directory.mkdir(parents=True, exist_ok=True)
    written = {}
    for placement, doc in catalog_documents(dataset, target).items():
        path = directory / f"{placement}.toml"
        header = (f"# TPC-DS sf {dataset.sf:g}, placement {placement}: written by `cbo datagen tpcds`.\n"
                  "# Passwords are never stored here, only where to read them from.\n\n")
        tmp = path.with_suffix(".toml.tmp")
        tmp.write_text(header + tomli_w.dumps(doc))
        tmp.replace(path)
        written[placement] = path
    return written


def prepare(sf: float, *, data_dir: Path | None = None, postgres: str | None = "local",
            progress: Callable[[str], None] = lambda _: None) -> dict[str, Path]:
    """Everything a TPC-DS run needs: data, PostgreSQL loaded, catalogs; return placement -> catalog.

    ``postgres`` is "local" (cbo's throwaway server, started if needed), a PostgreSQL URL
    (``postgresql://user@host:port/db``; the password from the URL or ``$PGPASSWORD``), or None
    (Parquet only: just the all-spark placement)."""
    import os

    from cbo.connectors.postgres import client as pg
    from cbo.paths import cache_dir, scale_factor_label

    directory = data_dir or cache_dir() / "tpcds" / scale_factor_label(sf)
    dataset, made = generate(sf, directory, progress)
    progress(f"TPC-DS sf {sf:g}: {'generated' if made else 'present'} in {dataset.directory}")
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
    return write_catalogs(dataset, target)
