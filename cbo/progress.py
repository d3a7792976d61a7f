"""Progress lines for long steps, written to stderr so stdout stays machine-readable."""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import Iterator


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@contextmanager
def step(title: str) -> Iterator[None]:
    """Print ``title ...`` now and ``title: done in 1.2 s`` when the block finishes."""
    say(f"{title} ...")
    started = time.perf_counter()
    yield
    say(f"{title}: done in {time.perf_counter() - started:.1f} s")
