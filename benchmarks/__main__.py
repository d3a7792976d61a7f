"""The benchmarks index: ``python -m benchmarks`` lists every benchmark with what it measures.

``python -m benchmarks --write-readme`` regenerates the tables of ``docs/results.md``
from the saved JSON (``benchmarks.results_readme``); ``--check-readme`` says whether they drifted.
"""

from __future__ import annotations

import argparse

from benchmarks.index import discover, listing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    parser.add_argument("--write-readme", action="store_true",
                        help="regenerate docs/results.md's tables from the saved JSON")
    parser.add_argument("--check-readme", action="store_true",
                        help="exit 1 if docs/results.md's tables differ from the saved JSON")
    args = parser.parse_args(argv)
    if args.write_readme or args.check_readme:
        from benchmarks import results_readme

        return results_readme.main(["--check"] if args.check_readme else [])
    print(listing(discover()))
    return 0


if __name__ == "__main__":
    from benchmarks.cli import run_main

    run_main(main)
