"""``spark_adaptive``: how it is written and read, and the Spark settings each value runs with
(``cbo.exec.spark_adaptive``). No Spark needed: the settings are a pure function; the runs are
in tests/integration/test_spark_adaptive.py."""

from __future__ import annotations

import pytest

from cbo.errors import CboError
from cbo.exec.spark_adaptive import EMPTY_RELATION_RULE, EXCLUDED_RULES, JOIN_SELECTION_RULES, adaptive_settings
from cbo.settings import ADAPTIVE_OFF, PRESERVING, AdaptiveFeature, OptimizerSettings, describe_adaptive


def test_the_default_keeps_every_plan_preserving_feature():
    assert OptimizerSettings().spark_adaptive == PRESERVING == frozenset(AdaptiveFeature)
    assert describe_adaptive(OptimizerSettings().spark_adaptive) == "preserving"


@pytest.mark.parametrize("text, features", [
    ("off", ADAPTIVE_OFF), ("none", ADAPTIVE_OFF), ("preserving", PRESERVING), ("on", PRESERVING),
    ("coalesce", {AdaptiveFeature.COALESCE}),
    ("coalesce+empty_relation", {AdaptiveFeature.COALESCE, AdaptiveFeature.EMPTY_RELATION}),
    (" Skew_Join , local_read ", {AdaptiveFeature.SKEW_JOIN, AdaptiveFeature.LOCAL_READ}),
])
def test_written_values_are_read(text, features):
    assert OptimizerSettings().with_values({"spark_adaptive": text}).spark_adaptive == frozenset(features)


def test_values_round_trip_through_their_text():
    for features in (ADAPTIVE_OFF, PRESERVING, frozenset({AdaptiveFeature.SKEW_JOIN, AdaptiveFeature.COALESCE})):
        text = describe_adaptive(features)
        assert OptimizerSettings().with_values({"spark_adaptive": text}).spark_adaptive == features
    assert describe_adaptive(frozenset({AdaptiveFeature.SKEW_JOIN, AdaptiveFeature.COALESCE})) == "coalesce+skew_join"


def test_members_and_names_are_accepted_from_python():
    assert OptimizerSettings(spark_adaptive=[AdaptiveFeature.COALESCE, "empty_relation"]).spark_adaptive == \
        {AdaptiveFeature.COALESCE, AdaptiveFeature.EMPTY_RELATION}
    assert OptimizerSettings(spark_adaptive="off").spark_adaptive == ADAPTIVE_OFF


@pytest.mark.parametrize("value, message", [
    ("coalesce+broadcast", "unknown feature 'broadcast'"),
    (3, "spark_adaptive must be off, preserving or features"),
    ([None], "unknown feature None"),
])
def test_a_bad_value_is_one_clear_error(value, message):
    with pytest.raises(CboError, match=message):
        OptimizerSettings().with_values({"spark_adaptive": value})


def test_off_is_adaptive_execution_off_and_nothing_else():
    assert adaptive_settings(ADAPTIVE_OFF, 8) == {"spark.sql.adaptive.enabled": "false"}


def test_every_mode_keeps_adaptive_execution_away_from_join_strategies():
    for features in (PRESERVING, frozenset({AdaptiveFeature.COALESCE})):
        values = adaptive_settings(features, 8)
        assert values["spark.sql.adaptive.enabled"] == "true"
        assert values["spark.sql.adaptive.autoBroadcastJoinThreshold"] == "-1"
        assert values["spark.sql.adaptive.maxShuffledHashJoinLocalMapThreshold"] == "0"
        assert values["spark.sql.adaptive.convertSortMergeJoinToShuffledHashJoin.enabled"] == "false"
        assert set(JOIN_SELECTION_RULES) <= set(values[EXCLUDED_RULES].split(","))


def test_each_feature_has_its_switch():
    values = adaptive_settings(frozenset({AdaptiveFeature.SKEW_JOIN}), 8)
    assert values["spark.sql.adaptive.skewJoin.enabled"] == "true"
    assert values["spark.sql.adaptive.coalescePartitions.enabled"] == "false"
    assert values["spark.sql.adaptive.localShuffleReader.enabled"] == "false"
    assert EMPTY_RELATION_RULE in values[EXCLUDED_RULES].split(",")   # empty_relation not asked for
    assert "spark.sql.adaptive.coalescePartitions.initialPartitionNum" not in values
    values = adaptive_settings(PRESERVING, 8)
    assert EMPTY_RELATION_RULE not in values[EXCLUDED_RULES].split(",")
    # Coalescing starts from the partition count cbo costed with.
    assert values["spark.sql.adaptive.coalescePartitions.initialPartitionNum"] == "8"


def test_a_sessions_own_excluded_rules_are_kept():
    values = adaptive_settings(PRESERVING, None, "my.Rule")
    assert values[EXCLUDED_RULES].split(",")[0] == "my.Rule"
    assert "spark.sql.adaptive.coalescePartitions.initialPartitionNum" not in values
