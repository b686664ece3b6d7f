"""EP through a spring-coupled stack: cosine of EP's gradient to BPTT's per parameter group
(A), the hindsight-selection traces (B), and the BPTT pretraining that set the operating
point (C). Every number comes from results/ep_stack/summary/*.csv."""

from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns

from credit_assign.figures import style


def _group_order(groups) -> list[str]:
    blocks = sorted((g for g in groups if g.startswith("block")), key=lambda g: int(g[5:]))
    return [g for g in ["all", *blocks, "embeddings"] if g in set(groups)]


def _group_label(g: str) -> str:
    return f"block {g[5:]}" if g.startswith("block") else g


def plot(cos: pd.DataFrame, inc: pd.DataFrame, pre: pd.DataFrame):
    import matplotlib.pyplot as plt

    style.apply()
    fig, axes = plt.subplots(1, 3, figsize=(10.5, 3.3), layout="constrained",
                             gridspec_kw={"width_ratios": [1.4, 1, 1]})
    free_steps = sorted(cos["free_steps"].unique())
    colors = dict(zip(free_steps, [style.PALETTE[i] for i in (0, 3, 2, 4, 1)]))
    groups = _group_order(cos["group"].unique())
    corpora = sorted(cos["corpus"].unique())

    ax = axes[0]
    width = 0.8 / len(free_steps)
    for j, t1 in enumerate(free_steps):
        sub = cos[cos["free_steps"] == t1]
        for i, g in enumerate(groups):
            vals = sub.loc[sub["group"] == g, "cosine"].dropna().to_numpy()
            xpos = i - 0.4 + width * (j + 0.5)
            if len(vals):
                ax.bar(xpos, vals.mean(), width=width * 0.9, color=colors[t1], alpha=0.35)
                jitter = np.linspace(-0.25, 0.25, len(vals)) * width if len(vals) > 1 else [0]
                ax.scatter(xpos + np.asarray(jitter), vals, s=10, color=colors[t1], zorder=3,
                           label=rf"$T_1={t1}$" if i == 0 else None)
    ax.axhline(0, color="0.3", lw=0.6)
    ax.set_xticks(range(len(groups)), [_group_label(g) for g in groups])
    ax.set_ylabel("cosine of EP's gradient to BPTT's")
    ax.set_ylim(min(-0.1, float(np.nanmin(cos["cosine"].to_numpy(float))) - 0.05), 1.05)
    n = cos.groupby(["corpus", "seed", "batch"]).ngroups
    ax.set_title(f"A  EP vs BPTT by group ({n} batches, bar = mean)", loc="left")
    ax.legend(frameon=False, loc="lower left", title="free phase")

    ax = axes[1]
    for (*_, t1), sub in inc.groupby(["corpus", "seed", "batch", "free_steps"]):
        ax.semilogy(sub["t"], sub["increment"], color=colors[t1], lw=0.8, alpha=0.7)
        best = sub[sub["is_best"]]
        ax.scatter(best["t"], best["increment"], color=colors[t1], s=14, zorder=3,
                   edgecolor="black", linewidth=0.4)
    ax.set_xlabel(r"nudged step $t$")
    ax.set_ylabel(r"$\|a_t - a_{t-\Delta}\|$")
    ax.set_title("B  hindsight selection (dot: kept)", loc="left")

    ax = axes[2]
    runs = list(pre.groupby(["corpus", "seed"]))
    run_colors = sns.color_palette("crest", n_colors=max(len(runs), 2))
    for i, ((corpus, seed), sub) in enumerate(runs):
        ls = "-" if corpus == corpora[0] else "--"
        ax.plot(sub["step"], sub["loss"], lw=0.8, ls=ls, color=run_colors[i], alpha=0.8,
                label=f"{corpus}, seed {seed}")
        ax.scatter([sub["step"].max()], [sub["val_loss"].iloc[0]], marker="x",
                   color=run_colors[i], zorder=3)
    ax.set_xlabel("pretraining step (BPTT)")
    ax.set_ylabel("train loss (x: val loss at end)")
    ax.set_title("C  operating point", loc="left")
    if pre.groupby(["corpus", "seed"]).ngroups <= 4:
        ax.legend(frameon=False, fontsize=6)
    fig.suptitle(f"Spring-coupled equilibrium stack ({', '.join(corpora)}): "
                 "did the tension reach block 0?", fontsize=9, x=0.01, ha="left")
    return fig


def make(inputs, outputs) -> None:
    cos = pd.read_csv(inputs.cosines)
    inc = pd.read_csv(inputs.increments)
    pre = pd.read_csv(inputs.pretrain)
    if cos.empty:
        raise ValueError(f"{inputs.cosines} holds no cosines")
    style.save(plot(cos, inc, pre), outputs)
