"""The paper-vs-ours comparison and the variant gap map, on small hand-made tables."""

import math

import numpy as np
import pandas as pd
import pytest

from credit_assign import reproduction

REFERENCE = {
    "dataset": "cifar10",
    "tolerances": {"test_acc": {"abs": 0.02}, "h_L_norm_median": {"log10": 1.0},
                   "deep_cosine": {"abs": 0.05}},
    "entries": [
        {"method": "bp", "lam": 0, "metric": "test_acc", "value": 0.5, "source": "t"},
        {"method": "dfa", "lam": 0, "metric": "test_acc", "value": 0.3, "source": "t"},
        {"method": "dfa", "lam": 0, "metric": "h_L_norm_median", "value": 1.0e8,
         "source": "t"},
        {"method": "dfa", "lam": 0, "metric": "deep_cosine", "value": 0.0, "source": "t"},
    ],
}


def tables(bp_acc=(0.5, 0.51), dfa_acc=(0.4, 0.42), norm=(1.0e5, 1.0e5), methods=("bp", "dfa")):
    rows = []
    for seed in (1, 2):
        if "bp" in methods:
            rows.append({"method": "bp", "lam": 0.0, "seed": seed, "test_acc": bp_acc[seed - 1],
                         "h_L_norm_median": 10.0, "deep_cosine": 1.0, "final_epoch": 3})
        if "dfa" in methods:
            rows.append({"method": "dfa", "lam": 0.0, "seed": seed,
                         "test_acc": dfa_acc[seed - 1], "h_L_norm_median": norm[seed - 1],
                         "deep_cosine": 0.1, "final_epoch": 3})
    runs = pd.DataFrame(rows)
    layers = pd.DataFrame(columns=["method", "lam", "seed", "epoch", "layer", "cosine"])
    nulls = pd.DataFrame(columns=["method", "lam", "seed", "feedback", "deep_cosine"])
    return runs, layers, nulls


def test_gaps_are_in_tolerance_units_and_norms_in_decades():
    table = reproduction.compare(REFERENCE, *tables())
    gap = dict(zip(table.metric + table.method, table.gap))
    assert gap["test_accbp"] == pytest.approx(0.005 / 0.02)
    assert gap["test_accdfa"] == pytest.approx(0.11 / 0.02)
    assert gap["h_L_norm_mediandfa"] == pytest.approx(-3.0)  # 1e5 vs 1e8: three decades
    assert gap["deep_cosinedfa"] == pytest.approx(0.1 / 0.05)


def test_a_variant_inherits_the_numbers_of_the_methods_it_leaves_alone():
    default = reproduction.compare(REFERENCE, *tables())
    variant = reproduction.compare(REFERENCE, *tables(dfa_acc=(0.3, 0.3), methods=("dfa",)))
    gaps = reproduction.gap_table({"default": default, "v": variant})
    v = gaps[gaps.recipe == "v"].set_index("metric")
    bp = gaps[(gaps.recipe == "v") & (gaps.run == "bp, λ=0")].iloc[0]
    assert bp.inherited and bp.gap == pytest.approx(0.25) and bp.ours_n == 2
    assert not v.loc["test accuracy"].inherited.all()
    rank = reproduction.ranking(gaps)
    assert list(rank.recipe) == ["v", "default"]  # v also brings DFA's accuracy within
    assert rank.set_index("recipe").loc["v", "within"] == 2
    assert rank.set_index("recipe").loc["v", "rerun"] == 3


def test_a_measurement_variant_remeasures_only_norm_and_deep_cosine():
    measurements = pd.DataFrame([
        {"method": "dfa", "lam": 0.0, "seed": s, "variant": v, "h_L_norm": n,
         "deep_cosine": c}
        for s in (1, 2) for v, n, c in (("stratified", 1.0e5, 0.1),
                                        ("one_batch", 2.0e7, 0.02))])
    measured = reproduction.measured_comparisons(REFERENCE, measurements)
    assert list(measured) == ["measured_one_batch"]
    m = measured["measured_one_batch"].set_index("metric")
    assert m.loc["h_L_norm_median", "ours_mean"] == pytest.approx(2.0e7)
    assert abs(m.loc["h_L_norm_median", "gap"]) < 1
    assert m.loc["test_acc"].ours_n.tolist() == [0, 0]
    default = reproduction.compare(REFERENCE, *tables())
    gaps = reproduction.gap_table({"default": default, **measured})
    acc = gaps[(gaps.recipe == "measured_one_batch") & (gaps.metric == "test accuracy")]
    assert acc.inherited.all()
    assert np.allclose(acc.gap, default[default.metric == "test_acc"].gap)


def test_tables_that_compare_different_numbers_are_refused():
    default = reproduction.compare(REFERENCE, *tables())
    other = reproduction.compare({**REFERENCE, "entries": REFERENCE["entries"][:2]}, *tables())
    with pytest.raises(ValueError, match="recipe 'v'"):
        reproduction.gap_table({"default": default, "v": other})


def test_the_side_by_side_names_the_best_variant_and_marks_inherited_numbers():
    default = reproduction.compare(REFERENCE, *tables())
    variant = reproduction.compare(REFERENCE, *tables(dfa_acc=(0.3, 0.3), methods=("dfa",)))
    gaps = reproduction.gap_table({"default": default, "v": variant})
    text = reproduction.variants_markdown(
        gaps, reproduction.ranking(gaps), {"v": {"description": "d", "methods": ["dfa"],
                                                 "seeds": [1, 2]}})
    assert "side by side" in text and "`v` **(best)**" in text
    assert "(inherited)" in text and "(+0.3 ✓)" in text  # bp's accuracy, the default's
    assert not math.isnan(gaps.gap.iloc[0])
