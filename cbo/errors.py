"""Errors a user can act on, and the ones that are cbo's bugs.

Every failure that comes from the user's input or environment (a bad catalog, an unreachable
server, a missing driver) is raised as a :class:`CboError`, and so is an engine's failure to run
a correct plan (:class:`EngineError`: a division by zero, a scalar subquery with two rows). The
CLI prints its message as one line and exits with 2; anything else is a bug
(:class:`InternalError`, or any other exception) and shows as an internal error, exit 1, with
the traceback under ``--debug``.
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


class EngineError(CboError):
    """An engine failed to run cbo's plan for a reason of the query or the data (a division by
    zero, a value that does not convert, a scalar subquery with two rows) or of the engine itself
    (memory, a source gone away): the message is the engine's cause."""


class InternalError(Exception):
    """A bug in cbo, never the user's doing: e.g. SQL that cbo generated and its engine could not
    parse or bind (the query itself had passed cbo's binder). Not a CboError."""
