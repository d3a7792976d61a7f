"""LIKE on a row sample (``cbo.estimate.sample_eval``): Arrow's kernel and the regular
expression it replaces agree, NULLs and non-strings never match, and a backslash stays a
literal character as cbo's LIKE reads it."""

from __future__ import annotations

import numpy as np
import pytest

from cbo.estimate.column import like_regex
from cbo.estimate.sample_eval import evaluate
from cbo.ir import types as T
from cbo.ir.expressions import Call, ColumnFactory, ColumnRef, Constant

VALUES = ["forest green", "green", "PROMO BRUSHED", "promo brushed", "a_c", "abc", "x\\y", "", "%", "Brand#23", None]


@pytest.mark.parametrize("pattern", ["%green%", "green", "PROMO%", "%BRUSHED", "a_c", "a\\_c", "x\\y", "%",
                                     "", "_", "\\%", "Brand#2_", "%o%e%"])
def test_like_on_the_sample_matches_the_regular_expression(pattern):
    column = ColumnFactory().new("c", T.VARCHAR)
    values = np.array(VALUES, dtype=object)
    nulls = np.array([v is None for v in VALUES])
    predicate = Call("like", (ColumnRef(column), Constant(pattern, T.VARCHAR)), T.BOOLEAN)
    found = evaluate(predicate, lambda c: (values, nulls) if c == column else None, len(VALUES))
    regex = like_regex(pattern)
    expected = [isinstance(v, str) and bool(regex.fullmatch(v)) for v in VALUES]
    assert found is not None and found.tolist() == expected, (pattern, found, expected)
    again = evaluate(predicate, lambda c: (values, nulls) if c == column else None, len(VALUES))
    assert again is not None and again.tolist() == expected    # the remembered Arrow copy
