"""docs/reproduction-notes.md: what matches the paper, what does not, and which run
shows why. ``findings`` computes each section's finding once, as data (numbers, names,
seeds, outcomes; JSON-ready, a missing number is None) from the tables the pipeline
wrote (the default recipe's summary tables, every variant's runs.csv, the gap map, the
measurement variants); templates/notes.md.j2 writes every word from them.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from credit_assign.infra import paths
from credit_assign.infra.files import atomic_write_text
from credit_assign.reporting import findings as found_io
from credit_assign.reporting import labels, render
from credit_assign.reporting import study as variant_study
from credit_assign.reporting import tables as table_io
from credit_assign.reporting.aggregate import select_runs
from credit_assign.reporting.comparison import MEASUREMENT_SEP
from credit_assign.reporting.findings import null_finding

# the runs whose layer cosines the paper gives (the measured-cosines section scores both)
LAYER_RUNS = ("dfa, λ=0", "dfa, λ=0.01")


def _x(value) -> float | None:
    """A number as a finding holds it: a float, None where it is missing or not finite."""
    if value is None or pd.isna(value):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _per_seed(runs: pd.DataFrame, column: str = "test_acc") -> list[dict]:
    """A column's value on each seed: a mean beside it hides no outlier."""
    return [{"seed": int(r.seed), "value": _x(getattr(r, column))}
            for r in runs.sort_values("seed").itertuples()]


def runs_finding(runs, epochs, variant_runs: dict, info: dict, compute: str = "") -> dict:
    """What ran: the default's runs and the variants', the code's commits, the data, and
    the compute (jobs by length, an epoch's median, every job's core-hours)."""
    all_runs = pd.concat([runs, *variant_runs.values()], ignore_index=True)
    return {
        "n": len(runs), "methods": sorted(set(runs.method)),
        "variants": [{"name": k, "n": len(v)} for k, v in variant_runs.items()],
        "commits": sorted(set(all_runs.git_commit.dropna().astype(str).str[:7])),
        "no_git": int(all_runs.git_commit.isna().sum()),
        "data": {"source": info["source"], "n_train": info["n_train"],
                 "n_test": info["n_test"], "order": info.get("order", "?")},
        "jobs": [{"epochs": int(e), "n": len(t), "median": _x(t.median()), "min": _x(t.min()),
                  "max": _x(t.max())} for e, t in runs.groupby("epochs").total_s],
        "epoch_s": _x(epochs.train_s.median() + epochs.diagnostics_s.median()),
        "all": len(all_runs), "core_hours": _x(all_runs.total_s.sum() / 3600),
        "compute": compute}


def _verified(gaps: pd.DataFrame) -> pd.Series:
    return gaps.verified.astype(str).str.lower() == "true" if "verified" in gaps else \
        pd.Series(True, gaps.index)


def matches_finding(gaps: pd.DataFrame) -> dict:
    """The default recipe's numbers within tolerance, and the counts (every number, the
    verified targets)."""
    default = gaps[gaps.recipe == "default"]
    ok = default[default.gap.abs() <= 1]
    ver = _verified(default)
    return {"within": len(ok), "compared": int(default.gap.notna().sum()),
            "within_verified": int((default.gap.abs() <= 1)[ver].sum()),
            "compared_verified": int(default.gap.notna()[ver].sum()),
            "rows": [{"run": r.run, "metric": r.metric, "ours": _x(r.ours_mean),
                      "paper": r.paper, "verified": bool(v), "note": r.note}
                     for r, v in zip(ok.itertuples(), _verified(ok), strict=True)]}


def ranking_finding(gaps: pd.DataFrame, study: dict | None) -> dict:
    """The study's ranking (study.ranking, the one ordering), each kind apart,
    its winners, the goal and the winner's curse held one seed out."""
    rank = variant_study.ranking(gaps, study)
    keys = ("within", "compared", "within_all", "compared_all", "within_verified",
            "compared_verified")
    return {
        "rows": [{"kind": r.kind, "rank": int(r.rank), "recipe": r.recipe,
                  **{k: int(getattr(r, k)) for k in keys},
                  "clipped_gap_sum": float(r.clipped_gap_sum)}
                 for r in rank.itertuples() if not variant_study.is_measurement(r.kind)],
        "best": variant_study.best(rank, "open"), "departs": variant_study.best(rank, "departs"),
        "settings": variant_study.ranking_settings(study),
        "goal": variant_study.goal(rank, study, gaps),
        "holdout": variant_study.holdout_data(variant_study.holdout(gaps, study))}


