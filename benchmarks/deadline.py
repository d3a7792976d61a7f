"""Work that may hang, run under a deadline it cannot escape.

Planning is pure Python: a thread that runs past its time cannot be stopped, and a query that
hangs the planner (an exponential rewrite, a cross join of every table) would hang the harness
with it. A ``Worker`` runs each call in a child process that keeps its state between calls (a
planner, a DuckDB connection); a call that runs past its deadline kills the child, raises
``DeadlineExceeded``, and the next call starts a fresh child.

Children are forked from a fork server (``multiprocessing``'s ``forkserver``) that imported the
modules the calls need once: a new child costs a fork, not an interpreter start, and inherits
no thread or open connection of the harness's.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import traceback
from collections.abc import Callable, Sequence
from typing import Any

PRELOAD = ["cbo.planner", "cbo.sqlgen", "cbo.app.session", "duckdb", "pyarrow.parquet", "sqlglot"]


class DeadlineExceeded(Exception):
    """The call ran past its time limit; its child process was killed."""


class CallFailed(Exception):
    """The call raised in the child: ``kind`` is the exception's class name, ``trace`` its traceback."""

    def __init__(self, kind: str, message: str, trace: str):
        super().__init__(f"{kind}: {message}")
        self.kind, self.message, self.trace = kind, message, trace


def _serve(connection: multiprocessing.connection.Connection, factory: Callable[..., Any],
           args: Sequence[Any]) -> None:
    try:
        handler = factory(*args)
    except BaseException as exc:
        connection.send(("raised", type(exc).__name__, str(exc), traceback.format_exc(limit=8)))
        return
    connection.send(("ready", None))
    while True:
        try:
            message = connection.recv()
        except EOFError:
            return
        if message is None:
            return
        method, params = message
        try:
            connection.send(("ok", getattr(handler, method)(*params)))
        except BaseException as exc:  # everything the call raised goes back to the caller
            connection.send(("raised", type(exc).__name__, str(exc), traceback.format_exc(limit=8)))


class Worker:
    """Calls methods of ``factory(*args)``, an object living in a child process, each under a
    deadline. ``factory`` and the arguments must be picklable (a module-level function)."""

    def __init__(self, factory: Callable[..., Any], args: Sequence[Any] = (), preload: Sequence[str] = PRELOAD,
                 startup: float = 600.0):
        """``startup``: how long a new child may take to make its object (imports, warming up)
        before the first call's deadline starts."""
        self.factory, self.args, self.startup = factory, tuple(args), startup
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(list(preload))
        self._process: Any = None
        self._connection: multiprocessing.connection.Connection | None = None
        self.restarts = 0   # children killed at a deadline (or found dead)

    def _start(self) -> multiprocessing.connection.Connection:
        """The running child's connection; a new child (once it made its object) if there is none."""
        if self._connection is not None:
            return self._connection
        for attempt in (1, 2):   # a child that dies while starting gets one more try
            parent, child = self._context.Pipe()
            self._process = self._context.Process(target=_serve, args=(child, self.factory, self.args), daemon=True)
            self._process.start()
            child.close()
            self._connection = parent
            try:
                if not parent.poll(self.startup):
                    self._kill()
                    raise CallFailed("StartupTimeout", f"the worker did not start within {self.startup:g} s", "")
                reply = parent.recv()
            except (EOFError, OSError):
                self._kill()
                if attempt == 2:
                    raise CallFailed("ChildDied", "the worker process died while starting", "") from None
                continue
            if reply[0] != "ready":
                self._kill()
                raise CallFailed(*reply[1:])
            break
        assert self._connection is not None
        return self._connection

    def call(self, method: str, *params: Any, timeout: float) -> Any:
        """``method(*params)`` on the child's object; its result, or CallFailed with what it
        raised, or DeadlineExceeded after ``timeout`` seconds."""
        connection = self._start()   # a new child's start-up is not part of the call's time
        try:
            connection.send((method, params))
            if not connection.poll(timeout):
                self._kill()
                raise DeadlineExceeded(f"{method} ran past its {timeout:g} s limit")
            reply = connection.recv()
        except (EOFError, OSError, BrokenPipeError) as exc:   # the child died (out of memory, a crash)
            self._kill()
            raise CallFailed("ChildDied", f"the worker process died: {exc or type(exc).__name__}", "") from None
        if reply[0] == "ok":
            return reply[1]
        raise CallFailed(*reply[1:])

    def _kill(self) -> None:
        self.restarts += 1
        if self._process is not None:
            self._process.kill()
            self._process.join(5)
        if self._connection is not None:
            self._connection.close()
        self._process = self._connection = None

    def close(self) -> None:
        if self._connection is not None:
            try:
                self._connection.send(None)
            except (OSError, BrokenPipeError):
                pass
            self._connection.close()
        if self._process is not None:
            self._process.join(5)
            if self._process.is_alive():
                self._process.kill()
                self._process.join(5)
        self._process = self._connection = None

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
