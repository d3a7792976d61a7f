"""How large a query may be, and the stack that makes it so.

Every stage of cbo walks trees by recursion: sqlglot's parser and generator, the binder,
decorrelation, normalization, the memo's hashing and equality of nested plans and expressions,
the estimator, SQL generation. Python stops recursion at 1,000 frames by default, and
sqlglot's parser alone spends about 25 frames on each level of parentheses, so queries that
machines write (a 300-term sum is 300 nested additions; an ORM nests subqueries a hundred deep)
failed with a RecursionError somewhere along the way.

So the work runs on a thread of its own with a large stack (``STACK_BYTES``; the memory is
reserved, and only what a query uses is touched) and a recursion limit to match
(``RECURSION_LIMIT``), through ``deep`` (on the caller's thread where no such thread can be
made); the limits below keep every query well inside it and
are checked right after parsing, where a query past one is refused with an error naming it:

* ``MAX_PARENTHESES``: parentheses (and subqueries) nested in the text;
* ``MAX_EXPRESSION_DEPTH``: operators nested in one expression (``a + a + ... + a`` with n terms
  nests n - 1 additions; AND, OR and IN lists are flat, any length);
* ``MAX_SUBQUERY_DEPTH``: queries nested in queries (derived tables, IN, EXISTS and scalar
  subqueries, CTE bodies).

``docs/guide/sql.md`` states them for users.
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar, cast

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from cbo.errors import SqlError

MAX_PARENTHESES = 250
MAX_EXPRESSION_DEPTH = 1_000
MAX_SUBQUERY_DEPTH = 150

RECURSION_LIMIT = 200_000
STACK_BYTES = 1 << 30

T = TypeVar("T")

_local = threading.local()
_lock = threading.Lock()
_running = 0           # deep calls in progress (the recursion limit is the interpreter's, not a thread's)
_saved_limit = 0


def deep(function: Callable[..., T], *args: object, **kwargs: object) -> T:
    """``function(*args, **kwargs)`` on a thread with a large stack and a recursion limit to
    match (run directly when already on one); its result returned, its exception raised."""
    if getattr(_local, "deep", False):
        return function(*args, **kwargs)
    outcome: list[tuple[bool, Any]] = []
    finished = threading.Event()

    def run() -> None:
        _local.deep = True
        try:
            outcome.append((True, function(*args, **kwargs)))
        except BaseException as exc:  # re-raised on the calling thread
            outcome.append((False, exc))
        finally:
            finished.set()

    global _running, _saved_limit
    thread = threading.Thread(target=run, name="cbo-deep", daemon=True)
    entered = False
    try:
        with _lock:
            if _running == 0:
                _saved_limit = sys.getrecursionlimit()
                sys.setrecursionlimit(max(RECURSION_LIMIT, _saved_limit))
            _running += 1
            entered = True
            previous = threading.stack_size()
            try:
                threading.stack_size(STACK_BYTES)
                thread.start()
            except (RuntimeError, ValueError, MemoryError):
                pass   # no room for such a stack (ulimit -v): the caller's thread, as before
            finally:
                threading.stack_size(previous)
        if thread.ident is None:
            entered = False
            _leave()
            return function(*args, **kwargs)
        while thread.is_alive():
            thread.join(0.2)   # a short wait keeps Ctrl-C working on the calling thread
    except KeyboardInterrupt:
        if thread.ident is not None and not finished.is_set():
            # Ctrl-C reaches only the main thread: pass it on, so the work stops at its next
            # Python step instead of running on (in a notebook, holding a core) after we return.
            _raise_in(thread, KeyboardInterrupt)
            finished.wait(5)
        raise
    finally:
        if entered:
            _leave()
    ok, value = outcome[0]
    if ok:
        return cast(T, value)
    raise value


def _leave() -> None:
    global _running
    with _lock:
        _running -= 1
        if _running == 0:
            sys.setrecursionlimit(_saved_limit)


def _raise_in(thread: threading.Thread, kind: type[BaseException]) -> None:
    """Raise ``kind`` on ``thread`` when it next runs Python code (a wait inside C code, such
    as a lock or an engine's query, is not cut short)."""
    import ctypes

    if thread.ident is not None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(kind))


def on_deep_stack(function: Callable[..., T]) -> Callable[..., T]:
    """A function (or method) that always runs through ``deep``."""
    @functools.wraps(function)
    def wrapper(*args: object, **kwargs: object) -> T:
        return deep(function, *args, **kwargs)

    return wrapper


def check_tokens(tokens: list[Token]) -> None:
    """Refuse parentheses nested past ``MAX_PARENTHESES`` before sqlglot's parser recurses
    into them."""
    depth = 0
    for token in tokens:
        if token.token_type == TokenType.L_PAREN:
            depth += 1
            if depth > MAX_PARENTHESES:
                raise SqlError(f"line {token.line}, column {token.col}: parentheses nested more than "
                               f"{MAX_PARENTHESES} deep (cbo's limit on nesting in the SQL text)")
        elif token.token_type == TokenType.R_PAREN:
            depth -= 1


def check_statement(statement: exp.Expr, position: Callable[[exp.Expr], str]) -> None:
    """Refuse a statement past ``MAX_EXPRESSION_DEPTH`` or ``MAX_SUBQUERY_DEPTH``; walked
    without recursion (a stack of (node, expression depth, query depth)). ``position`` says
    where a node is in the text (the frontend's, which sits above this module)."""
    stack: list[tuple[exp.Expr, int, int]] = [(statement, 0, 0)]
    while stack:
        node, depth, queries = stack.pop()
        if isinstance(node, exp.Query) and not isinstance(node, exp.Subquery):
            queries += 1
            depth = 0
            if queries > MAX_SUBQUERY_DEPTH:
                raise SqlError(f"{position(node)}queries nested more than {MAX_SUBQUERY_DEPTH} deep "
                               "(cbo's limit on subquery nesting)")
        elif _nests(node):
            depth += 1
            if depth > MAX_EXPRESSION_DEPTH:
                raise SqlError(f"{position(node)}an expression nested more than {MAX_EXPRESSION_DEPTH} deep "
                               f"(cbo's limit on operators within operators, e.g. a sum of more than "
                               f"{MAX_EXPRESSION_DEPTH} terms)")
        for child in node.iter_expressions():
            stack.append((child, depth, queries))


def _nests(node: exp.Expr) -> bool:
    """Whether ``node`` adds a level of expression nesting. AND and OR chains do not: the
    binder flattens them without recursion."""
    return isinstance(node, (exp.Binary, exp.Unary, exp.Func, exp.Case, exp.Cast, exp.In, exp.Between)) \
        and not isinstance(node, exp.Connector)
