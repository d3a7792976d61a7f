"""How every benchmark script ends: its exit code, and a cbo error as one line with exit code 2."""

from __future__ import annotations

import sys
from typing import Callable

from cbo.errors import CboError


def run_main(main: Callable[[], int]) -> None:
    try:
        sys.exit(main())
    except CboError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
