"""The EP stack probes as tables (step ep_stack_summary, studies.ep_probe.page): long
tables of every probe's cosines, hindsight increments, pretraining and timings, the
per-seed table with the settling flags, and report.md's findings as plain data
(:func:`page_findings`). Reads result files only: no torch.
"""

from __future__ import annotations

from credit_assign.analysis import ep_stack_settle as settling
from credit_assign.infra import paths


def summary_tables(results: list[dict], timings: list[dict], settle: dict | None = None):
    """Long tables of every probe: cosines, hindsight increments, pretraining, timings.
    Each cosine row carries its estimate's settling flags under the criterion ``settle``
    (config ``ep_stack.settle``; :mod:`.ep_stack_settle`) and the thresholds they were taken at."""
    import pandas as pd

    cos, inc, pre, tim = [], [], [], []
    for r in results:
        key = {"corpus": r["corpus"], "precision": r["settings"]["pretrain"]["precision"],
               "seed": r["seed"]}
        limits = settling.thresholds(r["settings"]["probe"], settle)
        for step, loss in enumerate(r["pretrain"]["loss"], 1):
            pre.append({**key, "step": step, "loss": loss, "val_loss": r["pretrain"]["val_loss"]})
        for probe in r["probes"]:
            for ep in probe["ep"]:
                row = {**key, "batch": probe["batch"], "free_steps": ep["free_steps"]}
                flags = settling.flags(ep["residual"], ep["t_best"], limits)
                for group, value in ep["cosine"].items():
                    cos.append({**row, "group": group, "cosine": value,
                                "residual": ep["residual"], "t_best": ep["t_best"],
                                **flags, **limits})
                for point in ep["increments"]:
                    inc.append({**row, **point, "is_best": point["t"] == ep["t_best"]})
    for t in timings:
        key = {"corpus": t["corpus"], "precision": t["precision"], "seed": t["seed"],
               "peak_rss_mb": t["peak_rss_mb"]}
        tim.append({**key, "phase": "pretrain", "batch": None, "free_steps": None,
                    "seconds": t["pretrain"]})
        for probe in t["probes"]:
            tim.append({**key, "phase": "reference", "batch": probe["batch"],
                        "free_steps": None, "seconds": probe["reference"]})
            for ep in probe["ep"]:
                for phase in ("free", "nudged", "grads"):
                    tim.append({**key, "phase": f"ep_{phase}", "batch": probe["batch"],
                                "free_steps": ep["free_steps"], "seconds": ep[phase]})
    return pd.DataFrame(cos), pd.DataFrame(inc), pd.DataFrame(pre), pd.DataFrame(tim)


def by_seed(cos):
    """One row per (corpus, precision, seed, T1, group): the cosine, free-phase residual
    and t_best averaged over that seed's probe batches — the unit the spread across
    seeds is taken over — and whether the seed settled there: ``settled`` when every one
    of its batches did (``batches_settled`` of ``batches``), with the reasons
    (``residual_ok``: every batch's residual below ``max_residual``, the largest being
    ``residual_max``; ``t_best_ok``: every t_best beyond ``t_best_after``, the smallest
    being ``t_best_min``)."""
    keys = ["corpus", "precision", "seed", "free_steps", "group"]
    out = (cos.groupby(keys, sort=True)
           .agg(cosine=("cosine", "mean"), cosine_min=("cosine", "min"),
                cosine_max=("cosine", "max"), residual=("residual", "mean"),
                t_best=("t_best", "mean"), batches=("batch", "nunique"),
                residual_max=("residual", "max"), t_best_min=("t_best", "min"),
                batches_settled=("settled", "sum"), residual_ok=("residual_ok", "all"),
                t_best_ok=("t_best_ok", "all"), max_residual=("max_residual", "first"),
                t_best_after=("t_best_after", "first"))
           .reset_index())
    out["settled"] = out["batches_settled"] == out["batches"]
    return out


