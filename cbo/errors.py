"""Errors a user can act on.

Every failure that comes from the user's input or environment (a bad catalog, an unreachable
server, a missing driver) is raised as a :class:`CboError`. The CLI prints its message as one
line and exits non-zero; anything else is a bug and shows as an internal error.
"""

from __future__ import annotations


class CboError(Exception):
    """An error whose message alone tells the user what is wrong and where."""


class SqlError(CboError):
    """A problem with the SQL text: syntax, unknown names, types, unsupported constructs."""


class CatalogError(CboError):
    """A catalog file that cannot be read or does not describe valid sources."""


class SourceUnreachable(CboError):
    """A data source (e.g. a PostgreSQL server) that cannot be connected to."""


class SetupError(CboError):
    """A missing piece of the environment: Java, the JDBC driver, PostgreSQL binaries."""


class QueryTimeout(CboError):
    """A query that ran longer than its allowed time."""
