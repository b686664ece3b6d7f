"""The reproduction notes' findings on DFA's unpenalised ‖h_L‖: where the norm lives and
what moves it (norm_finding), and which way of measuring comes nearest the paper's λ = 0
layer cosines (measured_cosines_finding, a hypothesis the measurement columns test).
Plain data, JSON-ready (a missing number is None); templates/notes_sections.md.j2 writes
the words."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from credit_assign.analysis import study as variant_study
from credit_assign.analysis.aggregate import same_lam, select_runs
from credit_assign.analysis.comparison import MEASUREMENT_SEP, number_key, paper_number
from credit_assign.infra.paths import DEFAULT_RECIPE


def plain(value) -> float | None:
    """A number as a finding holds it: a float, None where it is missing or not finite."""
    if value is None or pd.isna(value):
        return None
    value = float(value)
    return value if math.isfinite(value) else None



# the runs whose layer cosines the paper gives (the measured-cosines section scores both)
LAYER_RUNS = ({"method": "dfa", "lam": 0.0}, {"method": "dfa", "lam": 0.01})


def layer_cosines(gaps: pd.DataFrame, runs=LAYER_RUNS) -> pd.DataFrame:
    """The gap map's rows of the layer cosines (one layer's ``cosine`` over every seed)
    of ``runs`` (method and λ), where a gap was computed."""
    on = pd.Series(False, index=gaps.index)
    for run in runs:
        on |= (gaps.method == run["method"]) & same_lam(gaps.lam, run["lam"])
    return gaps[on & (gaps.metric == "cosine") & gaps.layer.notna() & gaps.seed.isna()
                & gaps.gap.notna()]


def _own_headline(gaps: pd.DataFrame) -> pd.DataFrame:
    """The headline ‖h_L‖ rows of the recipes' own runs (not an inherited column, nor a
    measurement of them)."""
    row = variant_study.headline_rows(gaps)
    return row[~row.inherited.astype(bool)
               & ~row.recipe.str.contains(MEASUREMENT_SEP, regex=False)]


def measured_cosines_finding(gaps: pd.DataFrame, study: dict | None = None) -> dict | None:
    """Which measurement comes nearest the paper's λ = 0 layer cosines (a hypothesis the
    measurement columns test): DFA's λ = 0 layer cosines under each measurement, for the
    default's models and for the recipe whose own λ = 0 ‖h_L‖ comes nearest the paper's;
    then the columns that put all of them within tolerance, each scored on the λ = 0 and
    λ = 1e-2 layer cosines together (one way of measuring must fit both), or the nearest
    one (most within, then the study's clipped gap sum) with its per-seed gaps. None
    without measurements."""
    layer = layer_cosines(gaps, LAYER_RUNS[:1])
    if layer.empty or not variant_study.has_measured(gaps):
        return None
    layers = sorted(int(x) for x in layer.layer.unique())
    own = _own_headline(gaps)
    recipes = [DEFAULT_RECIPE]
    if len(own) and (near := own.loc[own.gap.abs().idxmin()].recipe) != DEFAULT_RECIPE:
        recipes.append(near)
    norm = variant_study.headline_rows(gaps).set_index("recipe").ours_mean
    first = layer[layer.recipe == DEFAULT_RECIPE].set_index("layer")
    rows = []
    for recipe in recipes:
        for col in [recipe] + sorted(layer[(layer.base_recipe == recipe)
                                           & (layer.recipe != recipe)].recipe.unique()):
            r = layer[layer.recipe == col].set_index("layer")
            rows.append({"column": col, "kind": str(r.kind.iloc[0]), "norm": plain(norm.get(col)),
                         "cells": [{"ours": plain(r.ours_mean[x]), "gap": plain(r.gap[x])}
                                   if x in r.index else None for x in layers],
                         "within": int((r.gap.abs() <= 1).sum()), "n": len(r)})
    # scored over the columns that measured these numbers themselves (an inherited
    # column is a copy of another's and would only repeat it)
    scored = layer_cosines(gaps)
    scored = scored[~scored.inherited.astype(bool)]
    clip = variant_study.ranking_settings(study)["ranking"]["clip"]
    counts = scored.assign(ok=scored.gap.abs() <= 1).groupby("recipe").agg(
        ok=("ok", "sum"), n=("ok", "size"), kind=("kind", "first"),
        spread=("gap", lambda g: g.abs().clip(upper=clip).sum()))
    order = counts.sort_values(["ok", "spread"], ascending=[False, True])
    name, best = order.index[0], order.iloc[0]
    own_cols = layer_cosines(scored[scored.recipe == name], LAYER_RUNS[:1])
    by_layer = {int(r.layer): variant_study.seed_map(r.gap_seed) for r in own_cols.itertuples()}
    seeds = sorted({s for m in by_layer.values() for s in m}, key=int)
    return {
        # each layer cosine's keys, and the paper's number (the default's row)
        "metrics": [{"metric": "cosine", "layer": x,
                     **paper_number(first.loc[x] if x in first.index else {})}
                    for x in layers],
        "rows": rows, "scored": int(counts.n.max()), "clip": float(clip),
        "full": [{"column": c, "kind": r.kind} for c, r in counts[counts.ok == counts.n]
                 .iterrows()],
        "nearest": {"column": name, "kind": best.kind, "within": int(best.ok), "n": int(best.n),
                    "misses": [{**number_key(m), "ours": plain(m.ours_mean),
                                "gap": plain(m.gap)} for m in scored[(scored.recipe == name)
                                                                 & (scored.gap.abs() > 1)]
                               .itertuples()]},
        "columns": len(counts),
        "per_seed": [{"seed": s, "gaps": [{"layer": x, "gap": by_layer[x][s]}
                                          for x in layers if s in by_layer.get(x, {})
                                          and not pd.isna(by_layer[x][s])]}
                     for s in seeds]}


def norm_finding(runs, layers, epochs, variant_runs: dict, measurements, gaps) -> dict:
    """‖h_L‖ at λ = 0: the paper's number, where ours lives at the final epoch (per
    layer), its growth over epochs, each recipe's DFA runs per seed (the config's seeds,
    never a mean that could hide a bimodal outcome), the default's models measured other
    ways, and the largest λ = 0 norm of any recipe's own runs."""
    dfa0 = select_runs(runs, "dfa", 0.0)
    final = select_runs(layers, "dfa", 0.0).merge(dfa0[["seed", "final_epoch"]], on="seed")
    final = final[final.epoch == final.final_epoch]
    per_layer = final.groupby("layer")[["h_norm_median", "branch_norm_median"]].median()
    traj = select_runs(epochs, "dfa", 0.0).groupby("epoch").h_L_norm_median.median()
    seeds = sorted(int(s) for s in dfa0.seed.unique())
    base = {int(r.seed): float(r.h_L_norm_median) for r in dfa0.itertuples()}
    recipes = []
    for name, vr in [(DEFAULT_RECIPE, runs), *variant_runs.items()]:
        by_seed = {int(x.seed): x for x in select_runs(vr, "dfa", 0.0).itertuples()}
        if by_seed:
            recipes.append({"recipe": name, "seeds": [
                {"norm": plain(by_seed[s].h_L_norm_median),
                 "ratio": plain(float(by_seed[s].h_L_norm_median) / base.get(s, math.nan)),
                 "acc": plain(by_seed[s].test_acc)} if s in by_seed else None for s in seeds]})
    head = variant_study.headline_rows(gaps)
    paper = head[head.recipe == DEFAULT_RECIPE]
    out = {"paper": plain(paper.paper.iloc[0]) if len(paper) else None,
           "layers": [{"layer": int(layer), "h": plain(r.h_norm_median),
                       "branch": plain(r.branch_norm_median)} for layer, r in per_layer.iterrows()],
           "biggest": int(per_layer.branch_norm_median.idxmax()),
           "growth": [{"epoch": e, "norm": plain(traj[e])}
                      for e in (1, 5, 10, 20, int(traj.index.max())) if e in traj.index],
           "seeds": seeds, "recipes": recipes, "measured": None, "largest": None}
    if measurements is not None and len(measurements):
        m = select_runs(measurements, "dfa", 0.0).pivot_table(
            index="seed", columns="measurement", values="h_L_norm")
        if {"stratified", "one_batch"} <= set(m.columns):
            ratio = (m.one_batch / m.stratified).median()
            out["measured"] = {"one_batch": plain(ratio), "decades": plain(math.log10(ratio)),
                               "mixed": plain((m.mixed_n / m.stratified).median())
                               if "mixed_n" in m else None}
    row = _own_headline(gaps)
    finite = row[np.isfinite(row.ours_mean.astype(float)) & (row.ours_mean > 0)]
    if len(finite):  # a recipe whose mean is not finite (it diverged) is named, not compared
        best = finite.loc[finite.ours_mean.idxmax()]
        out["largest"] = {"recipe": best.recipe, "kind": best.kind, "ours": plain(best.ours_mean),
                          "paper": plain(float(best.paper)), "within": bool(abs(best.gap) <= 1),
                          "decades": math.log10(float(best.paper) / float(best.ours_mean)),
                          "not_finite": sorted(set(row.recipe) - set(finite.recipe))}
    return out
