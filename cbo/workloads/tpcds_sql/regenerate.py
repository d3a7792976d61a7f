"""Regenerate the 99 TPC-DS query files here from DuckDB 1.4.4's ``tpcds`` extension.

cbo runs on DuckDB 2, whose extensions cannot be downloaded here; the queries come from the
extension packaged on PyPI for DuckDB 1.4.4 (``duckdb-ext-tpcds``), which only loads into
DuckDB 1.4.4. This script makes a side virtualenv with those two packages (in a temporary
directory, removed afterwards), runs itself there to read ``tpcds_queries()``, and writes
``q01.sql`` .. ``q99.sql`` beside itself::

    .venv/bin/python cbo/workloads/tpcds_sql/regenerate.py

It imports nothing of cbo, so that the side environment needs nothing else.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import venv
from pathlib import Path

DUCKDB = "duckdb==1.4.4"
EXTENSION = "duckdb-ext-tpcds==1.4.4.20260205"
HERE = Path(__file__).resolve().parent


def extract(out: Path) -> int:
    """Inside the side environment: write every query the extension holds; return how many."""
    import duckdb
    import duckdb_ext  # the extension package's namespace

    found = [p for root in duckdb_ext.__path__ for p in Path(root).glob("extensions/v1.4.4/*/tpcds.duckdb_extension")]
    if not found:
        raise SystemExit(f"no tpcds extension in {list(duckdb_ext.__path__)}")
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{found[0]}'")
    rows = con.execute("SELECT query_nr, query FROM tpcds_queries() ORDER BY query_nr").fetchall()
    for number, text in rows:
        (out / f"q{number:02d}.sql").write_text(text)
    return len(rows)


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--extract":
        print(f"wrote {extract(Path(sys.argv[2]))} queries to {sys.argv[2]}")
        return
    with tempfile.TemporaryDirectory(prefix="tpcds-queries-") as scratch:
        env = Path(scratch) / "venv"
        venv.create(env, with_pip=True)
        python = env / "bin" / "python"
        subprocess.run([python, "-m", "pip", "install", "--quiet", DUCKDB, EXTENSION], check=True)
        subprocess.run([python, __file__, "--extract", str(HERE)], check=True)


if __name__ == "__main__":
    main()
