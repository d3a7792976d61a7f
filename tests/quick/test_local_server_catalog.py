"""Catalogs name cbo's local PostgreSQL, not its port; engines that do not read a source do not
connect to it; a local source that is down says how to bring it back.

No server runs here: a server's state directory is written by hand with a port nobody listens
on, as a stopped server leaves it. The restart itself is in tests/integration/test_local_postgres.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cbo.sources.catalog import parse_catalog
from cbo.errors import CatalogError, SourceUnreachable
from cbo.connectors.localserver import free_port
from cbo.paths import cache_dir

ROOT = Path(__file__).resolve().parents[2]


def stopped_server(directory: Path) -> Path:
    """A local server's state directory as a stopped server leaves it (no one on its port)."""
    directory.mkdir(parents=True)
    (directory / "password").write_text("not-a-real-password\n")
    state = dict(host="127.0.0.1", port=free_port(), user="cbo", database="cbo",
                 data_dir=str(directory / "server" / "data"), password_file=str(directory / "password"),
                 os_user="nobody", bindir="/nonexistent")
    (directory / "server.json").write_text(json.dumps(state))
    return directory


def nation_copy(directory: Path) -> Path:
    path = directory / "nation.parquet"
    pq.write_table(pa.table({"n_nationkey": pa.array(range(25), pa.int32()),
                             "n_name": [f"N{i}" for i in range(25)]}), path)
    return path


def test_local_server_is_named_not_addressed(tmp_path: Path):
    catalog = parse_catalog('[sources.pg]\ntype = "jdbc"\nlocal_server = true\nschema = "s"\n'
                            '[sources.pg.tables.t]\n', tmp_path / "c.toml")
    source = catalog.sources["pg"]
    assert source.local_server == cache_dir() / "postgres"
    assert source.url is None and source.dialect == "postgres"
    relative = parse_catalog('[sources.pg]\ntype = "jdbc"\nlocal_server = "srv/postgres"\n[sources.pg.tables.t]\n',
                             tmp_path / "c.toml")
    assert relative.sources["pg"].local_server == tmp_path / "srv" / "postgres"


@pytest.mark.parametrize("extra, key", [('url = "jdbc:postgresql://127.0.0.1:5432/cbo"', "url"),
                                        ('password_env = "PGPASSWORD"', "password_env"),
                                        ('user = "me"', "user")])
def test_local_server_takes_no_address_or_credentials(tmp_path: Path, extra: str, key: str):
    with pytest.raises(CatalogError) as caught:
        parse_catalog(f'[sources.pg]\ntype = "jdbc"\nlocal_server = true\n{extra}\n[sources.pg.tables.t]\n',
                      tmp_path / "c.toml")
    assert f"c.toml:4: sources.pg.{key}: {key} cannot be given with local_server" in str(caught.value)


def test_bad_local_server_value_is_located(tmp_path: Path):
    with pytest.raises(CatalogError) as caught:
        parse_catalog('[sources.pg]\ntype = "jdbc"\nlocal_server = 5\n[sources.pg.tables.t]\n', tmp_path / "c.toml")
    assert "c.toml:3: sources.pg.local_server: expected true" in str(caught.value)


def test_a_stopped_local_server_says_how_to_start_it(tmp_path: Path):
    server = stopped_server(tmp_path / "cache" / "postgres")
    catalog = parse_catalog(f'[sources.pg]\ntype = "jdbc"\nlocal_server = "{server}"\n[sources.pg.tables.t]\n',
                            tmp_path / "c.toml")
    with pytest.raises(SourceUnreachable) as caught:
        catalog.sources["pg"].jdbc_url()
    message = str(caught.value)
    assert "source 'pg' is cbo's local PostgreSQL" in message and "is not running" in message
    # Not the cache in use: the command names the cache that holds this server.
    assert f"start it with `CBO_CACHE_DIR={server.parent} cbo postgres start`" in message
    assert "not-a-real-password" not in message


