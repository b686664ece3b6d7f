"""The precision figure (paper/figures/fig_ep_estimator; issue #55, exploratory): block
0's 1 − cos between EP's estimate and the float64 implicit gradient against the nudge r,
log-log, per precision and stencil, each seed its own line and marker (no mean across
seeds: one seed's float64 error can be a remainder and another's none, and a mean would
draw a level neither has; an error below 1e-12 is drawn at 1e-12); beside it, how far
the nudge moves block 0's state in units of float32's resolution of it. Drawn at the
paper's text width from the study's table."""

from __future__ import annotations

import numpy as np
import pandas as pd

from credit_assign.figures import style
from credit_assign.studies.ep_estimator.table import per_seed

MARKERS = "osD^vP"  # a seed's marker, in the order of its seeds
FLOOR = 1e-12  # an error below it is drawn on it (float64's rounding)
CELLS = [("float32", "central", "#d55e00", "-"), ("float64", "central", "#0072b2", "-"),
         ("float32", "richardson", "#d55e00", "--"),
         ("float64", "richardson", "#0072b2", "--")]


def draw(frame: pd.DataFrame):
    import matplotlib.pyplot as plt
    from matplotlib import ticker

    style.apply()
    fig, (a, b) = plt.subplots(1, 2, figsize=(style.TEXT_WIDTH_IN, 2.6),
                               layout="constrained", width_ratios=(3, 2))
    seeds = per_seed(frame)
    marker = {s: MARKERS[i % len(MARKERS)] for i, s in enumerate(sorted(seeds.seed.unique()))}
    for precision, stencil, color, ls in CELLS:
        d = seeds[(seeds.precision == precision) & (seeds.stencil == stencil)]
        for seed, s in d.groupby("seed"):
            a.plot(s.r, s.one_minus_cos.clip(lower=FLOOR), ls, color=color, lw=1.0,
                   marker=marker[seed], ms=2.5, mfc="none" if stencil != "central" else color)
        if not d.empty:
            a.plot([], [], ls, color=color, lw=1.0, label=f"{precision}, {stencil}")
    a.axhline(FLOOR, color="0.5", ls=":", lw=0.6)
    a.set(xscale="log", yscale="log", xlabel="nudge r",
          ylabel="1 − cos to the float64 gradient")
    # 1e-12 rather than a superscript: twelve decades, two-digit exponents set at 7 pt
    a.yaxis.set_major_locator(ticker.LogLocator(numticks=7))
    a.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"1e{round(np.log10(v))}"))
    a.set_title("A  block 0's estimate", loc="left")
    a.legend(frameon=False, fontsize=7)  # the seeds' markers: panel B's legend
    d = seeds[(seeds.precision == "float32") & (seeds.stencil == "central")]
    for seed, s in d.groupby("seed"):
        b.plot(s.r, s.nudge_ulps_block0, "-", marker=marker[seed], lw=0.8, ms=2.5,
               label=f"seed {seed}")
    b.axhline(1.0, color="0.4", ls=":", lw=0.8)
    b.set(xscale="log", yscale="log", xlabel="nudge r",
          ylabel="block 0's nudge (float32 units)")
    b.set_title("B  the nudge against rounding", loc="left")
    b.legend(frameon=False, fontsize=7, ncol=2)
    return fig


def make(table_csv: str, outputs) -> None:
    style.save(draw(pd.read_csv(table_csv)), outputs)


def from_job(job) -> None:
    """Step fig_ep_estimator (scripts/figure.py hands it the Snakemake job): the inputs,
    outputs and params its rule names."""
    make(job.input[0], job.output)
