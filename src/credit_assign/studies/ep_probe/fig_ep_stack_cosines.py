"""EP through a spring-coupled stack, as a distribution over pretraining seeds.

A: cosine of EP's gradient to BPTT's per parameter group, at the config's pretraining
precision (dot: one seed, averaged over its probe batches; bar and whisker: mean ± sd
over the settled seeds). B: block 0's cosine against the free-phase residual, every
(seed, batch, T1) — the operating point beside the cosine (a scatter, not a cause). C: the BPTT
pretraining that set the operating point. D, E: block 0's cosine and the free-phase
residual per seed for every pretraining precision run (lines join a seed's precisions;
bar: mean over settled seeds). F: the hindsight selection traces. Hollow markers
everywhere: a seed (or, in B, an estimate) whose free phase did not settle (config
``ep_stack.settle``, the ``settled`` column the summary writes). Every number comes
from results/ep_stack/summary/*.csv.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns

from credit_assign.analysis import tables as table_io
from credit_assign.figures import style
from credit_assign.reporting import labels

TEXT = labels.figure_text(__name__)
PRECISION_ORDER = ("float32", "bfloat16")
MARKERS = {"float32": "o", "bfloat16": "^"}


def _group_order(groups) -> list[str]:
    blocks = sorted((g for g in groups if g.startswith("block")), key=lambda g: int(g[5:]))
    return [g for g in ["all", *blocks, "embeddings"] if g in set(groups)]


def _group_label(g: str) -> str:
    return f"block {g[5:]}" if g.startswith("block") else g


def _precisions(frame: pd.DataFrame) -> list[str]:
    present = set(frame["precision"])
    return [p for p in PRECISION_ORDER if p in present]


def _by_seed(cos: pd.DataFrame) -> pd.DataFrame:
    """A seed's mean over its probe batches; settled when every batch is (as by_seed.csv)."""
    if "settled" not in cos:
        raise ValueError("the cosines table has no 'settled' column: rerun the step "
                         "ep_stack_summary, which flags each estimate (config ep_stack.settle)")
    keys = ["corpus", "precision", "seed", "free_steps", "group"]
    return (cos.groupby(keys).agg(cosine=("cosine", "mean"), residual=("residual", "mean"),
                                  settled=("settled", "all"))
            .reset_index())


def _scatter(ax, x, y, settled, color, **kw):
    """Filled markers for settled points, hollow ones for unsettled."""
    settled = np.asarray(settled, bool)
    x, y = np.broadcast_to(np.asarray(x, float), settled.shape), np.asarray(y, float)
    label = kw.pop("label", None)
    ax.scatter(x[settled], y[settled], color=color, label=label if settled.any() else None,
               **kw)
    ax.scatter(x[~settled], y[~settled], facecolors="none", edgecolors=color,
               label=None if settled.any() else label, **kw)


def _paired(ax, seeds: pd.DataFrame, value: str, precisions, colors, free_steps):
    """One column per (T1, precision); a seed's precisions joined by a line."""
    xt, xl = [], []
    for j, t1 in enumerate(free_steps):
        sub = seeds[seeds["free_steps"] == t1]
        xs = {p: j * (len(precisions) + 1) + i for i, p in enumerate(precisions)}
        for _, run in sub.groupby(["corpus", "seed"]):
            run = run.set_index("precision")
            pts = [(xs[p], run.loc[p, value]) for p in precisions if p in run.index]
            ax.plot([x for x, _ in pts], [y for _, y in pts], color=colors[t1], lw=0.6,
                    alpha=0.6)
        for p, x in xs.items():
            run = sub[sub["precision"] == p]
            vals, ok = run[value].to_numpy(float), run["settled"].to_numpy(bool)
            _scatter(ax, np.full(len(vals), x), vals, ok, colors[t1], marker=MARKERS[p], s=16,
                     zorder=3)
            if ok.any():  # the mean over settled seeds only
                ax.hlines(vals[ok].mean(), x - 0.3, x + 0.3, color="black", lw=1.2, zorder=4)
            xt.append(x)
            xl.append(f"{p}\n$T_1={t1}$")
    ax.set_xticks(xt, xl, fontsize=7)