def _plain(x):
    """A numpy scalar as the Python number or bool it holds (JSON-ready; the same str)."""
    return x.item() if hasattr(x, "item") else x


def _spread(values) -> dict:
    """Per-seed values' n, mean, sd (n > 1), min and max; None where undefined."""
    import numpy as np

    v = np.asarray(values, float)
    n = len(v)
    return {"n": n, "mean": float(v.mean()) if n else None,
            "sd": float(v.std(ddof=1)) if n > 1 else None,
            "min": float(v.min()) if n else None, "max": float(v.max()) if n else None}


def _unsettled(sub) -> list[dict]:
    """Each unsettled seed of a by-seed slice (one group's rows): the seed, the halves of
    the criterion it fails, its largest residual and its smallest t_best."""
    rows = sub[~sub["settled"].astype(bool)]
    return [{"seed": _plain(r["seed"]), "failed": settling.failed(r),
             "residual_max": float(r["residual_max"]), "t_best_min": float(r["t_best_min"])}
            for _, r in rows.iterrows()]


# |Spearman ρ| below this is called no clear monotone relation. 0.3 is the conventional
# floor of a "moderate" correlation (Cohen 1988: 0.1 small, 0.3 medium, 0.5 large); the
# estimates share seeds and probe batches, so they are not independent draws and no
# p-value is attached: the wording only says which way the ranks go, and how clearly.
RHO_CLEAR = 0.3


def rank_relation(rho: float) -> str:
    """Which way block 0's cosine goes as the free-phase residual rises, from the sign and
    size of their Spearman ρ (``RHO_CLEAR``): ``falls``, ``rises``, ``none`` (no clear
    monotone relation) or ``undefined`` (NaN: one of the two is constant)."""
    if rho != rho:
        return "undefined"
    if rho <= -RHO_CLEAR:
        return "falls"
    if rho >= RHO_CLEAR:
        return "rises"
    return "none"


def _cosine_range(part) -> dict | None:
    """Block 0's cosine over some estimates: min, max, how many, over how many seed runs."""
    if not len(part):
        return None
    return {"min": float(part["cosine"].min()), "max": float(part["cosine"].max()),
            "n": len(part), "runs": part.groupby(["precision", "seed"]).ngroups}


def block0_beside_residual(cos) -> dict | None:
    """Block 0's cosine beside the free-phase residual: their rank correlation over every
    estimate (a correlation, not a cause; ``rho`` None where undefined), and the cosine's
    range among settled and among unsettled estimates; None under three estimates."""
    b0 = cos[cos["group"] == "block0"].dropna(subset=["cosine"])
    if len(b0) < 3:
        return None
    rho = b0["residual"].rank().corr(b0["cosine"].rank())
    settled = b0["settled"].astype(bool)
    return {"n": len(b0), "rho": float(rho) if rho == rho else None,
            "direction": rank_relation(rho), "rho_clear": RHO_CLEAR,
            "settled": _cosine_range(b0[settled]), "unsettled": _cosine_range(b0[~settled]),
            "by_precision": [{"precision": p, "settled": int(g["settled"].astype(bool).sum()),
                              "n": len(g)} for p, g in b0.groupby("precision")]}


def block0_table(seeds, precisions: list[str]) -> list[dict]:
    """One row per (precision, T1): seeds settled of all, the spread of each group's
    per-seed cosine over the settled seeds (block 1: the second block, None with one),
    and the unsettled seeds."""
    blocks = sorted({g for g in seeds["group"] if g.startswith("block")},
                    key=lambda g: int(g[5:]))
    rows = []
    for prec in precisions:
        for t1 in sorted(seeds["free_steps"].unique()):
            sub = seeds[(seeds["precision"] == prec) & (seeds["free_steps"] == t1)]
            ok = sub[sub["settled"].astype(bool)]

            def col(g, ok=ok):
                return _spread(ok.loc[ok["group"] == g, "cosine"].dropna())

            one = sub[sub["group"] == "all"]
            rows.append({"precision": prec, "t1": _plain(t1),
                         "settled": int(one["settled"].sum()), "seeds": len(one),
                         "block0": col("block0"),
                         "block1": col(blocks[1]) if len(blocks) > 1 else None,
                         "all": col("all"), "embeddings": col("embeddings"),
                         "unsettled": _unsettled(one)})
    return rows


