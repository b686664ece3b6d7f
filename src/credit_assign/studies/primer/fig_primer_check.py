"""The primer check: relative error of the EP estimate against the BP gradient vs β."""

from __future__ import annotations

import json

import numpy as np

from credit_assign.figures import style
from credit_assign.infra.results import validate_result
from credit_assign.reporting import labels

TEXT = labels.figure_text(__name__)

ESTIMATORS = {
    "one_sided": ("one-sided", "o", "-"),
    "symmetric": (r"symmetric $\pm\beta$", "s", "--"),
}


def plot(result: dict):
    import matplotlib.pyplot as plt

    style.apply()
    models = result["models"]
    # drawn at the paper's text width: the panels share it
    fig, axes = plt.subplots(1, len(models), figsize=(style.TEXT_WIDTH_IN - 0.1, 2.5),
                             layout="constrained", sharey=True)
    colors = {"one_sided": style.PALETTE[3], "symmetric": style.PALETTE[0]}
    for ax, (kind, res) in zip(np.atleast_1d(axes), models.items(), strict=True):
        beta = np.asarray(res["beta"])
        for key, (label, marker, ls) in ESTIMATORS.items():
            err = np.asarray(res["groups"]["all"][key]["rel_error"], float)
            slope = res["slopes"]["all"][key]
            ax.loglog(beta, err, marker=marker, ls=ls, color=colors[key], ms=4,
                      label=f"{label} (slope {slope:.2f})")
            # the ideal slope through the last point, for the eye
            order = 1 if key == "one_sided" else 2
            ax.loglog(beta, err[-1] * (beta / beta[-1]) ** order, color="0.6", lw=0.8, ls=":")
        ax.set_title(f"{kind} MLP", loc="left")
        ax.set_xlabel(r"nudge strength $\beta$")
        ax.legend(frameon=False, loc="lower right")
    np.atleast_1d(axes)[0].set_ylabel(TEXT["error_axis"])
    fig.suptitle(TEXT["title"], fontsize=8, x=0.01, ha="left")
    return fig


def make(result_path, outputs) -> None:
    with open(result_path) as fh:
        result = json.load(fh)
    validate_result(result, "primer_check", source=str(result_path))
    style.save(plot(result), outputs)


def from_job(job) -> None:
    """Step fig_primer_check (scripts/figure.py hands it the Snakemake job): the inputs,
    outputs and params its rule names."""
    make(job.input[0], job.output)