def plot(cos: pd.DataFrame, inc: pd.DataFrame, pre: pd.DataFrame):
    import matplotlib.pyplot as plt

    style.apply()
    # drawn at the printed size (the paper includes it at \linewidth, a page of its own):
    # A across the width, then B–F two by two in reading order, text >= 7 pt
    fig = plt.figure(figsize=(style.TEXT_WIDTH_IN - 0.1, 7.6), layout="constrained")
    spec = fig.add_gridspec(4, 2)
    cells = [(r, c) for r in (1, 2, 3) for c in (0, 1)][:5]
    panels = [fig.add_subplot(spec[0, :])] + [fig.add_subplot(spec[r, c]) for r, c in cells]
    axes = np.array([panels[0:3], panels[3:6]], dtype=object)
    free_steps = sorted(cos["free_steps"].unique())
    # as many colours as free-phase lengths (five at most; the palette is the longer list)
    colors = dict(zip(free_steps, [style.PALETTE[i] for i in (0, 3, 2, 4, 1)], strict=False))
    groups = _group_order(cos["group"].unique())
    corpora = sorted(cos["corpus"].unique())
    precisions = _precisions(cos)
    main = precisions[0]
    seeds = _by_seed(cos)
    n_seeds = seeds.loc[seeds["precision"] == main, "seed"].nunique()
    unsettled = {t1: int((~g.loc[g["group"] == "all", "settled"]).sum())
                 for t1, g in seeds[seeds["precision"] == main].groupby("free_steps")}

    ax = axes[0, 0]
    width = 0.8 / len(free_steps)
    main_seeds = seeds[seeds["precision"] == main]
    for j, t1 in enumerate(free_steps):
        sub = main_seeds[main_seeds["free_steps"] == t1]
        for i, g in enumerate(groups):
            rows = sub[sub["group"] == g].dropna(subset=["cosine"])
            vals, ok = rows["cosine"].to_numpy(float), rows["settled"].to_numpy(bool)
            xpos = i - 0.4 + width * (j + 0.5)
            if not len(vals):
                continue
            if ok.any():  # the bar: settled seeds only
                sd = vals[ok].std(ddof=1) if ok.sum() > 1 else 0.0
                ax.bar(xpos, vals[ok].mean(), width=width * 0.9, color=colors[t1],
                       alpha=0.35, yerr=sd, error_kw={"lw": 0.8, "capsize": 2})
            jitter = np.linspace(-0.25, 0.25, len(vals)) * width if len(vals) > 1 else [0]
            _scatter(ax, xpos + np.asarray(jitter), vals, ok, colors[t1], s=10, zorder=3,
                     label=(rf"$T_1={t1}$, {unsettled[t1]} unsettled" if i == 0 else None))
    ax.axhline(0, color="0.3", lw=0.6)
    ax.set_xticks(range(len(groups)), [_group_label(g) for g in groups])
    ax.set_ylabel("cosine to BPTT")
    low = float(np.nanmin(seeds["cosine"].to_numpy(float)))
    # a band below the lowest dot for the legend and the key, clear of bars and dots
    ax.set_ylim(min(-0.1, low - 0.05) - 0.75, 1.05)
    ax.set_title(TEXT["panel_a"].format(precision=main), loc="left")
    ax.text(0.99, 0.02, TEXT["panel_a_key"].format(n_seeds=n_seeds),
            transform=ax.transAxes, ha="right", va="bottom", fontsize=7)
    ax.legend(frameon=False, loc="lower left", title="free phase", fontsize=7,
              title_fontsize=7, ncol=2)

    ax = axes[0, 1]
    b0 = cos[cos["group"] == "block0"]
    for (p, t1), sub in b0.groupby(["precision", "free_steps"]):
        _scatter(ax, sub["residual"], sub["cosine"], sub["settled"], colors[t1],
                 marker=MARKERS[p], s=14, alpha=0.8, label=f"{p}, $T_1={t1}$")
    if "max_residual" in b0:
        for limit in sorted(set(b0["max_residual"])):
            ax.axvline(limit, color="0.5", lw=0.6, ls=":")
    ax.set_xscale("log")
    ax.set_xlabel(TEXT["residual_axis"])
    ax.set_ylabel("block 0 cosine to BPTT")
    ax.set_title(TEXT["panel_b"], loc="left")
    ax.legend(frameon=False, fontsize=7)

    ax = axes[0, 2]
    runs = list(pre.groupby(["corpus", "precision", "seed"]))
    n = max(pre.groupby("precision")["seed"].nunique().max(), 1)
    shades = {p: sns.dark_palette(style.PALETTE[k], n_colors=n + 2, reverse=True)[:n]
              for p, k in zip(PRECISION_ORDER, (0, 3), strict=True)}
    for (corpus, p, seed), sub in runs:
        ls = "-" if corpus == corpora[0] else "--"
        rank = sorted(pre.loc[pre["precision"] == p, "seed"].unique()).index(seed)
        color = shades[p][rank]
        ax.plot(sub["step"], sub["loss"], lw=0.8, ls=ls, color=color, alpha=0.8,
                label=f"{p}, seed {seed}")
        ax.scatter([sub["step"].max()], [sub["val_loss"].iloc[0]], marker="x", color=color,
                   zorder=3)
    ax.set_xlabel("pretraining step (BPTT)")
    ax.set_ylabel(TEXT["loss_axis"])
    ax.set_title(TEXT["panel_c"], loc="left")
    if len(runs) <= 8:
        ax.legend(frameon=False, fontsize=7)

    b0_seeds = seeds[seeds["group"] == "block0"]
    _paired(axes[1, 0], b0_seeds, "cosine", precisions, colors, free_steps)
    axes[1, 0].set_ylabel(TEXT["seed_cosine_axis"])
    axes[1, 0].set_title(TEXT["panel_d"], loc="left")
    _paired(axes[1, 1], b0_seeds, "residual", precisions, colors, free_steps)
    axes[1, 1].set_yscale("log")
    axes[1, 1].set_ylabel(TEXT["seed_residual_axis"])
    axes[1, 1].set_title(TEXT["panel_e"], loc="left")

    ax = axes[1, 2]
    for (*_, t1), sub in inc[inc["precision"] == main].groupby(
            ["corpus", "seed", "batch", "free_steps"]):
        ax.semilogy(sub["t"], sub["increment"], color=colors[t1], lw=0.8, alpha=0.7)
        best = sub[sub["is_best"]]
        ax.scatter(best["t"], best["increment"], color=colors[t1], s=14, zorder=3,
                   edgecolor="black", linewidth=0.4)
    ax.set_xlabel(r"nudged step $t$")
    ax.set_ylabel(r"$\|a_t - a_{t-\Delta}\|$")
    ax.set_title(TEXT["panel_f"].format(precision=main), loc="left")
    fig.suptitle(TEXT["title"].format(corpora=", ".join(corpora)), fontsize=8, x=0.01,
                 ha="left")
    return fig


def make(inputs, outputs) -> None:
    cos = table_io.read(inputs.cosines, "ep_cosines")
    inc = table_io.read(inputs.increments, "ep_increments")
    pre = table_io.read(inputs.pretrain, "ep_pretrain")
    if cos.empty:
        raise ValueError(f"{inputs.cosines} holds no cosines")
    style.save(plot(cos, inc, pre), outputs)


def from_job(job) -> None:
    """Step fig_ep_stack_cosines (scripts/figure.py hands it the Snakemake job): the inputs,
    outputs and params its rule names."""
    make(job.input, job.output)
