"""The STATS data (five tables of Stack Exchange's Cross Validated, from STATS-CEB).

Real, skewed and correlated data for estimation work. Parquet copies ship with the project
(``stats_parquet/``, zstd, 1.9 MB; its README carries the licence); ``$CBO_STATS_DATA`` may name
a folder of the CSV files instead, which ``prepare`` converts to Parquet with DuckDB (typed:
integers and timestamps, as the shipped copies are). ``prepare`` copies the Parquet files to
its output folder, loads PostgreSQL (primary keys; the foreign keys
are declared in the catalogs only, since the data holds references to deleted rows), and writes
a catalog for each side. Licence of the data: CC BY-SA (Stack Exchange data dump).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import tomli_w

from cbo.catalog_types import ForeignKey, TableKeys
from cbo.connectors.postgres.loader import load_parquet_schema
from cbo.errors import CboError

if TYPE_CHECKING:
    from cbo.connectors.postgres.server import ServerInfo

TABLES = ("users", "posts", "badges", "postLinks", "tags")
SCHEMA = "stats_data"
FOREIGN_KEYS = {
    "badges": (ForeignKey(("UserId",), "users", ("Id",)),),
    "posts": (ForeignKey(("OwnerUserId",), "users", ("Id",)), ForeignKey(("LastEditorUserId",), "users", ("Id",))),
    "postLinks": (ForeignKey(("PostId",), "posts", ("Id",)), ForeignKey(("RelatedPostId",), "posts", ("Id",))),
    "tags": (ForeignKey(("ExcerptPostId",), "posts", ("Id",)),),
}


SHIPPED = Path(__file__).resolve().parent / "stats_parquet"


def source_directory() -> Path:
    """``$CBO_STATS_DATA`` (CSV files) when set, else the Parquet copies shipped with cbo."""
    explicit = os.environ.get("CBO_STATS_DATA")
    if explicit:
        return Path(explicit)
    return SHIPPED


def prepare(out: Path, postgres_info: ServerInfo | None = None,
            progress: Callable[[str], None] = lambda _: None) -> dict[str, Path]:
    """Parquet copies in ``out``, PostgreSQL loaded when ``postgres_info`` (a local ServerInfo) is given."""
    source = source_directory()
    suffix = "parquet" if all((source / f"{t}.parquet").exists() for t in TABLES) else "csv"
    missing = [t for t in TABLES if not (source / f"{t}.{suffix}").exists()]
    if missing:
        raise CboError(f"STATS data not found in {source} (missing {', '.join(missing)}.csv): "
                       "set CBO_STATS_DATA to a folder of the CSV files")
    out.mkdir(parents=True, exist_ok=True)
    connection = duckdb.connect()
    for table in TABLES:
        target = out / f"{table}.parquet"
        if not target.exists() and suffix == "parquet":
            partial = out / f".{table}.parquet.tmp"
            shutil.copyfile(source / f"{table}.parquet", partial)
            partial.replace(target)
        elif not target.exists():
            progress(f"converting {table}.csv to Parquet")
            partial = out / f".{table}.parquet.tmp"
            csv = str(source / f"{table}.csv").replace("'", "''")
            connection.execute(f"copy (select * from read_csv('{csv}', header = true, "
                               f"timestampformat = '%Y-%m-%d %H:%M:%S')) to '{partial}' (format parquet)")
            partial.replace(target)
    catalogs = {"spark": _write_catalog(out / "stats-spark.toml", {"sources": {"lake": {"type": "spark", "tables": {
        t: _table_entry(out, t, parquet=True) for t in TABLES}}}})}
    if postgres_info is not None:
        from cbo.connectors.postgres import client as pg

        address = pg.parse_url(postgres_info.jdbc_url, postgres_info.user, postgres_info.password())
        keys = {t: TableKeys(("Id",)) for t in TABLES}
        with pg.connect(address) as conn:
            load_parquet_schema(conn, SCHEMA, {t: out / f"{t}.parquet" for t in TABLES}, keys,
                                {"dataset": "stats", "loader": "cbo/1"}, lambda m: progress(f"PostgreSQL: {m}"))
        catalogs["postgres"] = _write_catalog(out / "stats-postgres.toml", {"sources": {"pg": {
            "type": "jdbc", "local_server": str(Path(postgres_info.password_file).parent), "schema": SCHEMA,
            "tables": {t: _table_entry(out, t, parquet=False) for t in TABLES}}}})
    return catalogs


def _table_entry(out: Path, table: str, parquet: bool) -> dict:
    entry: dict = {("path" if parquet else "parquet_copy"): str(out / f"{table}.parquet"), "primary_key": ["Id"]}
    if table in FOREIGN_KEYS:
        entry["foreign_keys"] = [{"columns": list(fk.columns), "references": fk.references,
                                  "referenced_columns": list(fk.referenced_columns)} for fk in FOREIGN_KEYS[table]]
    return entry


def _write_catalog(path: Path, document: dict) -> Path:
    tmp = path.with_suffix(".tmp")
    tmp.write_text("# STATS data (CC BY-SA, Stack Exchange), written by cbo.\n" + tomli_w.dumps(document))
    tmp.replace(path)
    return path


__all__ = ["prepare", "TABLES"]
