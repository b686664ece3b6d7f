"""The reproduction notes' findings, as data (findings.json's ``notes``; the words are
reporting.reproduction_notes' templates): the runs and their cost, the numbers the
default recipe matches, the ranking, each miss with the nearest column of each kind,
the accuracies, the layer cosines and the norm (analysis.notes_norm), and the checks.
"""

from __future__ import annotations

import pandas as pd

from credit_assign.analysis import study as variant_study
from credit_assign.analysis.aggregate import select_runs
from credit_assign.analysis.cells import flag
from credit_assign.analysis.comparison import number_key, paper_number, same_number
from credit_assign.analysis.notes_norm import measured_cosines_finding, norm_finding, plain
from credit_assign.infra import paths
from credit_assign.infra.paths import DEFAULT_RECIPE


def _per_seed(runs: pd.DataFrame, column: str = "test_acc") -> list[dict]:
    """A column's value on each seed: a mean beside it hides no outlier."""
    return [{"seed": int(r.seed), "value": plain(getattr(r, column))}
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
        "jobs": [{"epochs": int(e), "n": len(t), "median": plain(t.median()), "min": plain(t.min()),
                  "max": plain(t.max())} for e, t in runs.groupby("epochs").total_s],
        "epoch_s": plain(epochs.train_s.median() + epochs.diagnostics_s.median()),
        "all": len(all_runs), "core_hours": plain(all_runs.total_s.sum() / 3600),
        "compute": compute}


def matches_finding(gaps: pd.DataFrame) -> dict:
    """The default recipe's numbers within tolerance, and the counts (every number, the
    verified targets)."""
    default = gaps[gaps.recipe == DEFAULT_RECIPE]
    ok = default[default.gap.abs() <= 1]
    ver = variant_study.verified_numbers(default)
    return {"within": len(ok), "compared": int(default.gap.notna().sum()),
            "within_verified": int((default.gap.abs() <= 1)[ver].sum()),
            "compared_verified": int(default.gap.notna()[ver].sum()),
            "rows": [{**number_key(r), **paper_number(r), "ours": plain(r.ours_mean),
                      "verified": bool(v), "note": r.note if isinstance(r.note, str) else ""}
                     for r, v in zip(ok.itertuples(), ver[ok.index], strict=True)]}


def ranking_finding(gaps: pd.DataFrame, study: dict | None) -> dict:
    """The study's ranking (study.ranking, the one ordering), each kind apart,
    its winners and the winner's curse held one seed out (the goal is a verdict:
    analysis/verdicts/goal.py)."""
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
        "holdout": variant_study.holdout_data(variant_study.holdout(gaps, study))}


def _nearest(group: pd.DataFrame, d) -> dict:
    same = group[same_number(group, number_key(d))]
    if same.empty:
        return {"nearest": None, "within": []}
    b = same.loc[same.gap.abs().idxmin()]
    # a column is "closest" only where it comes nearer the paper than the default
    return {"nearest": {"recipe": b.recipe, "ours": plain(b.ours_mean), "gap": plain(b.gap)},
            "nearer": bool(abs(b.gap) < abs(d.gap)),
            "within": sorted(same[same.gap.abs() <= 1].recipe)}


def misses_finding(gaps: pd.DataFrame) -> list[dict]:
    """Each number the default misses, and the column that moves it closest — among
    those that depart from nothing the paper states (the stated recipe measured another
    way, the open variants and their measurements) and, apart, among the departing ones:
    a departure never reads as the explanation of a miss unmarked."""
    default = gaps[gaps.recipe == DEFAULT_RECIPE].reset_index(drop=True)
    others = gaps[(gaps.recipe != DEFAULT_RECIPE) & ~gaps.inherited.astype(bool)
                  & gaps.gap.notna()]
    goal = others.kind.isin(variant_study.GOAL_KINDS)
    out = []
    for _, d in default.iterrows():
        if pd.isna(d.gap) or abs(d.gap) <= 1:
            continue
        out.append({**number_key(d), **paper_number(d),
                    "verified": flag(d.get("verified", True)),
                    "ours": plain(d.ours_mean), "gap": plain(d.gap),
                    "gap_sd": plain(d.get("gap_sd")),
                    "tighter": flag(d.get("tolerance_below_sd", False)),
                    "open": _nearest(others[goal], d), "departs": _nearest(others[~goal], d)})
    return out


