"""Factor conjuncts common to every branch of a disjunction out of it.

    (A ∧ B) ∨ (A ∧ C)  =  A ∧ (B ∨ C)

Distributivity holds in SQL's three-valued logic (Kleene's AND and OR are a distributive
lattice over FALSE < NULL < TRUE), so the rewrite is exact for every row, NULLs included. If a
branch consists of common conjuncts only, the disjunction is implied by them:
(A) ∨ (A ∧ C) = A ∧ (TRUE ∨ C) = A. The point is TPC-H Q19's join condition: every branch
says ``p_partkey = l_partkey``; factored out, it is an equi-join key and the join a hash join
instead of a nested loop over all pairs.
"""

from __future__ import annotations

from cbo.ir.expressions import TRUE, Expr, SpecialForm, conjunction, conjuncts


def disjuncts(expr: Expr) -> list[Expr]:
    if isinstance(expr, SpecialForm) and expr.form == "OR":
        return [d for arg in expr.args for d in disjuncts(arg)]
    return [expr]


def factor_or(expr: Expr) -> Expr:
    """``expr`` with the conjuncts shared by all its OR branches pulled out (unchanged if none)."""
    branches = disjuncts(expr)
    if len(branches) < 2:
        return expr
    parts = [conjuncts(b) for b in branches]
    common = [c for c in parts[0] if all(c in other for other in parts[1:])]
    if not common:
        return expr
    rests = [conjunction([c for c in p if c not in common]) for p in parts]
    if any(rest == TRUE for rest in rests):
        return conjunction(common)
    remaining = rests[0] if len(rests) == 1 else SpecialForm("OR", tuple(rests), expr.type)
    return conjunction([*common, remaining])


def factored_conjuncts(expr: Expr) -> list[Expr]:
    """The conjuncts of ``expr``, each disjunction among them factored."""
    return [c for part in conjuncts(expr) for c in conjuncts(factor_or(part))]
