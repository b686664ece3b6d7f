"""Figure 4, penalty rescue (docs/method.md), from the summary tables alone.

A: median ‖h_L‖ per epoch for DFA at each λ (each seed thin, geometric mean thick, log scale).
B: final deep cosine per DFA λ, the fresh-B null at the penalised λ (std over
   draws), and BP's own cosine (computed, = 1) — std over seeds elsewhere.
C: final test accuracy of BP and DFA at λ = 0 and the penalised λ, with the
   frozen-blocks baseline as a horizontal line.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from credit_assign.analysis import tables as table_io
from credit_assign.analysis.aggregate import select_runs
from credit_assign.figures import style


def _mean_std(values: pd.Series) -> tuple[float, float]:
    values = values.dropna()
    if values.empty:
        return np.nan, np.nan
    return float(values.mean()), float(values.std(ddof=1)) if len(values) > 1 else 0.0


def _missing(ax, what: str) -> None:
    ax.text(0.5, 0.5, f"no {what} in this run", transform=ax.transAxes, ha="center",
            va="center", color="0.4", fontsize=8)


def panel_norms(ax, epochs: pd.DataFrame) -> None:
    dfa = epochs[epochs.method == "dfa"]
    ax.set_title(r"A  DFA's $\|h_L\|$ per epoch", loc="left")
    if dfa.empty:
        return _missing(ax, "DFA runs")
    colors = style.lam_colors(dfa.lam.unique())
    notes = []
    for lam, group in dfa.groupby("lam"):
        # a diverged run is data: its non-finite epochs (null in the JSON) are left
        # out of the line and named on the panel, never plotted as 0 or crashed on
        finite = group[np.isfinite(group.h_L_norm_median) & (group.h_L_norm_median > 0)]
        lost = group[~group.index.isin(finite.index)]
        if len(lost):
            notes.append(f"{style.lam_label(lam)}: non-finite from epoch {int(lost.epoch.min())}")
        if finite.empty:
            continue
        # norms span decades: one thin line per seed, the thick line their geometric
        # mean (a mean ± std band would dip below zero on a log axis)
        for _, seed_run in finite.groupby("seed"):
            ax.plot(seed_run.epoch, seed_run.h_L_norm_median, color=colors[lam], lw=0.6,
                    alpha=0.45)
        geo = finite.groupby("epoch").h_L_norm_median.apply(lambda v: np.exp(np.log(v).mean()))
        ax.plot(geo.index, geo.values, color=colors[lam], lw=1.8, label=style.lam_label(lam))
    if notes:
        ax.text(0.02, 0.02, "\n".join(notes), transform=ax.transAxes, fontsize=7,
                color="0.3", va="bottom")
    if ax.lines:
        ax.set_yscale("log")
    ax.set_xlabel(style.LABELS["epoch"])
    ax.set_ylabel(style.LABELS["h_L_norm_median"])
    if ax.lines:  # below the panel, as panel C's: inside, it covered the curves
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), frameon=False,
                  handlelength=1.2, labelspacing=0.2, fontsize=7)


def panel_cosines(ax, runs: pd.DataFrame, nulls: pd.DataFrame, penalty_lambda: float,
                  methods: dict) -> None:
    ax.set_title("B  deep cosine", loc="left")
    dfa = runs[runs.method == "dfa"]
    colors = style.lam_colors(dfa.lam.unique())
    labels, values, errors, bar_colors = [], [], [], []
    for lam, group in dfa.groupby("lam"):
        m, s = _mean_std(group.deep_cosine)
        labels.append(style.method_label(methods, "dfa") + " " + style.lam_label(lam))
        values.append(m), errors.append(s), bar_colors.append(colors[lam])
    fresh = select_runs(nulls[nulls.feedback == "fresh"], "dfa", penalty_lambda)
    if not fresh.empty:
        m, s = _mean_std(fresh.deep_cosine)
        labels.append("fresh-$B$ null " + style.lam_label(penalty_lambda))
        values.append(m), errors.append(s), bar_colors.append(style.NULL_COLOR)
    bp = runs[runs.method == "bp"]
    if not bp.empty:
        m, s = _mean_std(select_runs(bp, "bp", float(bp.lam.min())).deep_cosine)
        labels.append(style.method_label(methods, "bp") + " (reference)")
        values.append(m), errors.append(s), bar_colors.append(style.method_color(methods, "bp"))
    if not labels:
        return _missing(ax, "DFA or BP runs")
    x = np.arange(len(labels))
    ax.bar(x, np.nan_to_num(values), yerr=errors, capsize=3, color=bar_colors,
           edgecolor="black", linewidth=0.5, width=0.65, zorder=3)
    for xi, v in zip(x, values, strict=True):
        if np.isnan(v):  # no finite value: say so instead of drawing a zero bar
            ax.text(xi, 0.02, "n/a", ha="center", va="bottom", fontsize=7, color="0.3")
    ax.axhline(0, color="0.4", lw=0.6, ls="--", zorder=1)
    ax.set_xticks(x, labels, fontsize=7, rotation=40, ha="right", rotation_mode="anchor")
    ax.set_ylabel(style.LABELS["deep_cosine"])
    ax.set_ylim(min(-0.1, np.nanmin(np.array(values) - np.nan_to_num(errors)) - 0.05), 1.1)


def panel_accuracy(ax, runs: pd.DataFrame, penalty_lambda: float, methods: dict) -> None:
    ax.set_title("C  test accuracy", loc="left")
    lams = [0.0, penalty_lambda]
    shown = [m for m in ("bp", "dfa") if (runs.method == m).any()]
    if not shown:
        return _missing(ax, "BP or DFA runs")
    width = 0.36
    for j, lam in enumerate(lams):
        cells = [select_runs(runs, m, lam) for m in shown]
        stats = [_mean_std(c.test_acc) for c in cells]
        x = np.arange(len(shown)) + (j - 0.5) * width
        for xi, cell in zip(x, cells, strict=True):
            # a diverged run is a fact on the figure, never a bar that silently lacks it
            bad = cell[(cell.n_nonfinite > 0) | ~np.isfinite(cell.test_acc)] \
                if "n_nonfinite" in cell else cell[~np.isfinite(cell.test_acc)]
            if len(bad):
                ax.text(xi, 0.02, "diverged: seed " + ", ".join(map(str, sorted(bad.seed))),
                        rotation=90, ha="center", va="bottom", fontsize=7, color="#b2182b",
                        zorder=5)
        ax.bar(x, [s[0] for s in stats], width, yerr=[s[1] for s in stats], capsize=3,
               color=[style.method_color(methods, m) for m in shown], edgecolor="black",
               linewidth=0.5, alpha=1.0 if j == 0 else 0.55, hatch="///" if j else None,
               label=style.lam_label(lam), zorder=3)
    frozen = runs[runs.method == "frozen"]
    if not frozen.empty:
        m, _ = _mean_std(frozen.test_acc)
        ax.axhline(m, color=style.method_color(methods, "frozen"), lw=1.2, ls=":", zorder=4,
                   label=f"{style.method_label(methods, 'frozen')} ({m:.3f})")
    ax.set_xticks(np.arange(len(shown)), [style.method_label(methods, m) for m in shown])
    ax.set_ylabel(style.LABELS["test_acc"])
    finite = runs.test_acc[np.isfinite(runs.test_acc)]
    ax.set_ylim(0, min(1.0, finite.max() * 1.2) if len(finite) else 1.0)
    # below the axes: inside, it covered the bars and the frozen line whenever the
    # accuracies came near 1 (the digits data)
    from matplotlib.container import BarContainer
    from matplotlib.patches import Patch

    # the bars' λ first (as grey swatches: the colour is the method's), then the line
    handles, names = ax.get_legend_handles_labels()
    bars = [Patch(facecolor="0.6", edgecolor="black", linewidth=0.5, alpha=h[0].get_alpha(),
                  hatch=h[0].get_hatch()) for h in handles if isinstance(h, BarContainer)]
    lines = [h for h in handles if not isinstance(h, BarContainer)]
    names = [n for h, n in zip(handles, names, strict=True) if isinstance(h, BarContainer)] + \
        [n for h, n in zip(handles, names, strict=True) if not isinstance(h, BarContainer)]
    ax.legend(bars + lines, names, loc="upper center", bbox_to_anchor=(0.5, -0.12),
              frameon=False, fontsize=7, handlelength=1.6)


def plot(runs: pd.DataFrame, epochs: pd.DataFrame, nulls: pd.DataFrame,
         penalty_lambda: float, dataset: str = "", methods: dict | None = None):
    """``methods``: each rule's label and colour (name → {label, color}), as the
    workflow passes them from the rules registry."""
    import matplotlib.pyplot as plt

    style.apply()
    # drawn at the printed width (the paper includes it at \\linewidth): text ≥ 7 pt
    fig, axes = plt.subplots(1, 3, figsize=(style.TEXT_WIDTH_IN - 0.1, 2.7),
                             layout="constrained")
    panel_norms(axes[0], epochs)
    methods = methods or {}
    panel_cosines(axes[1], runs, nulls, penalty_lambda, methods)
    panel_accuracy(axes[2], runs, penalty_lambda, methods)
    n_seeds = runs.seed.nunique()
    shown = runs[runs.method.isin(["dfa", "bp"])]  # the panels' runs (not FA's longer ones)
    epochs_run = int(shown.final_epoch.max()) if len(shown) else 0
    fig.suptitle(f"DFA penalty rescue — {dataset}, {epochs_run} epochs, {n_seeds} seeds",
                 fontsize=9, x=0.01, ha="left")
    return fig


def make(runs_csv, epochs_csv, nulls_csv, outputs, penalty_lambda: float,
         dataset: str = "", methods: dict | None = None, expect: dict | None = None) -> None:
    """The figure from the summary tables, each checked first (``expect``: the runs the
    config asks for, ``runs`` and the DFA ``nulls``): nothing is drawn from a table
    that is damaged, edited or does not match the sweep."""
    expect = expect or {}
    runs = table_io.read(runs_csv, "runs", expect.get("runs"))
    epochs = table_io.read(epochs_csv, "epochs", expect.get("runs"))
    nulls = table_io.read(nulls_csv, "nulls", expect.get("nulls"))
    style.save(plot(runs, epochs, nulls, penalty_lambda, dataset, methods), outputs)


def from_job(job) -> None:
    """Step fig4_penalty_rescue (scripts/figure.py hands it the Snakemake job): the inputs,
    outputs and params its rule names."""
    make(job.input.runs, job.input.epochs, job.input.nulls, job.output,
         penalty_lambda=job.params.penalty_lambda, dataset=job.params.dataset,
         methods=job.params.methods, expect=job.params.expect)
