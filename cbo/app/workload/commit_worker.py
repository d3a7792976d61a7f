"""A worker that plans and runs queries with the cbo of another checkout (``compare --commits``).

Run as a script by path, with the other checkout first on ``PYTHONPATH``, so that ``import cbo``
finds that checkout's cbo: this file imports nothing of the workload runner, only cbo's lasting
public API (``cbo.Session``: ``plan``, ``run``, ``planner``), so it works with commits from
before the runner existed. It reads one JSON request per line on stdin and answers one JSON
line on stdout:

* ``{"op": "init", "catalog": FILE, "dialect": D, "configs": {label: settings}}``;
* ``{"op": "plan", "config": label, "sql": TEXT}``: the plan (EXPLAIN text and JSON tree), its
  cost, planning time and partition count;
* ``{"op": "run", "config": label, "sql": TEXT, "untimed_planning": bool, "timeout": S}``: the
  rows, normalized to JSON values, and the seconds of the run alone (planning included unless
  ``untimed_planning``: then the plan of the last ``plan`` request runs);
* ``{"op": "warm_up", "sql": TEXT}``: run a small query once, untimed (a fresh JVM's first).

Every answer is ``{"ok": true, ...}`` or ``{"ok": false, "error": first line, "timeout": bool}``.
"""

from __future__ import annotations

import sys

if __name__ == "__main__" and sys.path and sys.path[0].endswith("workload"):
    del sys.path[0]   # this file's folder: its modules must not shadow anything the other cbo imports

import datetime as dt  # noqa: E402
import decimal  # noqa: E402
import enum  # noqa: E402
import json  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402


def _value(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    return value


def _plain(value: Any) -> Any:
    """A setting as JSON holds it (written here, not imported: the checkout under test may predate
    ``cbo.settings.settings_record``)."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (frozenset, set)):
        return sorted((_plain(v) for v in value), key=str)
    return value


class Worker:
    def __init__(self) -> None:
        self.sessions: dict[str, Any] = {}
        self.planned: dict[str, Any] = {}
        self.tag = 0

    def init(self, request: dict[str, Any]) -> dict[str, Any]:
        from cbo.app.session import Session

        for label, settings in request["configs"].items():
            self.sessions[label] = Session(request["catalog"], dialect=request["dialect"], settings=settings)
        described = {}
        for label, session in self.sessions.items():
            settings = session.planner.settings
            described[label] = {"settings": {k: _plain(v) for k, v in vars(settings).items()}}
        # the package imported (the checkout under test): the parent of this module's package
        return {"configurations": described, "cbo": getattr(sys.modules["cbo"], "__file__", None)}

    def plan(self, request: dict[str, Any]) -> dict[str, Any]:
        session = self.sessions[request["config"]]
        view = session.plan(request["sql"])
        planned = view.planned
        self.planned[request["config"]] = planned
        optimized = getattr(planned, "optimized", None)
        counters = getattr(optimized, "counters", None)
        return {"plan": view.text(), "tree": view.info.to_json(),
                "cost": getattr(optimized, "cost", None),
                "plan_ms": round(counters.elapsed_ms, 2) if counters is not None else None,
                "partitions": getattr(planned, "partitions", None)}

    def run(self, request: dict[str, Any]) -> dict[str, Any]:
        session = self.sessions[request["config"]]
        label = request["config"]
        if request.get("untimed_planning"):
            planned = self.planned[label]
            work = lambda: session.run(planned)[1]
        else:
            work = lambda: session.run(session.planner.plan(request["sql"]))[1]
        from cbo.engines.spark import spark_session

        spark = spark_session(session.catalog.spark, need_jdbc=bool(session.catalog.jdbc_sources()))
        context = spark.sparkContext   # a job group: the watcher's thread cancels it by name
        self.tag += 1
        group = f"cbo-commit-worker-{self.tag}"
        limit = request.get("timeout")
        finished, fired = threading.Event(), threading.Event()

        def watch() -> None:
            if limit is None or finished.wait(limit):
                return
            fired.set()
            while not finished.is_set():
                try:
                    context.cancelJobGroup(group)
                except Exception:
                    pass
                finished.wait(0.2)

        watcher = threading.Thread(target=watch, daemon=True)
        context.setJobGroup(group, "cbo workload compare", interruptOnCancel=True)
        watcher.start()
        started = time.perf_counter()
        try:
            rows = work()
        except Exception:
            if fired.is_set():
                return {"ok": False, "timeout": True, "error": f"ran past its limit of {limit:g} s"}
            raise
        finally:
            seconds = time.perf_counter() - started
            finished.set()
            watcher.join()
            context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]   # None: removed
        if fired.is_set() or (limit is not None and seconds > limit):
            return {"ok": False, "timeout": True, "error": f"ran past its limit of {limit:g} s"}
        return {"rows": [[_value(v) for v in row] for row in rows], "seconds": seconds}


def main() -> None:
    worker = Worker()
    for line in sys.stdin:
        request = json.loads(line)
        try:
            op = request["op"]
            if op == "init":
                answer = worker.init(request)
            elif op == "plan":
                answer = worker.plan(request)
            elif op == "run":
                answer = worker.run(request)
            elif op == "warm_up":   # a fresh JVM's first query: untimed, before any that counts
                session = next(iter(worker.sessions.values()))
                session.query(request["sql"])
                answer = {}
            else:
                raise ValueError(f"unknown request {op!r}")
            answer.setdefault("ok", True)
        except Exception as exc:  # reported to the parent, which records it as the configuration's failure
            text = str(exc).strip()
            first = text.splitlines()[0][:300] if text else type(exc).__name__
            answer = {"ok": False, "timeout": False, "error": first}
        sys.stdout.write(json.dumps(answer, default=str) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
