"""The EP question (config/claims_ep.yaml): EP against the gradient it estimates.

A–D: block 0's cosine between EP and the implicit (fixed-point) gradient against the
residual of the free state EP nudged from, one panel per (T2max, r), every (seed, batch,
T1) that has an implicit gradient (a batch whose free phase converged); colour: T1 (the
converged state included). E: the judged cell's block 0 cosine per seed against each
reference — the implicit gradient and BPTT through 400/1000/2000 steps — so the
reference's part is visible. F: the verdict — each seed's effect (its batches in grey),
the t-interval of the judged fresh seeds' mean and the threshold. Markers everywhere:
filled, a judged fresh seed; ×, a fresh seed without a stable fixed point (not judged,
named in F); hollow, a seed seen before (shown, never judged). Every number comes from
results/ep_stack/summary/ep_question/ (analysis.ep_question).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from credit_assign.analysis import ep_question
from credit_assign.analysis import tables as table_io
from credit_assign.figures import style
from credit_assign.reporting import labels

TEXT = labels.figure_text(__name__)


def _t1_order(values) -> list[str]:
    steps = sorted((v for v in set(values) if v != ep_question.CONVERGED), key=int)
    return steps + ([ep_question.CONVERGED] if ep_question.CONVERGED in set(values) else [])


def _ref_order(values) -> list[str]:
    bptt = sorted((v for v in set(values) if v.startswith("bptt")), key=lambda v: int(v[4:]))
    return (["implicit"] if "implicit" in set(values) else []) + bptt


def _ref_label(ref: str) -> str:
    return TEXT["implicit"] if ref == "implicit" else TEXT["bptt"].format(steps=ref[4:])


def plot(cos: pd.DataFrame, found: dict):
    import matplotlib.pyplot as plt
    from matplotlib.ticker import LogLocator, NullFormatter

    style.apply()
    # drawn at the printed size: saved with its pad and tick labels, the text width
    fig = plt.figure(figsize=(style.TEXT_WIDTH_IN - 0.4, 6.4), layout="constrained")
    grid = fig.add_gridspec(3, 4)
    b0 = cos[cos["group"] == ep_question.GROUP]
    seen = {r["seed"] for r in found["seeds"] if r["set"] == "seen"}
    unjudged = {r["seed"] for r in found["seeds"] if r["set"] == "fresh" and not r["stable"]}

    def dots(ax, x, y, seeds, color, s=12):
        """Judged fresh seeds filled, unjudged fresh ones ×, seen ones hollow."""
        x, y, seeds = (np.asarray(a) for a in (x, y, seeds))
        kinds = np.array(["seen" if v in seen else "out" if v in unjudged else "in"
                          for v in seeds.tolist()])
        ax.scatter(x[kinds == "in"], y[kinds == "in"], s=s, color=color, zorder=3)
        ax.scatter(x[kinds == "out"], y[kinds == "out"], s=s, color=color, marker="x",
                   zorder=3, linewidths=0.8)
        ax.scatter(x[kinds == "seen"], y[kinds == "seen"], s=s, facecolors="none",
                   edgecolors=color, zorder=3)

    t1s = _t1_order(b0["free_steps"])
    colors = dict(zip(t1s, [style.PALETTE[i] for i in (0, 3, 2, 4, 1)], strict=False))
    cells = sorted({(int(a), float(b)) for a, b in
                    b0[["nudged_steps_max", "r"]].itertuples(index=False)})
    imp = b0[b0["reference"] == "implicit"]
    res = imp["residual"].to_numpy(float)
    res = res[np.isfinite(res) & (res > 0)]
    xlim = (res.min() / 3, res.max() * 3) if len(res) else (1e-9, 1e-3)
    first = None
    for k, (t2, r) in enumerate(cells[:4]):
        ax = fig.add_subplot(grid[k // 2, 2 * (k % 2):2 * (k % 2) + 2], sharey=first)
        first = first or ax
        sub = imp[(imp["nudged_steps_max"] == t2) & np.isclose(imp["r"], r)]
        for t1 in t1s:
            pts = sub[sub["free_steps"] == t1]
            dots(ax, pts["residual"], pts["cosine"], pts["seed"], colors[t1])
            ax.scatter([], [], s=12, color=colors[t1], label=TEXT["t1"].format(t1=t1))
        ax.axhline(found["claim"]["threshold"], color="0.4", lw=0.6, ls="--")
        ax.set_xscale("log")
        ax.set_xlim(*xlim)
        ax.xaxis.set_major_locator(LogLocator(numticks=5))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(TEXT["residual_axis"])
        ax.set_ylabel(TEXT["cosine_axis"])
        ax.set_title(TEXT["panel_cell"].format(letter="ABCD"[k], t2=t2, r=r), loc="left")
        if k == 0:
            ax.legend(frameon=False, fontsize=7, loc="lower left", ncol=2)

    eff = found["claim"]["effect"]
    at = b0[(b0["free_steps"] == ep_question._t1(eff["free_steps"]))
            & (b0["nudged_steps_max"] == eff["nudged_steps_max"])
            & np.isclose(b0["r"], eff["r"])]
    per_seed = at.groupby(["seed", "reference"])["cosine"].mean().reset_index()
    refs = _ref_order(per_seed["reference"])
    seeds = [r["seed"] for r in found["seeds"]]
    ax = fig.add_subplot(grid[2, 0:2])
    for j, ref in enumerate(refs):
        rows = per_seed[per_seed["reference"] == ref].set_index("seed")
        xs = j + np.linspace(-0.3, 0.3, len(seeds))
        here = [(x, s) for x, s in zip(xs, seeds, strict=True) if s in rows.index]
        dots(ax, [x for x, _ in here], [rows.loc[s, "cosine"] for _, s in here],
             [s for _, s in here], style.PALETTE[0])
    ax.axhline(found["claim"]["threshold"], color="0.4", lw=0.6, ls="--")
    ax.set_xticks(range(len(refs)), [_ref_label(r) for r in refs], fontsize=7)
    ax.set_ylabel(TEXT["reference_axis"])
    ax.set_title(TEXT["panel_e"].format(t2=eff["nudged_steps_max"], r=eff["r"]), loc="left")

    ax = fig.add_subplot(grid[2, 2:4])
    v = found["verdict"]
    xt, xl = [], []
    for i, row in enumerate(found["seeds"]):
        x = i + (0.6 if row["set"] == "seen" else 0.0)
        xt.append(x)
        xl.append(str(row["seed"]))
        if row["effect"] is None:
            ax.text(x, 0.03, TEXT["no_fixed_point"], rotation=90, ha="center",
                    va="bottom", fontsize=7, transform=ax.get_xaxis_transform())
            continue
        batch = [b["cosine"] for b in row["per_batch"] if b["cosine"] is not None]
        ax.scatter([x] * len(batch), batch, s=6, color="0.6", zorder=2)
        dots(ax, [x], [row["effect"]], [row["seed"]], style.PALETTE[0], s=16)
    n_fresh = sum(r["set"] == "fresh" for r in found["seeds"])
    if v["low"] is not None:
        ax.fill_between([-0.4, n_fresh - 0.6], v["low"], v["high"], color=style.PALETTE[0],
                        alpha=0.15, lw=0)
        ax.hlines(v["mean"], -0.4, n_fresh - 0.6, color=style.PALETTE[0], lw=1)
    ax.axhline(found["claim"]["threshold"], color="0.4", lw=0.6, ls="--")
    ax.set_xticks(xt, xl, fontsize=7)
    ax.set_xlabel(TEXT["seed_axis"])
    ax.set_ylabel(TEXT["effect_axis"])
    ax.set_title(TEXT["panel_f"].format(verdict=v["verdict"],
                                        confidence=round(100 * v["confidence"])), loc="left")
    fig.suptitle(TEXT["title"], fontsize=8, x=0.01, ha="left")
    return fig


def make(inputs, outputs) -> None:
    cos = table_io.read(inputs.cosines, "ep_fp_cosines")
    with open(inputs.findings, encoding="utf-8") as f:
        found = json.load(f)
    if cos.empty:
        raise ValueError(f"{inputs.cosines} holds no cosines")
    style.save(plot(cos, found), outputs)


def from_job(job) -> None:
    """Step fig_ep_fixed_point (scripts/figure.py hands it the Snakemake job): the inputs,
    outputs and params its rule names."""
    make(job.input, job.output)
