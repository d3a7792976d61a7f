"""Progress of long Spark steps: stage progress from Spark's status tracker, on stderr."""

from __future__ import annotations

import io
import re
import threading
import time

import pytest

from cbo.app.progress import SparkProgress


@pytest.mark.parametrize("tty", [False, True])
def test_spark_progress_shows_the_running_stage(spark, tmp_path, tty):
    """A job held in its tasks until the test has seen its progress (no timing involved)."""
    release = tmp_path / "release"

    def hold(rows):  # type: ignore[no-untyped-def]
        import os
        import time as clock

        while not os.path.exists(str(release)):
            clock.sleep(0.05)
        return rows

    answer: dict[str, int] = {}

    def job() -> None:
        answer["rows"] = spark.sparkContext.parallelize(range(8), 4).mapPartitions(hold).count()

    out = io.StringIO()
    with SparkProgress(lambda: spark.sparkContext, stream=out, tty=tty, delay=0, every=0, poll=0.05):
        worker = threading.Thread(target=job)
        worker.start()
        deadline = time.monotonic() + 300  # a bound for a broken run, not a timing assertion
        while "tasks" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.05)
        release.touch()
        worker.join()
    assert answer["rows"] == 8
    text = out.getvalue()
    if tty:  # one line redrawn in place, erased at the end
        assert "\n" not in text and text.endswith("\r\x1b[K")
        first = text.split("\r\x1b[K")[1]
    else:  # plain lines for a log
        first = text.splitlines()[0]
    assert re.fullmatch(r"Spark: stage \d+ 0/4 tasks, \d+ s", first), text


def test_no_progress_without_a_running_stage(spark):
    out = io.StringIO()
    with SparkProgress(lambda: None, stream=out, tty=False, delay=0, every=0, poll=0.01) as progress:
        assert progress.describe() is None  # Spark not started yet: nothing to show
    assert SparkProgress(lambda: spark.sparkContext).describe() is None  # idle Spark
    assert out.getvalue() == ""