def accuracy_finding(runs, epochs, variant_runs: dict) -> dict:
    """DFA's peak and final accuracy per seed, the frozen baseline (and its DFA-shallow
    reading), FA and FA's variants."""
    out = {"dfa": None, "frozen": None, "shallow": None, "fa": None}
    traj = select_runs(epochs, "dfa", 0.0)
    if len(traj):
        peak = traj.loc[traj.groupby("seed").test_acc.idxmax()].set_index("seed")
        final = select_runs(runs, "dfa", 0.0).set_index("seed")
        out["dfa"] = [{"seed": int(seed), "peak": plain(p.test_acc), "epoch": int(p.epoch),
                       "final": plain(final.test_acc[seed]),
                       "norm": plain(final.h_L_norm_median[seed])}
                      for seed, p in peak.iterrows() if seed in final.index]

    def group(sel: pd.DataFrame) -> dict:
        return {"mean": plain(sel.test_acc.mean()), "n": len(sel), "per_seed": _per_seed(sel),
                "deep_cosine": plain(sel.deep_cosine.mean())}

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
                     "sd": plain(fa.test_acc.std(ddof=1)) if len(fa) > 1 else None,
                     "norm": plain(fa.h_L_norm_median.mean()),
                     "variants": [{"recipe": name, **group(v)} for name, v in found.items()
                                  if len(v)]}
    return out


def checks_finding(gaps: pd.DataFrame) -> dict:
    """What the default recipe misses, by method, and how BP fares on its numbers."""
    default = gaps[gaps.recipe == DEFAULT_RECIPE]
    bp = default[(default.method == "bp") & default.gap.notna()]
    return {"missed": sorted(set(default[default.gap.abs() > 1].method)),
            "bp": len(bp), "bp_missed": int((bp.gap.abs() > 1).sum())}


def findings(summary: dict[str, pd.DataFrame], variant_runs: dict[str, pd.DataFrame],
             gaps: pd.DataFrame, measurements: pd.DataFrame | None, info: dict,
             study: dict | None = None, compute: str = "",
             history: list[dict] | None = None) -> dict:
    """Every finding the notes state but the fresh-B null's values (findings.null_summary,
    in findings.json's ``nulls``: the claims judge them). ``summary``: the default
    recipe's runs, epochs and layers tables; ``variant_runs``: each variant's runs.csv;
    ``gaps``: variants_gap.csv; ``study``: config ``study`` (the ranking); ``compute``:
    compute.statement's sentence; ``history``: what was fixed when (analysis.history.events)."""
    runs, epochs, layers = summary["runs"], summary["epochs"], summary["layers"]
    return {
        "dataset": info["name"], "has_measured": variant_study.has_measured(gaps),
        "tables": paths.braced([paths.RUNS, paths.EPOCHS, paths.LAYERS, paths.MEASUREMENTS],
                               dataset="<dataset>", recipe=paths.DEFAULT_RECIPE),
        "runs": runs_finding(runs, epochs, variant_runs, info, compute),
        "matches": matches_finding(gaps), "ranking": ranking_finding(gaps, study),
        "misses": misses_finding(gaps),
        "measured_cosines": measured_cosines_finding(gaps, study),
        "norm": norm_finding(runs, layers, epochs, variant_runs, measurements, gaps),
        "accuracy": accuracy_finding(runs, epochs, variant_runs),
        "checks": checks_finding(gaps), "history": history}
