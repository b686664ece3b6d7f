"""The gap map: every paper number (rows) under every recipe (columns), the difference
from the paper in units of its tolerance. |gap| ≤ 1 is within tolerance; grey: not run
under that recipe. Every cell comes from a reproduction.csv the pipeline wrote."""

from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns

from credit_assign.figures import style


def plot(gaps: pd.DataFrame):
    import matplotlib.pyplot as plt

    style.apply()
    shown = gaps.clip(-5, 5)
    height = 1.2 + 0.24 * len(gaps)
    width = 3.2 + 0.75 * len(gaps.columns)
    fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
    annot = gaps.map(lambda v: "" if pd.isna(v) else f"{v:+.1f}")
    sns.heatmap(shown, ax=ax, cmap="RdBu_r", center=0, vmin=-5, vmax=5, annot=annot, fmt="",
                annot_kws={"fontsize": 6}, linewidths=0.4, linecolor="white",
                cbar_kws={"label": "(ours − paper) / tolerance, clipped at ±5"},
                mask=gaps.isna())
    ax.set_facecolor("0.85")
    within = (gaps.abs() <= 1).sum()
    counted = gaps.notna().sum()
    ax.set_xticks(np.arange(len(gaps.columns)) + 0.5,
                  [f"{c}\n{within[c]}/{counted[c]} within" for c in gaps.columns],
                  rotation=0, fontsize=6)
    ax.set_ylabel("")
    ax.tick_params(axis="y", labelsize=6)
    ax.set_title("Which recipe moves which paper number (|gap| ≤ 1: within tolerance)",
                 loc="left")
    return fig


def make(gaps: pd.DataFrame, outputs) -> None:
    if gaps.empty:
        raise ValueError("no paper numbers to map: is reproduction.reference set?")
    style.save(plot(gaps), outputs)
