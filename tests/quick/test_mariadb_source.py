"""MariaDB sources in catalogs, as Spark sees them, and naming a source that stopped answering.

No server runs here: URLs point at ports nobody listens on. The real server is exercised in
tests/integration/test_local_mariadb.py and test_federated3.py.
"""

from __future__ import annotations

import json

import pytest

from cbo.connectors import MARIADB
from cbo.connectors.localserver import free_port
from cbo.connectors.mariadb import client as mariadb
from cbo.errors import CatalogError, CboError, SourceUnreachable
from cbo.exec.source_failure import unreachable_source
from cbo.paths import cache_dir
from cbo.sources.catalog import parse_catalog


def test_a_mariadb_url_gives_the_mysql_dialect(tmp_path):
    catalog = parse_catalog('[sources.m]\ntype = "jdbc"\nurl = "jdbc:mariadb://db.example:3307/shop"\n'
                            'user = "u"\npassword_env = "X"\n[sources.m.tables.t]\n', tmp_path / "c.toml")
    source = catalog.sources["m"]
    assert source.dialect == "mysql"
    address = mariadb.parse_url(source.url, "u", "secret")
    assert (address.host, address.port, address.database, address.user) == ("db.example", 3307, "shop", "u")


def test_local_server_with_the_mysql_dialect_is_the_local_mariadb(tmp_path):
    catalog = parse_catalog('[sources.m]\ntype = "jdbc"\nlocal_server = true\ndialect = "mysql"\n'
                            '[sources.m.tables.t]\n', tmp_path / "c.toml")
    source = catalog.sources["m"]
    assert source.local_server == cache_dir() / "mariadb" and source.server_kind == "MariaDB"
    with pytest.raises(CatalogError, match="not 'oracle'"):
        parse_catalog('[sources.m]\ntype = "jdbc"\nlocal_server = true\ndialect = "oracle"\n'
                      '[sources.m.tables.t]\n', tmp_path / "c.toml")


def test_a_stopped_local_mariadb_says_how_to_start_it(tmp_path):
    state = tmp_path / "mariadb"
    state.mkdir()
    (state / "password").write_text("not-a-real-password\n")
    (state / "server.json").write_text(json.dumps(dict(
        host="127.0.0.1", port=free_port(), user="cbo", database="cbo", data_dir=str(state / "server" / "data"),
        password_file=str(state / "password"), os_user="nobody", server_binary="/nonexistent", pid=0)))
    catalog = parse_catalog(f'[sources.m]\ntype = "jdbc"\nlocal_server = "{state}"\ndialect = "mysql"\n'
                            '[sources.m.tables.t]\n', tmp_path / "c.toml")
    with pytest.raises(SourceUnreachable, match=r"source 'm' is cbo's local MariaDB .* cbo mariadb start"):
        catalog.sources["m"].jdbc_url()


def test_spark_sees_a_mariadb_url_through_its_mysql_dialect():
    # Spark picks the MySQL dialect (backtick quoting) by the jdbc:mysql prefix only.
    assert MARIADB.spark_url("jdbc:mariadb://h:1/d") == "jdbc:mysql://h:1/d?permitMysqlScheme"
    assert MARIADB.spark_url("jdbc:mariadb://h:1/d?a=b") == "jdbc:mysql://h:1/d?a=b&permitMysqlScheme"
    # with the MariaDB driver and its streaming fetch size; a jdbc:mysql: URL is MySQL's driver's
    assert MARIADB.spark_options("jdbc:mariadb://h:1/d") == {"driver": "org.mariadb.jdbc.Driver", "fetchsize": "10000"}
    assert MARIADB.spark_options("jdbc:mysql://h:1/d") == {}


def test_literals_and_identifiers_are_escaped_for_mariadb():
    assert mariadb.sql_string("it's \\ 100%") == "'it''s \\\\ 100%'"
    assert mariadb.identifier("we`ird", "t") == "`we``ird`.`t`"


def test_a_failed_query_names_the_source_that_no_longer_answers(tmp_path):
    port = free_port()
    catalog = parse_catalog(f'[sources.lake]\ntype = "spark"\n[sources.lake.tables.a]\npath = "a.parquet"\n'
                            f'[sources.m]\ntype = "jdbc"\nurl = "jdbc:mariadb://127.0.0.1:{port}/d"\n'
                            '[sources.m.tables.t]\n', tmp_path / "c.toml")
    message = unreachable_source(catalog, "SQLNonTransientConnectionException: Could not connect")
    assert message is not None and message.startswith("source 'm' failed while the query ran:")
    assert f"127.0.0.1:{port}" in message


def test_a_non_mariadb_url_is_refused():
    with pytest.raises(CboError, match="not a MariaDB URL"):
        mariadb.parse_url("jdbc:postgresql://h/d")
