"""The existential benchmark's case selection (``--case``): re-measuring a few cases of seed 003's
family must pick exactly those, and a string matching none is a clear error, not an empty run."""

import pytest

from benchmarks.existential.__main__ import select_cases
from cbo.errors import CboError


def test_no_selection_is_the_whole_family():
    assert len(select_cases([])) == 15


def test_a_selection_keeps_the_cases_whose_name_contains_it():
    # "orders, filtered" has a comma, so cases are chosen one string at a time, not from a list
    names = [c.name for c in select_cases(["20 % / orders (", "/ customer segment"])]
    assert names == ["one row / customer segment (no duplicates)", "0.1 % / customer segment (no duplicates)",
                     "1 % / customer segment (no duplicates)", "20 % / orders (duplicates)",
                     "20 % / customer segment (no duplicates)", "100 % / customer segment (no duplicates)"]


def test_a_selection_matching_nothing_is_named():
    with pytest.raises(CboError, match="no existential case name contains any of"):
        select_cases(["50 %"])
