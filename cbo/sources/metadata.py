"""Keys from the sources' own metadata, merged into the catalog's declared keys.

Declared keys win: a table whose catalog entry declares a primary key keeps it. For the other
tables of a JDBC source, primary, unique and foreign keys come from the database, as its
connector reads them (``Connector.keys``: ``pg_constraint``, ``information_schema``, SQLite's
``PRAGMA foreign_key_list``).
"""

from __future__ import annotations

from dataclasses import replace

from cbo.catalog_types import Catalog, Source, TableDef, TableKeys
from cbo.connectors import connector_of


def with_database_keys(catalog: Catalog) -> Catalog:
    """The catalog with keys read from every reachable JDBC source."""
    if not catalog.jdbc_sources():
        return catalog
    sources = dict(catalog.sources)
    for source in catalog.jdbc_sources():
        found = connector_of(source).keys(source)
        if not found:
            continue
        tables = {name: _merged(table, found.get(name, TableKeys()), source) for name, table in source.tables.items()}
        sources[source.name] = replace(source, tables=tables)
    return replace(catalog, sources=sources)


def _merged(table: TableDef, keys: TableKeys, source: Source) -> TableDef:
    # Foreign keys in the database name remote tables; map them back to catalog names.
    remote_to_catalog = {(t.remote_name or n): n for n, t in source.tables.items()}
    foreign = tuple(replace(fk, references=remote_to_catalog.get(fk.references, fk.references))
                    for fk in keys.foreign_keys)
    return replace(table,
                   primary_key=table.primary_key or keys.primary_key,
                   unique_keys=table.unique_keys or keys.unique_keys,
                   foreign_keys=table.foreign_keys or foreign)