def _nearest(group: pd.DataFrame, d) -> dict:
    same = group[(group.run == d.run) & (group.metric == d.metric)]
    if same.empty:
        return {"nearest": None, "within": []}
    b = same.loc[same.gap.abs().idxmin()]
    # a column is "closest" only where it comes nearer the paper than the default
    return {"nearest": {"recipe": b.recipe, "ours": _x(b.ours_mean), "gap": _x(b.gap)},
            "nearer": bool(abs(b.gap) < abs(d.gap)),
            "within": sorted(same[same.gap.abs() <= 1].recipe)}


def misses_finding(gaps: pd.DataFrame) -> list[dict]:
    """Each number the default misses, and the column that moves it closest — among
    those that depart from nothing the paper states (the stated recipe measured another
    way, the open variants and their measurements) and, apart, among the departing ones:
    a departure never reads as the explanation of a miss unmarked."""
    default = gaps[gaps.recipe == "default"].reset_index(drop=True)
    others = gaps[(gaps.recipe != "default") & ~gaps.inherited.astype(bool)
                  & gaps.gap.notna()]
    goal = others.kind.isin(variant_study.GOAL_KINDS)
    out = []
    for _, d in default.iterrows():
        if pd.isna(d.gap) or abs(d.gap) <= 1:
            continue
        out.append({"run": d.run, "metric": d.metric, "paper": d.paper,
                    "verified": str(d.get("verified", True)).lower() == "true",
                    "ours": _x(d.ours_mean), "gap": _x(d.gap), "gap_sd": _x(d.get("gap_sd")),
                    "tighter": render.flag(d.get("tolerance_below_sd", False)),
                    "open": _nearest(others[goal], d), "departs": _nearest(others[~goal], d)})
    return out


