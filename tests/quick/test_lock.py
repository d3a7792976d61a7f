"""The lock (``constraints.txt``, beside ``pyproject.toml``): ``./run`` installs from it, so it must
pin every dependency CI installs, at a version pyproject.toml's ranges allow (``pip install .``
still resolves the ranges: the lock must never pin what the ranges forbid)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

from cbo.app.workload.manifest import read_lock

ROOT = Path(__file__).resolve().parents[2]


def _requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [Requirement(r) for r in project["dependencies"] + project["optional-dependencies"]["test"]]


def _name(requirement: Requirement) -> str:
    return re.sub(r"[-_.]+", "-", requirement.name).lower()


def test_every_dependency_is_pinned_within_its_range():
    lock = read_lock(ROOT / "constraints.txt")
    missing = [r.name for r in _requirements() if _name(r) not in lock]
    assert not missing, f"constraints.txt lacks {missing}: refresh it with ./run lock"
    outside = [f"{r} (locked {lock[_name(r)]})" for r in _requirements()
               if not r.specifier.contains(lock[_name(r)], prereleases=True)]
    assert not outside, f"constraints.txt pins versions pyproject.toml does not allow: {outside}"
    assert "cbo" not in lock   # the project itself is never pinned

