"""stats: column statistics and histograms collected from Spark and JDBC sources.

This package never imports ``cbo``; the estimator in ``cbo`` reads what it collects.
"""
