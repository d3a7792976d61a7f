"""The summary both calibrations print after a fit: each constant before and after, the fit's
relative error on the training queries, and the held-back queries' rank correlation."""

from __future__ import annotations


def print_fit(names: tuple[str, ...] | list[str], before: dict[str, float], fitted: dict[str, float],
              report: dict, before_label: str, spearman_before: str) -> None:
    """Print the table of ``names`` (``before_label`` column: ``before``'s values), then the
    training error and the held-back Spearman correlations; ``spearman_before`` is the report's
    key for the correlation with the ``before`` constants."""
    width = max(len(n) for n in names) + 2
    print(f"{'quantity':<{width}} {before_label:>11} {'fitted':>11}")
    for name in names:
        print(f"{name:<{width}} {before[name]:>11.3g} {fitted[name]:>11.3g}"
              + ("" if name in report["fitted"] else f"  (no information: {before_label} kept)"))
    print(f"training: {report['training_queries']} queries, median relative error "
          f"{report['median_relative_error']:.2f}, max {report['max_relative_error']:.2f}")
    print(f"held back: {report['held_back_queries']} queries, Spearman(cost, runtime) {before_label} constants "
          f"{report[spearman_before]:.3f}, fitted {report['spearman_fitted']:.3f}"
          + (f", previous profile {report['spearman_previous_profile']:.3f}"
             if "spearman_previous_profile" in report else ""))
