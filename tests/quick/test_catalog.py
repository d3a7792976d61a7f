"""Catalog files: valid ones load; every invalid one is reported with file, line and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from cbo.sources.catalog import load_catalog, parse_catalog
from cbo.errors import CatalogError

VALID = """\
[spark]
master = "local[2]"
[spark.conf]
"spark.sql.shuffle.partitions" = 4

[sources.lake]
type = "spark"
[sources.lake.tables.lineitem]
path = "data/lineitem.parquet"
primary_key = ["l_orderkey", "l_linenumber"]
foreign_keys = [{ columns = ["l_orderkey"], references = "orders", referenced_columns = ["o_orderkey"] }]

[sources.pg]
type = "jdbc"
url = "jdbc:postgresql://127.0.0.1:5432/tpch"
user = "cbo"
password_env = "CBO_TEST_PASSWORD"
schema = "tpch_sf1"
[sources.pg.tables.orders]
parquet_copy = "data/orders.parquet"
"""


def parse(text: str, path: Path = Path("/cat/catalog.toml")):
    return parse_catalog(text, path)


def error_of(text: str) -> str:
    with pytest.raises(CatalogError) as caught:
        parse(text)
    return str(caught.value)


def test_valid_catalog_loads_with_paths_relative_to_the_file():
    catalog = parse(VALID)
    lineitem = catalog.table("lineitem")
    assert lineitem.path == Path("/cat/data/lineitem.parquet")
    assert lineitem.primary_key == ("l_orderkey", "l_linenumber")
    assert lineitem.foreign_keys[0].references == "orders"
    assert catalog.spark.master == "local[2]"
    assert catalog.spark.conf == {"spark.sql.shuffle.partitions": "4"}
    pg = catalog.sources["pg"]
    assert pg.dialect == "postgres"
    assert pg.remote_table(catalog.table("orders")) == "tpch_sf1.orders"
    assert catalog.table("pg.orders").parquet_copy == Path("/cat/data/orders.parquet")


def test_password_is_read_from_the_environment_at_use(monkeypatch):
    catalog = parse(VALID)
    monkeypatch.delenv("CBO_TEST_PASSWORD", raising=False)
    with pytest.raises(CatalogError, match="CBO_TEST_PASSWORD, which is not set"):
        catalog.sources["pg"].password()
    monkeypatch.setenv("CBO_TEST_PASSWORD", "s3cret")
    assert catalog.sources["pg"].password() == "s3cret"
    assert "s3cret" not in repr(catalog)


def test_password_file(tmp_path):
    (tmp_path / "pw").write_text("from-file\n")
    text = VALID.replace('password_env = "CBO_TEST_PASSWORD"', 'password_file = "pw"')
    catalog = parse_catalog(text, tmp_path / "catalog.toml")
    assert catalog.sources["pg"].password() == "from-file"


def test_invalid_toml_names_line_and_column():
    message = error_of('[sources.x]\ntype = "spark\n')
    assert message.startswith("/cat/catalog.toml:2:")
    assert "invalid TOML" in message


def test_unknown_key_names_its_line_and_the_closest_key():
    message = error_of(VALID.replace('user = "cbo"', 'usr = "cbo"'))
    assert message.startswith("/cat/catalog.toml:16: sources.pg.usr: unknown key 'usr'")
    assert "'user'" in message


def test_passwords_are_refused_in_the_file():
    message = error_of(VALID.replace('password_env = "CBO_TEST_PASSWORD"', 'password = "x"'))
    assert ":17: sources.pg.password: passwords are not stored in catalog files" in message


def test_unknown_source_type():
    message = error_of('[sources.x]\ntype = "mongo"\n')
    assert message == "/cat/catalog.toml:2: sources.x.type: unknown source type 'mongo' (expected one of: spark, jdbc)"


def test_table_needs_path_or_table():
    message = error_of('[sources.x]\ntype = "spark"\n[sources.x.tables.t]\nformat = "parquet"\n')
    assert message.startswith("/cat/catalog.toml:3: sources.x.tables.t: table 't' needs exactly one of path")


def test_foreign_key_to_unknown_table_suggests_a_name():
    message = error_of(VALID.replace('references = "orders"', 'references = "order"'))
    assert ":11:" in message and "unknown table 'order'" in message and "'orders'" in message


def test_foreign_key_sides_must_have_equal_length():
    message = error_of(VALID.replace('referenced_columns = ["o_orderkey"]', 'referenced_columns = ["a", "b"]'))
    assert "different numbers of columns" in message


def test_jdbc_url_must_be_a_jdbc_url():
    message = error_of(VALID.replace("jdbc:postgresql://127.0.0.1:5432/tpch", "postgresql://h/db"))
    assert ":15: sources.pg.url: not a JDBC URL" in message


def test_no_sources():
    assert "no [sources] defined" in error_of('[spark]\nmaster = "local"\n')


def test_missing_file_is_an_error_not_a_traceback(tmp_path):
    with pytest.raises(CatalogError, match="catalog file not found"):
        load_catalog(tmp_path / "absent.toml")


def test_ambiguous_and_unknown_table_lookup():
    text = VALID + '[sources.pg.tables.lineitem]\n'
    catalog = parse(text)
    with pytest.raises(CatalogError, match="ambiguous: it exists as lake.lineitem, pg.lineitem"):
        catalog.table("lineitem")
    assert catalog.table("pg.lineitem").source == "pg"
    with pytest.raises(CatalogError, match="did you mean 'orders'"):
        catalog.table("ordesr")


def test_spark_connect_remote():
    catalog = parse(VALID.replace('master = "local[2]"', 'remote = "sc://127.0.0.1:15002"'))
    assert catalog.spark.remote == "sc://127.0.0.1:15002"
    assert parse(VALID).spark.remote is None


def test_remote_must_be_a_connect_url_and_excludes_master():
    message = error_of(VALID.replace('master = "local[2]"', 'remote = "spark://h:7077"'))
    assert ":2: spark.remote: expected a Spark Connect URL (sc://host:port)" in message
    message = error_of(VALID.replace('master = "local[2]"', 'master = "local[2]"\nremote = "sc://h:15002"'))
    assert "spark.remote: give master (a driver in this process) or remote (Spark Connect), not both" in message


PUSHDOWN = VALID + """
[sources.pg.pushdown]
disable = ["full_join", "like", "aggregate"]
enable = ["concat"]
"""


def test_pushdown_overrides_are_read_and_applied():
    from cbo.connectors import MARIADB
    from cbo.connectors.capabilities import with_overrides

    source = parse(PUSHDOWN).sources["pg"]
    assert source.pushdown_disable == ("full_join", "like", "aggregate") and source.pushdown_enable == ("concat",)
    assert MARIADB.capabilities is not None
    caps = with_overrides(MARIADB.capabilities, source.pushdown_disable, source.pushdown_enable)
    assert "full" not in caps.join_kinds and "like" not in caps.functions and "aggregate" not in caps.operators
    assert "concat" in caps.functions and "join" in caps.operators
    assert "like" in MARIADB.capabilities.functions     # the connector's table is left alone


def test_unknown_capability_names_its_line_and_the_closest_name():
    message = error_of(PUSHDOWN.replace('"full_join"', '"ful_join"'))
    assert message.startswith("/cat/catalog.toml:23: sources.pg.pushdown.disable: unknown capability 'ful_join' "
                              "(did you mean 'full_join'")
    assert "\n" not in message
    assert "unknown key 'disabled'" in error_of(PUSHDOWN.replace("disable =", "disabled ="))
    not_a_list = PUSHDOWN.replace('enable = ["concat"]', 'enable = "concat"')
    assert "expected a list of capability names" in error_of(not_a_list)
    assert "'like' is both disabled and enabled" in error_of(PUSHDOWN.replace('["concat"]', '["like"]'))
    # only JDBC sources take overrides
    assert "unknown key 'pushdown'" in error_of(VALID.replace('type = "spark"', 'type = "spark"\npushdown = {}'))