def _layer_number(metric: str) -> int:
    return int(metric.rsplit("l", 1)[1])


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
    layer = gaps[(gaps.run == LAYER_RUNS[0]) & gaps.metric.str.fullmatch(r"cosine l\d+")
                 & gaps.gap.notna()]
    if layer.empty or not variant_study.has_measured(gaps):
        return None
    metrics = sorted(layer.metric.unique(), key=_layer_number)
    own = _own_headline(gaps)
    recipes = ["default"]
    if len(own) and (near := own.loc[own.gap.abs().idxmin()].recipe) != "default":
        recipes.append(near)
    norm = variant_study.headline_rows(gaps).set_index("recipe").ours_mean
    first = layer[layer.recipe == "default"].set_index("metric")
    rows = []
    for recipe in recipes:
        for col in [recipe] + sorted(layer[(layer.base_recipe == recipe)
                                           & (layer.recipe != recipe)].recipe.unique()):
            r = layer[layer.recipe == col].set_index("metric")
            rows.append({"column": col, "kind": str(r.kind.iloc[0]), "norm": _x(norm.get(col)),
                         "cells": [{"ours": _x(r.ours_mean[m]), "gap": _x(r.gap[m])}
                                   if m in r.index else None for m in metrics],
                         "within": int((r.gap.abs() <= 1).sum()), "n": len(r)})
    # scored over the columns that measured these numbers themselves (an inherited
    # column is a copy of another's and would only repeat it)
    scored = gaps[gaps.run.isin(LAYER_RUNS) & gaps.metric.str.fullmatch(r"cosine l\d+")
                  & gaps.gap.notna() & ~gaps.inherited.astype(bool)]
    clip = variant_study.ranking_settings(study)["ranking"]["clip"]
    counts = scored.assign(ok=scored.gap.abs() <= 1).groupby("recipe").agg(
        ok=("ok", "sum"), n=("ok", "size"), kind=("kind", "first"),
        spread=("gap", lambda g: g.abs().clip(upper=clip).sum()))
    order = counts.sort_values(["ok", "spread"], ascending=[False, True])
    name, best = order.index[0], order.iloc[0]
    own_cols = scored[(scored.run == LAYER_RUNS[0]) & (scored.recipe == name)]
    by_metric = {r.metric: variant_study.seed_map(r.gap_seed) for r in own_cols.itertuples()}
    seeds = sorted({s for m in by_metric.values() for s in m}, key=int)
    return {
        "metrics": metrics, "paper": [str(first.paper.get(m, "—")) for m in metrics],
        "rows": rows, "scored": int(counts.n.max()), "clip": float(clip),
        "full": [{"column": c, "kind": r.kind} for c, r in counts[counts.ok == counts.n]
                 .iterrows()],
        "nearest": {"column": name, "kind": best.kind, "within": int(best.ok), "n": int(best.n),
                    "misses": [{"run": m.run, "metric": m.metric, "ours": _x(m.ours_mean),
                                "gap": _x(m.gap)} for m in scored[(scored.recipe == name)
                                                                 & (scored.gap.abs() > 1)]
                               .itertuples()]},
        "columns": len(counts),
        "per_seed": [{"seed": s, "gaps": [{"layer": m.rsplit(" ", 1)[1], "gap": by_metric[m][s]}
                                          for m in metrics if s in by_metric.get(m, {})
                                          and not pd.isna(by_metric[m][s])]}
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
    for name, vr in [("default", runs), *variant_runs.items()]:
        by_seed = {int(x.seed): x for x in select_runs(vr, "dfa", 0.0).itertuples()}
        if by_seed:
            recipes.append({"recipe": name, "seeds": [
                {"norm": _x(by_seed[s].h_L_norm_median),
                 "ratio": _x(float(by_seed[s].h_L_norm_median) / base.get(s, math.nan)),
                 "acc": _x(by_seed[s].test_acc)} if s in by_seed else None for s in seeds]})
    head = variant_study.headline_rows(gaps)
    paper = head[head.recipe == "default"]
    out = {"paper": _x(paper.paper.iloc[0]) if len(paper) else None,
           "layers": [{"layer": int(layer), "h": _x(r.h_norm_median),
                       "branch": _x(r.branch_norm_median)} for layer, r in per_layer.iterrows()],
           "biggest": int(per_layer.branch_norm_median.idxmax()),
           "growth": [{"epoch": e, "norm": _x(traj[e])}
                      for e in (1, 5, 10, 20, int(traj.index.max())) if e in traj.index],
           "seeds": seeds, "recipes": recipes, "measured": None, "largest": None}
    if measurements is not None and len(measurements):
        m = select_runs(measurements, "dfa", 0.0).pivot_table(
            index="seed", columns="measurement", values="h_L_norm")
        if {"stratified", "one_batch"} <= set(m.columns):
            ratio = (m.one_batch / m.stratified).median()
            out["measured"] = {"one_batch": _x(ratio), "decades": _x(math.log10(ratio)),
                               "mixed": _x((m.mixed_n / m.stratified).median())
                               if "mixed_n" in m else None}
    row = _own_headline(gaps)
    if len(row):
        best = row.loc[row.ours_mean.idxmax()]
        out["largest"] = {"recipe": best.recipe, "kind": best.kind, "ours": _x(best.ours_mean),
                          "paper": _x(float(best.paper)), "within": bool(abs(best.gap) <= 1),
                          "decades": math.log10(float(best.paper) / float(best.ours_mean))}
    return out


def accuracy_finding(runs, epochs, variant_runs: dict) -> dict:
    """DFA's peak and final accuracy per seed, the frozen baseline (and its DFA-shallow
    reading), FA and FA's variants."""
    out = {"dfa": None, "frozen": None, "shallow": None, "fa": None}
    traj = select_runs(epochs, "dfa", 0.0)
    if len(traj):
        peak = traj.loc[traj.groupby("seed").test_acc.idxmax()].set_index("seed")
        final = select_runs(runs, "dfa", 0.0).set_index("seed")
        out["dfa"] = [{"seed": int(seed), "peak": _x(p.test_acc), "epoch": int(p.epoch),
                       "final": _x(final.test_acc[seed]), "norm": _x(final.h_L_norm_median[seed])}
                      for seed, p in peak.iterrows() if seed in final.index]

    def group(sel: pd.DataFrame) -> dict:
        return {"mean": _x(sel.test_acc.mean()), "n": len(sel), "per_seed": _per_seed(sel),
                "deep_cosine": _x(sel.deep_cosine.mean())}

    fz = select_runs(runs, "frozen", 0.0)
    shallow = variant_runs.get("dfa_shallow")
    if len(fz):
        out["frozen"] = group(fz)
        if shallow is not None and len(select_runs(shallow, "frozen", 0.0)):
            out["shallow"] = group(select_runs(shallow, "frozen", 0.0))
    fa = select_runs(runs, "fa", 0.0)
    if len(fa):
        found = {name: select_runs(v, "fa", 0.0) for name, v in variant_runs.items()}
        out["fa"] = {**group(fa), "epochs": int(fa.epochs.max()),
                     "sd": _x(fa.test_acc.std(ddof=1)) if len(fa) > 1 else None,
                     "norm": _x(fa.h_L_norm_median.mean()),
                     "variants": [{"recipe": name, **group(v)} for name, v in found.items()
                                  if len(v)]}
    return out


def checks_finding(gaps: pd.DataFrame) -> dict:
    """What the default recipe misses, by method, and how BP fares on its numbers."""
    default = gaps[gaps.recipe == "default"]
    bp = default[default.run.str.startswith("bp") & default.gap.notna()]
    return {"missed": sorted({run.split(",")[0] for run in default[default.gap.abs() > 1].run}),
            "bp": len(bp), "bp_missed": int((bp.gap.abs() > 1).sum())}


def findings(summary: dict[str, pd.DataFrame], variant_runs: dict[str, pd.DataFrame],
             gaps: pd.DataFrame, measurements: pd.DataFrame | None, info: dict,
             study: dict | None = None, penalty: float | None = None, compute: str = "",
             history: list[dict] | None = None) -> dict:
    """Every finding the notes state. ``summary``: the default recipe's runs, epochs and
    layers tables (and ``nulls``, for the fresh-B section); ``variant_runs``: each
    variant's runs.csv; ``gaps``: variants_gap.csv; ``study``: config ``study`` (the
    ranking rule); ``penalty``: figures.penalty_lambda; ``compute``: compute.statement's
    sentence; ``history``: what was fixed when (reporting.history.events)."""
    runs, epochs, layers = summary["runs"], summary["epochs"], summary["layers"]
    nulls = summary.get("nulls")
    return {
        "dataset": info["name"], "has_measured": variant_study.has_measured(gaps),
        "tables": paths.braced([paths.RUNS, paths.EPOCHS, paths.LAYERS, paths.MEASUREMENTS],
                               dataset="<dataset>"),
        "runs": runs_finding(runs, epochs, variant_runs, info, compute),
        "matches": matches_finding(gaps), "ranking": ranking_finding(gaps, study),
        "misses": misses_finding(gaps),
        "measured_cosines": measured_cosines_finding(gaps, study),
        "nulls": None if nulls is None or penalty is None else
        [null_finding(nulls, lam) for lam in (0.0, penalty)],
        "norm": norm_finding(runs, layers, epochs, variant_runs, measurements, gaps),
        "accuracy": accuracy_finding(runs, epochs, variant_runs),
        "checks": checks_finding(gaps), "history": history}


def page(found: dict) -> str:
    """The page: the notes' findings in templates/notes.md.j2's words."""
    return render.render("notes.md.j2", **found, datasets=labels.names(labels.DATASETS, "md"))


def notes(*args, **kwargs) -> str:
    """The page from the tables: ``page(findings(*args, **kwargs))``."""
    return page(findings(*args, **kwargs))


def read_findings(default: dict[str, str | Path], variant_runs: dict[str, str | Path],
                  gaps: str | Path, measurements: str | Path | None, info: dict,
                  expect: dict | None = None, **kwargs) -> dict:
    """``findings`` from the tables' files, each checked first. ``expect``: the runs the
    config asks for: ``runs`` (the default recipe's), ``nulls`` (its DFA runs) and
    ``variants`` (name → its runs); ``kwargs``: findings' study, penalty, compute and
    history."""
    expect = expect or {}
    summary = {k: table_io.read(v, k, expect.get("nulls" if k == "nulls" else "runs"))
               for k, v in default.items()}
    variants = {k: table_io.read(v, "runs", expect.get("variants", {}).get(k))
                for k, v in variant_runs.items()}
    return findings(summary, variants, table_io.read(gaps, "variants_gap"),
                    table_io.read(measurements, "measurements", expect.get("runs"))
                    if measurements else None, info, **kwargs)


def write_notes(findings_json: str | Path, out: str | Path) -> str:
    """reproduction_notes.md from findings.json (rule findings, with the variant study)."""
    notes_found = found_io.read(findings_json)["notes"]
    if notes_found is None:
        raise ValueError(f"{findings_json}: holds no notes' findings (the config runs no "
                         "recipe variant); the notes are the variant study's: add "
                         "config/variants.yaml and rerun rule findings")
    text = page(notes_found)
    atomic_write_text(out, text)
    return text
