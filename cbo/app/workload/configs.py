"""Configurations: what runs a workload's queries, written as ``--configs`` takes them.

* ``cbo``: cbo's plan, chosen from its statistics, run on Spark as chosen;
* ``cbo:name=value,...``: the same with optimizer settings changed (``cbo rules`` and
  ``cbo.settings`` name them), e.g. ``cbo:cardinalities=oracle`` (true row counts, counted with
  DuckDB before timing), ``cbo:disabled_rules=ReorderJoins``, ``cbo:join_reordering_strategy=NONE``;
* ``spark-default``: the query text through Spark SQL with Spark's defaults (adaptive execution
  on, its cost-based optimizer off);
* ``spark-cbo``: Spark with its cost-based optimizer and join reordering on, over tables it has
  analyzed (``ANALYZE TABLE ... FOR ALL COLUMNS`` with histograms; Spark-only catalogs);
* ``spark-dsv2``: JDBC tables through Spark's DSv2 ``JDBCTableCatalog`` with its join,
  aggregate and top-N pushdown on (catalogs with JDBC sources);
* ``duckdb``: the query text on DuckDB over the tables' Parquet files (or copies);
* ``postgres``: the query text on the PostgreSQL server itself (catalogs whose one source is
  PostgreSQL).

A list is comma-separated; a ``cbo:`` configuration takes the settings that follow it up to the
next configuration, so ``cbo,cbo:cardinalities=oracle,join_reordering_strategy=NONE,duckdb`` is
three configurations, and a value with commas (``disabled_rules=A,B``) keeps them.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cbo.errors import CboError


class Kind(enum.Enum):
    CBO = "cbo"
    SPARK_DEFAULT = "spark-default"
    SPARK_CBO = "spark-cbo"
    SPARK_DSV2 = "spark-dsv2"
    DUCKDB = "duckdb"
    POSTGRES = "postgres"

    @property
    def engine(self) -> str:
        """The engine that runs the query: spark, duckdb or postgres (the dialect it is given)."""
        if self is Kind.DUCKDB:
            return "duckdb"
        if self is Kind.POSTGRES:
            return "postgres"
        return "spark"


@dataclass(frozen=True)
class Config:
    label: str                                    # how results name it
    kind: Kind
    settings: tuple[tuple[str, str], ...] = ()    # cbo's settings (Kind.CBO only)
    timeout_s: float | None = None                # a run's limit; None: none

    @property
    def settings_dict(self) -> dict[str, str]:
        return dict(self.settings)

    @property
    def plans_untimed(self) -> bool:
        """cbo with true cardinalities counts every memo group's rows with DuckDB while it plans:
        work no optimizer does, so it plans once, untimed, and only its plan's run is timed.
        Every other cbo configuration's time includes its planning, as Spark's includes Spark's."""
        return self.kind is Kind.CBO and self.settings_dict.get("cardinalities", "").strip().lower() == "oracle"

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "kind": self.kind.value, "settings": self.settings_dict,
                "timeout_s": self.timeout_s}

    @staticmethod
    def from_json(body: Mapping[str, Any]) -> Config:
        return Config(body["label"], Kind(body["kind"]), tuple(dict(body.get("settings") or {}).items()),
                      body.get("timeout_s"))


KNOWN = tuple(kind.value for kind in Kind)


def cbo(label: str, settings: Mapping[str, str] | None = None, timeout_s: float | None = None) -> Config:
    """A cbo configuration under a name of its own (the TPC-H runner's ``cbo-oracle``)."""
    config = Config(label, Kind.CBO, tuple((settings or {}).items()), timeout_s)
    _check_settings(config)
    return config


def parse_configs(text: str, timeout_s: float | None = None) -> list[Config]:
    """``--configs``' value as configurations, checked before anything runs: unknown names,
    settings this cbo does not have and repeated configurations are one-line errors."""
    configs: list[Config] = []
    current: list[list[str]] | None = None   # the settings of the cbo: configuration being read

    def finish() -> None:
        nonlocal current
        if current is not None:
            settings = tuple((name, value) for name, value in current)
            label = "cbo:" + ",".join(f"{n}={v}" for n, v in settings)
            configs.append(Config(label, Kind.CBO, settings, timeout_s))
            current = None

    for token in (part.strip() for part in text.split(",")):
        if not token:
            continue
        if token in KNOWN:
            finish()
            configs.append(Config(token, Kind(token), (), timeout_s))
        elif token.startswith("cbo:"):
            finish()
            current = []
            _setting(current, token[4:], token)
        elif current is not None and "=" in token:
            _setting(current, token, token)
        elif current is not None and current:
            current[-1][1] += "," + token    # a value with commas: disabled_rules=A,B
        else:
            raise CboError(f"unknown configuration {token!r} (known: {', '.join(KNOWN)}, or cbo:name=value,...)")
    finish()
    if not configs:
        raise CboError("no configuration given (e.g. --configs cbo,spark-default)")
    labels = [c.label for c in configs]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise CboError(f"configuration {', '.join(repeated)} given twice")
    for config in configs:
        _check_settings(config)
    return configs


def _setting(current: list[list[str]], text: str, token: str) -> None:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise CboError(f"configuration {token!r}: a setting is written name=value")
    current.append([name.strip(), value.strip()])


def _check_settings(config: Config) -> None:
    from cbo.settings import OptimizerSettings

    try:
        OptimizerSettings().with_values(config.settings_dict)
    except CboError as exc:
        raise CboError(f"configuration {config.label}: {exc}") from None
