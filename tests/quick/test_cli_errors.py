"""The CLI: errors a user can act on are one line on stderr, a non-zero exit, no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cbo.localpg import free_port


def run_cbo(*args: str, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cbo", *args], capture_output=True, text=True, timeout=120)


def assert_one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("cbo: error: ")
    return lines[0]


def test_bad_catalog_file_names_file_line_and_key(tmp_path: Path):
    catalog = tmp_path / "bad.toml"
    catalog.write_text('[sources.lake]\ntype = "spark"\n[sources.lake.tables.t]\npaht = "t.parquet"\n')
    line = assert_one_line_error(run_cbo("catalog", "check", str(catalog)))
    assert f"{catalog}:4: sources.lake.tables.t.paht: unknown key 'paht'" in line
    assert "'path'" in line


def test_unreachable_server_names_the_source(tmp_path: Path):
    port = free_port()
    catalog = tmp_path / "pg.toml"
    catalog.write_text(f'[sources.pg]\ntype = "jdbc"\nurl = "jdbc:postgresql://127.0.0.1:{port}/db"\n'
                       'user = "u"\n[sources.pg.tables.t]\n')
    line = assert_one_line_error(run_cbo("catalog", "check", str(catalog)))
    assert f"cannot connect to source 'pg' at 127.0.0.1:{port}/db" in line


def test_debug_shows_the_traceback(tmp_path: Path):
    result = run_cbo("--debug", "catalog", "check", str(tmp_path / "absent.toml"))
    assert result.returncode != 0 and "Traceback" in result.stderr


def test_bad_scale_factor():
    line = assert_one_line_error(run_cbo("datagen", "tpch", "--sf", "0", "--out", "/tmp/never-used"))
    assert "scale factor must be positive" in line
