"""Keys from the sources' own metadata, merged into the catalog's declared keys.

Declared keys win: a table whose catalog entry declares a primary key keeps it. For the other
tables of a PostgreSQL source, primary, unique and foreign keys come from ``pg_constraint``; of a
MariaDB source, from ``information_schema``.
"""

from __future__ import annotations

from dataclasses import replace

from cbo.sources.catalog import Catalog, Source, TableDef


def with_database_keys(catalog: Catalog) -> Catalog:
    """The catalog with keys read from every reachable JDBC source (PostgreSQL and MariaDB)."""
    from cbo.engines import mariadb, postgres

    sources = dict(catalog.sources)
    if not catalog.jdbc_sources():
        return catalog
    for source in catalog.jdbc_sources():
        if source.dialect == "mysql":
            address = mariadb.address_of(source)
            with mariadb.connect(address, what=f"source '{source.name}'") as conn:
                tables = {name: _merged(table, *mariadb.read_keys(conn, source.schema or address.database,
                                                                  table.remote_name or name), source)
                          for name, table in source.tables.items()}
            sources[source.name] = replace(source, tables=tables)
            continue
        if source.dialect != "postgres":
            continue
        with postgres.connect(postgres.address_of(source), what=f"source '{source.name}'") as conn:
            tables = {}
            for name, table in source.tables.items():
                schema = source.schema or "public"
                primary, uniques, foreign = postgres.read_keys(conn, schema, table.remote_name or name)
                tables[name] = _merged(table, primary, uniques, foreign, source)
        sources[source.name] = replace(source, tables=tables)
    return replace(catalog, sources=sources)


def _merged(table: TableDef, primary, uniques, foreign, source: Source) -> TableDef:
    # Foreign keys in the database name remote tables; map them back to catalog names.
    remote_to_catalog = {(t.remote_name or n): n for n, t in source.tables.items()}
    foreign = tuple(replace(fk, references=remote_to_catalog.get(fk.references, fk.references)) for fk in foreign)
    return replace(table,
                   primary_key=table.primary_key or primary,
                   unique_keys=table.unique_keys or uniques,
                   foreign_keys=table.foreign_keys or foreign)
