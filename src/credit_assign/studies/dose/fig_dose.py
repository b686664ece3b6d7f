"""The dose-response figure (paper/figures/fig_dose): against λ, test accuracy, the
norms (‖h_L‖, the embedding's ‖h_0‖, the largest branch ‖f_l‖) and the deep cosine with
its fresh-B null gap, each a mean over seeds with its 95 % t-interval and every seed
dotted; and the arms beside the runs they are judged against. Drawn at the paper's text
width, from the study's per-run table."""

from __future__ import annotations

import numpy as np
import pandas as pd

from credit_assign.analysis.claims import t_interval
from credit_assign.figures import style

ZERO_AT = 3e-6  # where λ = 0 sits on the log axis (its tick says 0)
ARM_ORDER = [("λ=0", "default", "dfa", 0.0), ("cap 250", "cap250", "dfa_cap", 0.0),
             ("cap 50", "cap50", "dfa_cap", 0.0), ("λ=1e-4", "default", "dfa", 1e-4),
             ("redraw 1e-4", "redraw1", "dfa_redraw", 1e-4),
             ("λ=1e-2", "default", "dfa", 1e-2),
             ("redraw 1e-2", "redraw1", "dfa_redraw", 1e-2),
             ("frozen", "default", "frozen", 0.0)]


def _curve(ax, d: pd.DataFrame, col: str, color, label, confidence=0.95):
    x_of = {lam: (lam if lam > 0 else ZERO_AT) for lam in d.lam.unique()}
    xs, means, lows, highs = [], [], [], []
    for lam, g in sorted(d.groupby("lam"), key=lambda t: t[0]):
        v = g[col].astype(float).to_numpy()
        ax.plot([x_of[lam]] * len(v), v, ".", color=color, alpha=0.3, ms=2.5, zorder=1)
        low, high = t_interval(v, confidence)
        xs.append(x_of[lam])
        means.append(v.mean())
        lows.append(low)
        highs.append(high)
    ax.fill_between(xs, lows, highs, color=color, alpha=0.2, lw=0)
    ax.plot(xs, means, "-o", color=color, ms=3, lw=1.2, label=label, zorder=2)


def _log_lam_axis(ax, lams):
    ax.set_xscale("log")
    ax.set_xticks([ZERO_AT, 1e-4, 1e-2], ["0", "1e-4", "1e-2"])
    ax.set_xticks([1e-5, 1e-3, 1e-1], minor=True)
    ax.set_xticklabels([], minor=True)
    ax.set_xlim(ZERO_AT / 2, 0.2)
    ax.set_xlabel("penalty λ")


def draw(table: pd.DataFrame):
    import matplotlib.pyplot as plt

    style.apply()
    dose = table[(table.arm == "dose") & (table.method == "dfa")]
    fig, axes = plt.subplots(2, 2, figsize=(style.TEXT_WIDTH_IN, 4.6), layout="constrained")
    axes = axes.ravel()
    ax = axes[0]
    _curve(ax, dose, "test_acc", "#d55e00", "DFA")
    frozen = table[table.method == "frozen"].test_acc
    if len(frozen):
        ax.axhline(frozen.mean(), color="0.4", ls="--", lw=0.8, label="frozen blocks")
    ax.set_ylabel("test accuracy")
    ax.set_title("A  accuracy", loc="left")
    ax.legend(loc="lower center", frameon=False)
    ax = axes[1]
    norms = dose.assign(log_h0=np.log10(dose.h_0_norm.astype(float)),
                        log_f=np.log10(dose.branch_norm_max.astype(float)))
    _curve(ax, norms, "log10_h_L_norm", "#0072b2", "‖h_L‖")
    _curve(ax, norms, "log_h0", "#56b4e9", "‖h_0‖ (embedding)")
    _curve(ax, norms, "log_f", "#009e73", "largest ‖f_l‖")
    ax.set_ylabel("log₁₀ norm (median)")
    ax.set_title("B  norms", loc="left")
    ax.legend(loc="upper right", frameon=False)
    ax = axes[2]
    _curve(ax, dose, "deep_cosine", "#cc79a7", "deep cosine")
    _curve(ax, dose, "null_deep_gap", "0.45", "minus its fresh-B null")
    ax.set_ylabel("cosine to the true gradient")
    ax.set_title("C  alignment", loc="left")
    ax.legend(loc="upper left", frameon=False)
    for ax in axes[:3]:
        _log_lam_axis(ax, dose.lam.unique())
    ax = axes[3]
    shown = [(lab, table[(table.recipe == r) & (table.method == m)
                         & np.isclose(table.lam, lam)].test_acc.astype(float).to_numpy())
             for lab, r, m, lam in ARM_ORDER]
    shown = [(lab, v) for lab, v in shown if len(v)]
    for i, (lab, v) in enumerate(shown):
        arm = "cap" in lab or "redraw" in lab
        color = "#cc79a7" if "cap" in lab else "#009e73" if arm else "0.35"
        ax.plot([i] * len(v), v, ".", color=color, alpha=0.45, ms=3)
        low, high = t_interval(v, 0.95)
        ax.plot([i, i], [low, high], color=color, lw=1.6)
        ax.plot([i], [v.mean()], "o", color=color, ms=4)
    ax.set_xticks(range(len(shown)), [lab for lab, _ in shown], rotation=40, ha="right",
                  rotation_mode="anchor", fontsize=7)
    ax.set_ylabel("test accuracy")
    ax.set_title("D  arms", loc="left")
    return fig


def make(table_csv: str, outputs) -> None:
    style.save(draw(pd.read_csv(table_csv)), outputs)


def from_job(job) -> None:
    """Step fig_dose (scripts/figure.py hands it the Snakemake job): the inputs,
    outputs and params its rule names."""
    make(job.input.runs, job.output)
