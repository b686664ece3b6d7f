"""The measurement variants through the workflow, on their own small copy (a test module
of its own, so that it runs beside test_workflow.py's larger tiny run): every recipe's
trained models measured the other ways (rule measure, no retraining), the measurements
table, the gap map's measurement columns ranked with their recipe's kind, and both
measured pages of the gap map."""

import pandas as pd
import pytest
import yaml
from conftest import TINY, fresh_copy, job_counts, snakemake

pytestmark = pytest.mark.workflow  # runs Snakemake on a small config

SMALL = {**TINY, "sweep": {"seeds": [1, 2], "dfa": [0], "bp": [], "frozen": [], "fa": [],
                           "np": []},
         "probes": {"epochs": []}, "ep_stack": {"corpora": []},
         "reproduction": {"reference": "config/small_reference.yaml"}}
REFERENCE = {
    "dataset": "digits",
    "tolerances": {"test_acc": {"abs": 0.02}, "h_L_norm_median": {"log10": 1.0},
                   "cosine": {"abs": 0.05}},
    "entries": [
        {"method": "dfa", "lam": 0, "metric": "h_L_norm_median", "value": 1.0, "source": "t"},
        {"method": "dfa", "lam": 0, "metric": "cosine", "layer": 1, "range": [0.2, 0.3],
         "source": "t"},
        {"method": "dfa", "lam": 0, "metric": "deep_cosine", "value": 0.1, "source": "t"},
    ],
}
STUDY = {"variants": {"const_lr": {"kind": "departs", "description": "constant lr",
                                   "methods": ["dfa"],
                                   "overrides": {"training": {"schedule": "constant"}}}},
         "measurements": {"run": True, "batch": 32, "batch_sizes": [64]}}


def test_every_recipes_models_are_measured_and_mapped(tmp_path):
    work = fresh_copy(tmp_path / "w")
    (work / "config" / "small.yaml").write_text(yaml.safe_dump(SMALL))
    (work / "config" / "small_reference.yaml").write_text(yaml.safe_dump(REFERENCE))
    (work / "config" / "study.yaml").write_text(yaml.safe_dump(STUDY))
    files = ["--configfile", "config/small.yaml", "config/study.yaml"]
    counts = job_counts(snakemake(work, "variants", *files, "-n").stdout)
    assert counts["measure"] == 4 and counts["train"] == 4  # default and const_lr × 2 seeds
    snakemake(work, "variants", *files)
    table = pd.read_csv(work / "results/digits/default/summary/measurements.csv")
    assert {"gain", "eps_cos_b64", "eps_den_b64", "flat", "mixed_n", "one_batch"} <= set(
        table.measurement)
    gaps = pd.read_csv(work / "results/digits/default/summary/variants_gap.csv")
    measured = gaps[gaps.recipe.str.contains("/")]
    assert {"default/gain", "const_lr/gain", "const_lr/eps_cos_b64"} <= set(measured.recipe)
    kinds = measured.groupby(measured.recipe.str.split("/").str[0]).kind.unique()
    assert list(kinds["const_lr"]) == ["departs+measurement"]
    assert list(kinds["default"]) == ["stated+measurement"]
    for name in ("fig_variants", "fig_variants_key", "fig_variants_measured",
                 "fig_variants_measured_eps"):
        for fmt in ("pdf", "png", "svg"):
            assert (work / f"paper/figures/{name}.{fmt}").stat().st_size > 1000
