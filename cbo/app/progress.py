"""Progress lines for long steps, written to stderr so stdout stays machine-readable."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

# The progress line drawn on the terminal, if any: a message first erases it (it is redrawn at
# the next poll), so the two never share a line.
_live: SparkProgress | None = None
_lock = threading.Lock()


def say(message: str) -> None:
    with _lock:
        if _live is not None and _live._drawn and _live.stream is sys.stderr:
            sys.stderr.write("\r\x1b[K")
            _live._drawn = False
        print(message, file=sys.stderr, flush=True)


@contextmanager
def step(title: str) -> Iterator[None]:
    """Print ``title ...`` now and ``title: done in 1.2 s`` when the block finishes."""
    say(f"{title} ...")
    started = time.perf_counter()
    yield
    say(f"{title}: done in {time.perf_counter() - started:.1f} s")


class SparkProgress:
    """Spark's stage progress while a block runs, polled from Spark's status tracker in a thread.

    On a terminal one line is redrawn in place (``Spark: stage 7 (2 running) 45/200 tasks, 12 s``)
    once the block has run ``delay`` seconds (2 s), and erased at the end, so short queries show
    nothing. Otherwise (a log, a pipe) a plain line is written after 10 s and every ``every`` (15) seconds
    of a long run, so a log gets a few lines and not a bar's redraws. ``context`` returns the SparkContext,
    or None while Spark has not started (then there is nothing to show yet)."""

    def __init__(self, context: Callable[[], Any], stream: TextIO | None = None, tty: bool | None = None,
                 delay: float | None = None, every: float = 15.0, poll: float = 0.5):
        self.context = context
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.delay = delay if delay is not None else (2.0 if self.tty else 10.0)
        self.every = every if not self.tty else poll
        self.poll = poll
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._drawn = False

    def __enter__(self) -> SparkProgress:
        global _live
        self._started = time.perf_counter()
        if self.tty:
            _live = self
        self._thread = threading.Thread(target=self._run, name="cbo-spark-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        global _live
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with _lock:
            if self._drawn:
                self._write("\r\x1b[K")
                self._drawn = False
            if _live is self:
                _live = None

    def _run(self) -> None:
        last = None
        if self._stop.wait(self.delay):
            return
        while not self._stop.is_set():
            now = time.perf_counter()
            if last is None or now - last >= self.every:
                text = self.describe()
                if text:
                    last = now
                    elapsed = f"{now - self._started:.0f} s"
                    with _lock:
                        if self.tty:
                            self._write(f"\r\x1b[K{text}, {elapsed}")
                            self._drawn = True
                        else:
                            self._write(f"{text}, {elapsed}\n")
            self._stop.wait(self.poll)

    def describe(self) -> str | None:
        """``Spark: stage 7 (2 running) 45/200 tasks``, or None when no stage runs."""
        try:
            context = self.context()
            if context is None:
                return None
            tracker = context.statusTracker()
            stages = [s for s in (tracker.getStageInfo(i) for i in tracker.getActiveStageIds()) if s is not None]
        except Exception:  # Spark stopping, or the JVM gone: progress is best effort
            return None
        if not stages:
            return None
        done = sum(s.numCompletedTasks for s in stages)
        total = sum(s.numTasks for s in stages)
        first = min(s.stageId for s in stages)
        running = f" ({len(stages)} running)" if len(stages) > 1 else ""
        return f"Spark: stage {first}{running} {done}/{total} tasks"

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # stderr closed
            self._stop.set()


def spark_progress(**options: Any) -> SparkProgress:
    """Stage progress of cbo's shared Spark session (shown once it has started)."""
    from cbo.engines import spark

    def context() -> Any:
        session = spark.current_session()
        # A Spark Connect session has no SparkContext here: its stages run on the server.
        return session.sparkContext if session is not None and not spark.is_connect(session) else None

    return SparkProgress(context, **options)
