"""Alignment probes: every rule's teaching signal against the true gradient."""

from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns

from credit_assign.figures import style

RULE_NAMES = {"bp": "BP", "dfa": "DFA", "fa": "FA", "frozen": "frozen blocks",
              "np": "NP (trained)", "np_sequential": "NP sequential",
              "np_simultaneous": "NP simultaneous", "random": "random direction"}


def plot(alignment: pd.DataFrame, ratios: pd.DataFrame, method: str, lam: float):
    import matplotlib.pyplot as plt

    style.apply()
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.5), layout="constrained")
    nets = alignment[(alignment.method == method) & np.isclose(alignment.lam, lam)].copy()
    nets["rule"] = nets.rule.map(lambda r: RULE_NAMES.get(r, r))
    order = [RULE_NAMES[r] for r in RULE_NAMES if RULE_NAMES[r] in set(nets.rule)]
    palette = dict(zip(order, style.PALETTE))
    title = f"{style.METHOD_NAMES.get(method, method)}-trained nets, {style.lam_label(lam)}"

    ax = axes[0]
    last = nets[nets.epoch == nets.epoch.max()]
    if last.empty:
        ax.text(0.5, 0.5, "no probes for these networks", ha="center", transform=ax.transAxes)
    else:
        sns.lineplot(data=last, x="layer", y="cosine", hue="rule", hue_order=order,
                     palette=palette, marker="o", errorbar="sd", ax=ax)
        ax.set_xticks(sorted(last.layer.unique()))
        ax.legend(frameon=False, fontsize=6)
    ax.set_title(f"A  per layer, epoch {int(nets.epoch.max()) if len(nets) else '—'}",
                 loc="left")
    ax.set_xlabel("hidden state $h_l$ (0 = embedding)")
    ax.set_ylabel(style.LABELS["cosine"])
    ax.axhline(0, color="0.5", lw=0.6, ls="--")

    ax = axes[1]
    deep = nets[nets.layer >= 1].groupby(["seed", "epoch", "rule"], as_index=False).cosine.mean()
    if len(deep):
        sns.lineplot(data=deep, x="epoch", y="cosine", hue="rule", hue_order=order,
                     palette=palette, marker="o", errorbar="sd", ax=ax, legend=False)
    ax.set_title("B  deep cosine across training", loc="left")
    ax.set_xlabel(style.LABELS["epoch"])
    ax.set_ylabel(style.LABELS["deep_cosine"])
    ax.axhline(0, color="0.5", lw=0.6, ls="--")

    ax = axes[2]
    r = ratios[(ratios.method == method) & np.isclose(ratios.lam, lam)].copy()
    r["rule"] = r.rule.map(lambda x: RULE_NAMES.get(x, x))
    r_order = [RULE_NAMES[k] for k in RULE_NAMES if RULE_NAMES[k] in set(r.rule)]
    if len(r):
        sns.barplot(data=r, x="rule", y="ratio", order=r_order, errorbar="sd", ax=ax,
                    color=style.PALETTE[0], edgecolor="black", linewidth=0.5)
    ax.set_title("C  single-step loss decrease", loc="left")
    ax.set_xlabel("")
    ax.set_ylabel(r"$\Delta L_\mathrm{rule} / \Delta L_\mathrm{SGD}$ (symlog)")
    ax.tick_params(axis="x", rotation=30, labelsize=7)
    # unbounded below (a rule with large raw updates overshoots): symmetric-log axis
    ax.set_yscale("symlog", linthresh=1.0)
    ax.axhline(1, color="0.5", lw=0.6, ls=":")
    ax.axhline(0, color="0.5", lw=0.6, ls="--")
    fig.suptitle(f"Alignment probes — {title}", fontsize=9, x=0.01, ha="left")
    return fig


def make(alignment_csv, ratios_csv, outputs, method: str = "dfa", lam: float = 0.0) -> None:
    alignment, ratios = pd.read_csv(alignment_csv), pd.read_csv(ratios_csv)
    style.save(plot(alignment, ratios, method, lam), outputs)
