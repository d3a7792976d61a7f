"""``python -m benchmarks.join_enumeration.ab``: the side-by-side CPU-time A/B of two checkouts."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.join_enumeration import ab

ROOT = Path(__file__).resolve().parents[2]


def test_cases_expand_tpch_and_refuse_a_bad_name():
    assert ab._cases(["tpch"])[:2] == ["q01", "q02"] and len(ab._cases(["tpch"])) == 22
    assert ab._cases(["star:12:ex", "q05", "chain:5:default"]) == ["star:12:ex", "q05", "chain:5:default"]
    with pytest.raises(SystemExit, match="bad case 'star:12'"):
        ab._cases(["star:12"])


def test_a_checkout_against_itself_reports_the_same_plans(capsys):
    # both workers import this checkout: the same plan, cost and estimates, so exit status 0
    assert ab.main([str(ROOT), "--rounds", "1", "star:4:ex", "chain:3:default"]) == 0
    out = capsys.readouterr().out
    assert out.count("same plan cost and estimates") == 2 and "DIFFERENT" not in out


def test_not_a_checkout_is_refused(tmp_path):
    with pytest.raises(SystemExit):
        ab.main([str(tmp_path), "star:4:ex"])


def test_the_other_side_under_a_named_interpreter(capsys, tmp_path):
    # --other-python runs the other worker under that interpreter (here this one, named by path)
    import sys

    assert ab.main([str(ROOT), "--other-python", sys.executable, "--rounds", "1", "star:3:ex"]) == 0
    out = capsys.readouterr().out
    assert f"other: {ROOT} ({sys.executable})" in out and "same plan cost and estimates" in out
    with pytest.raises(SystemExit):
        ab.main([str(ROOT), "--other-python", str(tmp_path / "no-python"), "star:3:ex"])
    err = capsys.readouterr().err
    assert "--other-python" in err and "is not an executable file" in err
