"""Alignment probes: every rule's teaching signal against the true gradient."""

from __future__ import annotations

import pandas as pd
import seaborn as sns

from credit_assign.analysis import tables as table_io
from credit_assign.analysis.aggregate import select_runs
from credit_assign.figures import style
from credit_assign.reporting import labels

TEXT = labels.figure_text(__name__)

# what the probes measure beside the learning rules (credit_assign.science.alignment_probes)
PROBE_NAMES = {"np_sequential": "NP sequential", "np_simultaneous": "NP simultaneous",
               "random": "random direction"}


def plot(alignment: pd.DataFrame, ratios: pd.DataFrame, method: str, lam: float,
         methods: dict | None = None):
    """``methods``: each rule's label and colour (name → {label, color}), as the
    workflow passes them from the rules registry."""
    import matplotlib.pyplot as plt

    style.apply()
    methods = methods or {}
    names = {**{m: style.method_label(methods, m) for m in methods}, **PROBE_NAMES}
    # drawn at the paper's text width: A and B side by side, the ratios below (their
    # rotated rule names need the width), one legend for all three
    fig = plt.figure(figsize=(style.TEXT_WIDTH_IN - 0.1, 4.6), layout="constrained")
    top, bottom = fig.subfigures(2, 1, height_ratios=[1.15, 1])
    axes = [*top.subplots(1, 2), bottom.subplots(1, 1)]
    nets = select_runs(alignment, method, lam).copy()
    nets["rule"] = nets.rule.map(lambda r: names.get(r, r))
    order = [names[r] for r in names if names[r] in set(nets.rule)]
    order += sorted(set(nets.rule) - set(order))
    palette = dict(zip(order, style.PALETTE, strict=False))  # the palette is the longer list

    ax = axes[0]
    last = nets[nets.epoch == nets.epoch.max()]
    if last.empty:
        ax.text(0.5, 0.5, TEXT["no_probes"], ha="center", transform=ax.transAxes)
    else:
        sns.lineplot(data=last, x="layer", y="cosine", hue="rule", hue_order=order,
                     palette=palette, marker="o", errorbar="sd", ax=ax)
        ax.set_xticks(sorted(last.layer.unique()))
        handles, labels = ax.get_legend_handles_labels()
        ax.get_legend().remove()
        bottom.legend(handles, labels, frameon=False, loc="outside right center",
                      title="signal", title_fontsize=7)
    ax.set_title(TEXT["panel_a"].format(epoch=int(nets.epoch.max()) if len(nets) else "—"),
                 loc="left")
    ax.set_xlabel(TEXT["layer_axis"])
    ax.set_ylabel(style.LABELS["cosine"])
    ax.axhline(0, color="0.5", lw=0.6, ls="--")

    ax = axes[1]
    deep = nets[nets.layer >= 1].groupby(["seed", "epoch", "rule"], as_index=False).cosine.mean()
    if len(deep):
        sns.lineplot(data=deep, x="epoch", y="cosine", hue="rule", hue_order=order,
                     palette=palette, marker="o", errorbar="sd", ax=ax, legend=False)
    ax.set_title(TEXT["panel_b"], loc="left")
    ax.set_xlabel(style.LABELS["epoch"])
    ax.set_ylabel(style.LABELS["deep_cosine"])
    ax.axhline(0, color="0.5", lw=0.6, ls="--")

    ax = axes[2]
    r = select_runs(ratios, method, lam).copy()
    r["rule"] = r.rule.map(lambda x: names.get(x, x))
    r_order = [names[k] for k in names if names[k] in set(r.rule)]
    r_order += sorted(set(r.rule) - set(r_order))
    if len(r):
        sns.barplot(data=r, x="rule", y="ratio", order=r_order, errorbar="sd", ax=ax,
                    color=style.PALETTE[0], edgecolor="black", linewidth=0.5)
    ax.set_title(TEXT["panel_c"], loc="left")
    ax.set_xlabel("")
    ax.set_ylabel(TEXT["ratio_axis"])
    ax.tick_params(axis="x", rotation=20, labelsize=7)
    # unbounded below (a rule with large raw updates overshoots): symmetric-log axis
    ax.set_yscale("symlog", linthresh=1.0)
    ax.axhline(1, color="0.5", lw=0.6, ls=":")
    ax.axhline(0, color="0.5", lw=0.6, ls="--")
    fig.suptitle(TEXT["title"].format(method=style.method_label(methods, method),
                                      lam=style.lam_label(lam)),
                 fontsize=8, x=0.01, ha="left")
    return fig


def make(alignment_csv, ratios_csv, outputs, method: str = "dfa", lam: float = 0.0,
         methods: dict | None = None, expect: list | None = None) -> None:
    alignment = table_io.read(alignment_csv, "probe_alignment", expect)
    ratios = table_io.read(ratios_csv, "probe_ratios", expect)
    style.save(plot(alignment, ratios, method, lam, methods), outputs)


def from_job(job) -> None:
    """Step fig_alignment_probes (scripts/figure.py hands it the Snakemake job): the inputs,
    outputs and params its rule names."""
    make(job.input.alignment, job.input.ratios, job.output, **job.params.network,
         methods=job.params.methods, expect=job.params.expect)
