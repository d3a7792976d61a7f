"""The test session never uses a user's cache, catalog, cost profile or PostgreSQL settings.

A user who exported ``CBO_CACHE_DIR`` (and others) runs the suite: a pytest run in a
subprocess, with such an environment, checks what cbo sees inside the session.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEST_CACHE = Path(os.environ.get("CBO_TEST_CACHE_DIR") or ROOT / ".cache" / "test").resolve()

PROBE = "CBO_ISOLATION_PROBE"


@pytest.mark.skipif(PROBE not in os.environ, reason="runs only inside test_user_environment_does_not_reach_tests")
def test_probe_environment_seen_by_the_session():
    from cbo.cost.profile import PROFILE_DIR, default_profile
    from cbo.paths import cache_dir

    assert cache_dir() == TEST_CACHE
    assert "CBO_CATALOG" not in os.environ and "CBO_COST_PROFILE" not in os.environ
    assert not [name for name in os.environ if name.startswith("PG")]
    assert default_profile().source == str(PROFILE_DIR / "spark.json")  # the shipped one


def test_user_environment_does_not_reach_tests(tmp_path: Path):
    user_cache = tmp_path / "user-cache"
    env = {**os.environ, PROBE: "1", "CBO_CACHE_DIR": str(user_cache),
           "CBO_CATALOG": str(tmp_path / "mine.toml"), "CBO_COST_PROFILE": str(tmp_path / "mine.json"),
           "PGPASSWORD": "users-secret", "PGHOST": "db.example.invalid"}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         f"{Path(__file__).relative_to(ROOT)}::test_probe_environment_seen_by_the_session"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "1 passed" in result.stdout
    assert not user_cache.exists()