def every_seed(seeds, pre, precisions: list[str]) -> list[dict]:
    """One row per (precision, seed, T1): settled or why not, batches settled, the
    cosines (NaN where the seed has none), largest residual, smallest t_best, and the
    validation loss after pretraining."""
    val = pre.groupby(["precision", "seed"])["val_loss"].first()
    wide = seeds.pivot_table(index=["precision", "seed", "free_steps"], columns="group",
                             values="cosine")
    extra = seeds[seeds["group"] == "all"].set_index(["precision", "seed", "free_steps"])
    rows = []
    for prec in precisions:
        for (pp, seed, t1), row in wide.loc[[prec]].iterrows():
            e = extra.loc[(pp, seed, t1)]
            rows.append({"precision": pp, "seed": _plain(seed), "t1": _plain(t1),
                         "settled": bool(e["settled"]), "failed": settling.failed(e),
                         "batches_settled": int(e["batches_settled"]),
                         "batches": int(e["batches"]),
                         **{g: float(row.get(g, float("nan")))
                            for g in ("block0", "all", "embeddings")},
                         "residual_max": float(e["residual_max"]),
                         "t_best_min": float(e["t_best_min"]),
                         "val_loss": float(val.loc[(pp, seed)])})
    return rows


def cost(tim, precisions: list[str]) -> list[dict]:
    """Per precision: seeds, mean pretraining and whole-job seconds over the seeds, and
    the largest peak RSS."""
    rows = []
    for prec in precisions:
        t = tim[tim["precision"] == prec]
        rows.append({"precision": prec, "seeds": int(t["seed"].nunique()),
                     "pretrain_s": float(t[t["phase"] == "pretrain"]["seconds"].mean()),
                     "job_s": float(t.groupby("seed")["seconds"].sum().mean()),
                     "peak_rss_mb": float(t["peak_rss_mb"].max())})
    return rows


def page_findings(results: list[dict], seeds, pre, tim, cos=None) -> dict:
    """The findings docs/ep_stack.md is written from, as JSON-ready data: the paths it
    names, the first result's settings, corpora, seeds, precisions and code commits, the
    settling thresholds, and the tables (a missing cosine is NaN); ``residual`` is None
    without ``cos`` or under three block 0 estimates."""
    precisions = [p for p in ("float32", "bfloat16") if p in set(seeds["precision"])]
    limits = seeds.iloc[0]
    return {
        "paths": {"report": paths.EP_REPORT,
                  "tables": paths.braced([paths.EP_COSINES, paths.EP_BY_SEED,
                                          paths.EP_PRETRAIN, paths.EP_TIMINGS_TABLE]),
                  "figure": paths.figure("fig_ep_stack_cosines", "*")},
        "settings": results[0]["settings"],
        "corpora": sorted({r["corpus"] for r in results}),
        "seeds": sorted({r["seed"] for r in results}),
        "precisions": precisions,
        "commits": sorted({str(r["provenance"]["code"]["git_commit"])[:7] for r in results
                           if r["provenance"]["code"]["git_commit"]}),
        "settle": {"max_residual": float(limits["max_residual"]),
                   "t_best_after": float(limits["t_best_after"])},
        "block0": block0_table(seeds, precisions),
        "residual": block0_beside_residual(cos) if cos is not None else None,
        "every_seed": every_seed(seeds, pre, precisions),
        "cost": cost(tim, precisions),
    }
