"""The claims figure (results/<dataset>/default/claims/findings.json → paper/figures/fig_claims):
one row per judged effect, grouped by unit — the mean over the verdict seeds with its
bootstrap interval (black), the same on the study's seeds (grey), each seed (dots), the
threshold (dashed) or the no-effect band (shaded), the paper's own effect (red
diamond), and the verdict at the right. Drawn at the paper's text width."""

from __future__ import annotations

import json

import numpy as np

from credit_assign import effects
from credit_assign.figures import style
from credit_assign.reporting import labels

TEXT = labels.figure_text(__name__)
# the panels, by the unit of the effect (each kind names its panel: credit_assign.effects;
# the axis: TEXT["axis_<panel>"])
GROUPS = tuple((panel, tuple(k.name for k in effects.kinds().values() if k.panel == panel),
                TEXT[f"axis_{panel}"]) for panel in effects.PANELS)
VERDICT_COLORS = {"holds": "#1b7837", "contradicted": "#b2182b", "undecided": "0.35"}
# a seed's tick: used (grey), a diverged run (red), an unsettled EP estimate (orange)
STATUS_COLORS = {"ok": "0.55", "diverged": "#b2182b", "unsettled": "#e08214"}
# why undecided, as the label beside the verdict says it
REASON_LABELS = {"diverged": "diverged", "too_few": "n < {min_seeds}",
                 "straddles": "straddles"}
ROW_IN = 0.2  # inches per effect row


def _rows(record: dict) -> dict[str, list[dict]]:
    by_id = {c["id"]: c for c in record["claims"]}
    study = {(v["claim"], v["part"]): v for v in record["verdicts"]
             if v["seed_set"] == "study" and not v["verdict_set"]}
    out: dict[str, list[dict]] = {name: [] for name, _, _ in GROUPS}
    for v in record["verdicts"]:
        if not v["verdict_set"]:
            continue
        claim = by_id[v["claim"]]
        group = next(n for n, kinds, _ in GROUPS if claim["effect"]["kind"] in kinds)
        seeds = [r for r in record["by_seed"] if (r["claim"], r["part"], r["seed_set"])
                 == (v["claim"], v["part"], v["seed_set"])]
        out[group].append({"v": v, "study": study.get((v["claim"], v["part"])),
                           "seeds": seeds, "claim": claim,
                           "label": v["claim"].replace("_", " ")
                           + (f" ({v['part']})" if v["part"] else "")})
    return {k: rows for k, rows in out.items() if rows}


def _interval(ax, y, v, color, size):
    if v is None or v["mean"] is None:
        return
    if v["low"] is not None:
        ax.plot([v["low"], v["high"]], [y, y], color=color, lw=1.4, solid_capstyle="butt")
    ax.plot([v["mean"]], [y], "o", color=color, ms=size, zorder=3)


def draw(record: dict):
    import matplotlib.pyplot as plt

    style.apply()
    groups = _rows(record)
    heights = [len(rows) + 1.2 for rows in groups.values()]
    # the labels left and the verdicts right lie outside the axes: the whole drawing,
    # with them, is the text width
    fig, axes = plt.subplots(len(groups), 1, figsize=(style.TEXT_WIDTH_IN - 0.6,
                                                      ROW_IN * sum(heights) + 0.5),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    titles = {name: title for name, _, title in GROUPS}
    for ax, (name, rows) in zip(axes[:, 0], groups.items(), strict=True):
        for i, row in enumerate(rows):
            y = -i
            v, c = row["v"], row["claim"]["claim"]
            if c["side"] == "within":
                ax.fill_betweenx([y - 0.4, y + 0.4], -c["margin"], c["margin"],
                                 color="0.85", lw=0)
            else:
                ax.plot([c["threshold"]] * 2, [y - 0.4, y + 0.4], "--", color="0.3", lw=0.8)
            seeds = [r for r in row["seeds"] if r["effect"] is not None]
            ax.scatter([r["effect"] for r in seeds], np.full(len(seeds), y + 0.22), s=6,
                       c=[STATUS_COLORS[r["status"]] for r in seeds], marker="|", lw=0.8,
                       zorder=2)
            _interval(ax, y, v, "black", 3.5)
            _interval(ax, y - 0.28, row["study"], "0.6", 2.5)
            if v["paper"] is not None:
                ax.plot([v["paper"]], [y], "D", color=VERDICT_COLORS["contradicted"], ms=3.5,
                        mfc="none", mew=0.9, zorder=4)
            label = v["verdict"] + (": " + REASON_LABELS[v["reason"]].format(
                min_seeds=record["decision"]["min_seeds"]) if v["reason"] else "")
            ax.text(1.01, y, label, transform=ax.get_yaxis_transform(), va="center",
                    fontsize=7, color=VERDICT_COLORS[v["verdict"]], fontweight="bold")
        ax.set_yticks(-np.arange(len(rows)), [r["label"] for r in rows], fontsize=7)
        ax.set_ylim(-len(rows) + 0.4, 0.6)
        ax.set_xlabel(titles[name], fontsize=7, labelpad=1)
        ax.tick_params(axis="x", labelsize=7)
        ax.grid(axis="y", visible=False)
    level = round(100 * record["decision"]["confidence"])
    axes[0, 0].set_title(TEXT["key"].format(level=level), fontsize=7, loc="left",
                         fontweight="normal")
    fig.tight_layout(h_pad=0.6)
    return fig


def make(findings_path, outputs) -> None:
    with open(findings_path, encoding="utf-8") as fh:
        record = json.load(fh)
    style.save(draw(record), outputs)


def from_job(job) -> None:
    """Step fig_claims (scripts/figure.py hands it the Snakemake job): the inputs,
    outputs and params its rule names."""
    make(job.input.findings, job.output)
