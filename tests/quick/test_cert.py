"""The ``cert`` family (estimator consistency after CERT): a derandomized slice of every
variant but the LEFT JOIN one passes at every memo group; the oracle catches a larger estimate
for a more restrictive query; and the family's regression cases replay (an open one, a
``# open:`` line before it, is expected to fail until fixed).

The large run is ``python -m benchmarks.equivalence --family cert``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from benchmarks.equivalence import __main__ as equivalence
from benchmarks.equivalence.cert import CertChecker, Inconsistent


@pytest.fixture(scope="module")
def checker(tmp_path_factory):  # type: ignore[no-untyped-def]
    return CertChecker(tmp_path_factory.mktemp("cert"), ("conjunct", "range", "semi"))


def test_a_derandomized_slice_is_consistent_at_every_group(checker):
    seen: dict[str, int] = {}

    @settings(max_examples=60, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(checker.cases())
    def check(case):  # type: ignore[no-untyped-def]
        report = checker.check(case)
        seen[case["variant"]] = seen.get(case["variant"], 0) + 1
        assert report.outcome == "refused" or report.compared >= 2

    check()
    assert set(seen) == {"conjunct", "range", "semi"}, seen


def test_the_oracle_catches_a_larger_estimate_for_a_more_restrictive_query(checker):
    # "restricted" given the wider query: its filter group estimates more rows, and the oracle
    # names the group
    case = {"sql": "SELECT count(*) AS n FROM orders AS t1 WHERE t1.o_totalprice > 1000 AND t1.o_orderstatus = 'F'",
            "restricted": "SELECT count(*) AS n FROM orders AS t1 WHERE t1.o_totalprice > 1000", "variant": "conjunct"}
    with pytest.raises(Inconsistent, match=r"cert \(conjunct\): the more restrictive query estimates .* rows for the "
                       r"rows of \{orders@1\}, the query "):
        checker.check(case)
    assert checker.check({**case, "sql": case["restricted"], "restricted": case["sql"]}).compared >= 2


def _regressions() -> list:
    if not equivalence.CORPUS.exists():
        return []
    found, open_defect = [], None
    for line in equivalence.CORPUS.read_text().splitlines():
        if line.startswith("# open:"):
            open_defect = line[len("# open:"):].strip()
        elif line.startswith("{"):
            case = json.loads(line)
            if case["family"] == "cert":
                found.append(pytest.param(case, id=case["sql"][:60], marks=[pytest.mark.xfail(
                    reason=f"open: {open_defect}", strict=True, raises=Inconsistent)] if open_defect else []))
            open_defect = None
    return found or [pytest.param(None, id="empty")]


@pytest.mark.parametrize("case", _regressions())
def test_regression_cases(case, tmp_path):
    if case is None:
        pytest.skip("no cert case in the corpus yet")
    CertChecker(Path(tmp_path)).check(case)
