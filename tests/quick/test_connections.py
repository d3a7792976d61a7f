"""Reaching sources: URLs parsed, passwords never shown, missing drivers and servers named."""

from __future__ import annotations

from pathlib import Path

import pytest

from cbo.connectors import CONNECTORS, MARIADB, POSTGRES
from cbo.connectors.localserver import free_port
from cbo.connectors.postgres import client as postgres
from cbo.engines import spark
from cbo.errors import SetupError, SourceUnreachable
from cbo.sources.catalog import SparkSettings


def test_jdbc_and_libpq_urls_parse_alike():
    a = postgres.parse_url("jdbc:postgresql://db.example:5433/tpch?user=alice&password=pw")
    b = postgres.parse_url("postgresql://alice:pw@db.example:5433/tpch")
    assert a == b
    assert (a.host, a.port, a.database, a.user, a.password) == ("db.example", 5433, "tpch", "alice", "pw")
    assert a.jdbc_url() == "jdbc:postgresql://db.example:5433/tpch"


def test_redact_removes_passwords_from_urls():
    assert postgres.redact("postgresql://alice:pw@h:1/db") == "postgresql://alice@h:1/db"
    assert postgres.redact("jdbc:postgresql://h:1/db?user=a&password=pw") == "jdbc:postgresql://h:1/db?user=a"
    assert "pw" not in postgres.parse_url("postgresql://alice:pw@h:1/db").url()


def test_unreachable_server_is_one_line_naming_it():
    port = free_port()
    with pytest.raises(SourceUnreachable) as caught:
        postgres.connect(postgres.PgAddress("127.0.0.1", port, "db", "u", "p"), what="source 'pg'")
    message = str(caught.value)
    assert message.startswith(f"cannot connect to source 'pg' at 127.0.0.1:{port}/db:")
    assert "\n" not in message and "refused" in message.lower()


def test_jdbc_driver_from_environment_must_exist(monkeypatch, tmp_path):
    monkeypatch.setenv("CBO_JDBC_JAR", str(tmp_path / "missing.jar"))
    with pytest.raises(SetupError, match="CBO_JDBC_JAR names .*missing.jar, which does not exist"):
        spark.find_jdbc_driver(SparkSettings())
    jar = tmp_path / "postgresql.jar"
    jar.write_bytes(b"")
    monkeypatch.setenv("CBO_JDBC_JAR", str(jar))
    assert spark.find_jdbc_driver(SparkSettings()).jars == (str(jar),)


def test_jdbc_driver_falls_back_to_maven_coordinates(monkeypatch, tmp_path):
    monkeypatch.delenv("CBO_JDBC_JAR", raising=False)
    for connector in CONNECTORS:   # no connector's driver installed
        monkeypatch.setattr(connector, "driver_jar", Path(tmp_path / f"absent-{connector.dialect}.jar"))
    assert spark.find_jdbc_driver(SparkSettings()) is None
    settings = SparkSettings(jdbc_packages=("org.postgresql:postgresql:42.7.4",))
    assert spark.find_jdbc_driver(settings).packages == ("org.postgresql:postgresql:42.7.4",)
    # One driver from Debian, the other from Maven: both reach Spark.
    mariadb_jar = tmp_path / "mariadb-java-client.jar"
    mariadb_jar.write_bytes(b"")
    monkeypatch.setattr(MARIADB, "driver_jar", mariadb_jar)
    both = spark.find_jdbc_driver(settings)
    assert both.jars == (str(mariadb_jar),) and both.packages == ("org.postgresql:postgresql:42.7.4",)


def test_remote_table_names_are_quoted():
    from cbo.sources.catalog import Source, TableDef

    table = TableDef(name="odd", source="pg", remote_name='we"ird')
    source = Source(name="pg", type="jdbc", tables={"odd": table}, schema="my schema", connector=POSTGRES)
    assert spark.remote_table_sql(source, table) == '"my schema"."we""ird"'
