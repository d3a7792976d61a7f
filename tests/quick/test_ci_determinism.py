"""CI runs the same cases for the same commit: hypothesis is derandomized unless asked not to be."""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st


def test_the_default_profile_is_derandomized_without_an_example_database():
    if os.environ.get("HYPOTHESIS_PROFILE", "ci") != "ci":
        return   # a fresh-exploration run asked for randomness on purpose
    assert settings.default.derandomize
    assert settings.default.database is None


drawn: list[list[int]] = []


@settings(max_examples=5)
@given(st.lists(st.integers()))
def _draw(values: list[int]) -> None:
    drawn[-1].append(len(values) * 1000003 + sum(values))


def test_two_runs_draw_the_same_cases():
    if os.environ.get("HYPOTHESIS_PROFILE", "ci") != "ci":
        return
    for _ in range(2):
        drawn.append([])
        _draw()
    assert drawn[0] == drawn[1]
