"""`./run setup` shows pip's progress while it installs, and keeps pip's whole output in a log.

Hermetic: the virtualenv is a temporary directory whose ``python`` is a stand-in that prints
what pip prints; Java, PostgreSQL's binaries and the JDBC driver are stand-ins too, so set-up
installs nothing on the machine.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

FAKE_PIP = """#!/usr/bin/env bash
echo "pip called with: $*"
echo "Collecting pyspark>=3.5 (from cbo==0.1.0)"
echo "  Downloading pyspark-3.5.1.tar.gz (317.0 MB)"
echo "Collecting duckdb>=1.0"
echo "Building wheels for collected packages: pyspark"
echo "Installing collected packages: duckdb, pyspark"
echo "Successfully installed duckdb-1.1.0 pyspark-3.5.1"
exit ${FAKE_PIP_STATUS:-0}
"""


def executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def run_setup(tmp_path: Path, status: int) -> subprocess.CompletedProcess[str]:
    venv, tools = tmp_path / "venv", tmp_path / "tools"
    (venv / "bin").mkdir(parents=True)
    tools.mkdir()
    executable(venv / "bin" / "python", FAKE_PIP)
    executable(tools / "java", "#!/bin/sh\nexit 0\n")
    executable(tools / "initdb", "#!/bin/sh\nexit 0\n")
    (tools / "python3").symlink_to(sys.executable)
    env = {**os.environ, "CBO_VENV": str(venv), "CBO_PG_BINDIR": str(tools), "CBO_JDBC_JAR": str(tools / "x.jar"),
           "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}", "FAKE_PIP_STATUS": str(status)}
    return subprocess.run([str(ROOT / "run"), "setup"], env=env, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)


def test_setup_shows_pip_progress_and_keeps_the_log(tmp_path: Path):
    result = run_setup(tmp_path, 0)
    assert result.returncode == 0, result.stderr
    assert "[setup] pip installing: Collecting pyspark>=3.5" in result.stderr
    assert "[setup] pip installing: Successfully installed duckdb-1.1.0 pyspark-3.5.1" in result.stderr
    assert "Downloading" not in result.stderr  # compact: one line per package, not pip's chatter
    log = (tmp_path / "venv" / "pip-install.log").read_text()
    assert "Downloading pyspark-3.5.1.tar.gz" in log  # the whole output is kept
    # cbo at the lock's exact versions (constraints.txt), the set CI tests
    assert "pip called with: -m pip install -e .[test] -c constraints.txt" in log
    assert (tmp_path / "venv" / ".cbo-installed").is_file()


@pytest.mark.parametrize("status", [1])
def test_failed_pip_stops_setup_with_the_log(tmp_path: Path, status: int):
    result = run_setup(tmp_path, status)
    assert result.returncode == 2
    assert "[setup] error: pip install failed (full log:" in result.stderr
    assert not (tmp_path / "venv" / ".cbo-installed").exists()
