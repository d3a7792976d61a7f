"""``cbo datagen tpch``: idempotent, repairs interrupted runs, loads PostgreSQL and MariaDB all or nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from cbo.sources.catalog import load_catalog
from cbo.catalog_types import TableKeys
from cbo.connectors.postgres.loader import load_parquet_schema, loaded_manifest
from cbo.connectors.mariadb.server import LocalMariaDB
from cbo.connectors.postgres.server import LocalPostgres
from cbo.sources.metadata import with_database_keys
from cbo.workloads import tpch

SF = 0.01


def datagen(out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cbo", "datagen", "tpch", "--sf", str(SF), "--out", str(out),
                           "--postgres", "local", "--mariadb", "local"], capture_output=True, text=True, timeout=300)


def test_datagen_twice_changes_nothing_the_second_time(tmp_path):
    first = datagen(tmp_path)
    assert first.returncode == 0, first.stderr
    files = {p.name: p.stat().st_mtime_ns for p in tmp_path.glob("*.parquet")}
    assert len(files) == 8
    second = datagen(tmp_path)
    assert second.returncode == 0, second.stderr
    assert "present" in second.stderr
    assert f"PostgreSQL schema {tpch.postgres_schema(SF)}: already loaded" in second.stderr
    assert f"MariaDB database {tpch.mariadb_database(SF)}: already loaded" in second.stderr
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.glob("*.parquet")} == files
    for placement in tpch.PLACEMENTS:
        catalog = load_catalog(tmp_path / "catalogs" / f"{placement}.toml")
        assert {t.name for t in catalog.tables()} == set(tpch.TABLES)
    federated = load_catalog(tmp_path / "catalogs" / "federated.toml")
    assert {t.name for t in federated.tables() if t.source == "pg"} == set(tpch.FEDERATED_IN_POSTGRES)
    federated3 = load_catalog(tmp_path / "catalogs" / "federated3.toml")
    assert {t.name for t in federated3.tables() if t.source == "maria"} == set(tpch.FEDERATED3_IN_MARIADB)
    text = (tmp_path / "catalogs" / "all-postgres.toml").read_text()
    assert LocalPostgres().start().password() not in text
    assert LocalMariaDB().start().password() not in (tmp_path / "catalogs" / "federated3.toml").read_text()


def test_a_damaged_dataset_is_generated_again(tmp_path):
    dataset, made = tpch.generate(SF, tmp_path)
    assert made
    lineitem = dataset.table_path("lineitem")
    lineitem.write_bytes(lineitem.read_bytes()[: 1000])  # as if a copy was cut short
    assert tpch.existing(tmp_path, SF) is None
    _, made_again = tpch.generate(SF, tmp_path)
    assert made_again and tpch.existing(tmp_path, SF) is not None


def test_another_scale_factor_in_the_same_directory_is_refused(tmp_path):
    tpch.generate(SF, tmp_path)
    with pytest.raises(Exception, match="holds TPC-H at scale factor 0.01, not 0.02"):
        tpch.generate(0.02, tmp_path)


def test_a_failed_load_leaves_the_previous_schema_intact(tpch_catalogs, tmp_path):
    info = LocalPostgres().start()
    dataset = tpch.existing(tpch_catalogs["all-spark"].parent.parent, SF)
    assert dataset is not None
    schema = "cbo_test_atomic"
    with psycopg.connect(**info.conninfo(), autocommit=True) as conn:
        good = {"region": dataset.table_path("region")}
        manifest = {"test": 1}
        assert load_parquet_schema(conn, schema, good, {"region": TableKeys(("r_regionkey",))}, manifest)
        broken = {"nation": dataset.table_path("nation"), "missing": tmp_path / "missing.parquet"}
        with pytest.raises(Exception):
            load_parquet_schema(conn, schema, broken, {}, {"test": 2})
        assert loaded_manifest(conn, schema) == manifest
        assert conn.execute(f"select count(*) from {schema}.region").fetchone() == (5,)
        leftovers = conn.execute("select nspname from pg_namespace where nspname like %s",
                                 (schema + "__%",)).fetchall()
        assert leftovers == []
        conn.execute(f"drop schema {schema} cascade")


def test_keys_of_postgres_tables_come_from_its_metadata(tpch_catalogs):
    from dataclasses import replace

    catalog = load_catalog(tpch_catalogs["federated"])
    # Generated catalogs declare the keys (so an engine that does not connect has them too);
    # a hand-written catalog may leave them to the database: drop them from the PostgreSQL tables.
    pg = catalog.sources["pg"]
    bare = {name: replace(t, primary_key=(), foreign_keys=()) for name, t in pg.tables.items()}
    catalog = replace(catalog, sources={**catalog.sources, "pg": replace(pg, tables=bare)})
    assert catalog.table("orders").primary_key == ()
    enriched = with_database_keys(catalog)
    orders = enriched.table("orders")
    assert orders.primary_key == ("o_orderkey",)
    assert [(fk.columns, fk.references) for fk in orders.foreign_keys] == [(("o_custkey",), "customer")]
    # Declared keys of Parquet tables are kept as they are.
    assert enriched.table("lineitem").primary_key == ("l_orderkey", "l_linenumber")