def test_a_server_never_created_says_so(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("CBO_CACHE_DIR", str(tmp_path / "cache"))  # a cache with no server yet
    catalog = parse_catalog('[sources.pg]\ntype = "jdbc"\nlocal_server = true\n[sources.pg.tables.t]\n',
                            tmp_path / "c.toml")
    with pytest.raises(SourceUnreachable) as caught:
        catalog.sources["pg"].password()
    assert "has not been created: start it with `cbo postgres start`" in str(caught.value)


def test_an_older_catalog_with_the_local_servers_port_follows_the_server(tmp_path: Path):
    """Catalogs written before local_server carry a port that a restart may change."""
    server = stopped_server(tmp_path / "postgres")
    catalog = parse_catalog(f'[sources.pg]\ntype = "jdbc"\nurl = "jdbc:postgresql://127.0.0.1:39535/cbo"\n'
                            f'user = "cbo"\npassword_file = "{server / "password"}"\n[sources.pg.tables.t]\n',
                            tmp_path / "c.toml")
    assert catalog.sources["pg"].local_server == server
    # An explicit URL to any other server stays as written.
    other = parse_catalog('[sources.pg]\ntype = "jdbc"\nurl = "jdbc:postgresql://db.example:5432/x"\n'
                          f'password_file = "{server / "password"}"\n[sources.pg.tables.t]\n', tmp_path / "c.toml")
    assert other.sources["pg"].local_server is None
    assert other.sources["pg"].jdbc_url() == "jdbc:postgresql://db.example:5432/x"


def test_generated_tpch_catalogs_name_the_server_and_declare_keys(tmp_path: Path):
    from cbo.workloads import tpch

    dataset = tpch.Dataset(tmp_path, 0.01, {})
    docs = tpch.catalog_documents(dataset, tpch.PostgresTarget(local_server=str(tmp_path / "postgres")))
    pg = docs["federated"]["sources"]["pg"]
    assert pg["local_server"] == str(tmp_path / "postgres")
    assert "url" not in pg and "password_file" not in pg
    # Declared keys: an engine that does not connect to the source plans with them all the same.
    assert pg["tables"]["orders"]["primary_key"] == ["o_orderkey"]
    assert pg["tables"]["orders"]["foreign_keys"][0]["references"] == "customer"


def run_cbo(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cbo", *args], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env=os.environ.copy())


@pytest.mark.parametrize("form", ["local_server", "explicit url"])
def test_duckdb_answers_while_the_source_is_down(tmp_path: Path, form: str):
    """`cbo query --engine duckdb` reads the Parquet copy and never connects to the source."""
    copy = nation_copy(tmp_path)
    if form == "local_server":
        where = f'local_server = "{stopped_server(tmp_path / "postgres")}"'
    else:
        where = f'url = "jdbc:postgresql://127.0.0.1:{free_port()}/db"\nuser = "u"\npassword_env = "UNSET_PASSWORD_VAR"'
    catalog = tmp_path / "c.toml"
    catalog.write_text(f'[sources.pg]\ntype = "jdbc"\n{where}\n[sources.pg.tables.nation]\n'
                       f'parquet_copy = "{copy}"\nprimary_key = ["n_nationkey"]\n')
    result = run_cbo("query", "--catalog", str(catalog), "--engine", "duckdb", "--format", "csv",
                     "select count(*) from nation")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "25"


def test_an_engine_that_reads_a_stopped_local_source_says_how_to_start_it(tmp_path: Path):
    server = stopped_server(tmp_path / "postgres")
    catalog = tmp_path / "c.toml"
    catalog.write_text(f'[sources.pg]\ntype = "jdbc"\nlocal_server = "{server}"\n[sources.pg.tables.nation]\n'
                       f'parquet_copy = "{nation_copy(tmp_path)}"\n')
    result = run_cbo("catalog", "check", str(catalog))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cbo: error: source 'pg' is cbo's local PostgreSQL")
    assert "cbo postgres start" in lines[0] and "Traceback" not in result.stderr
