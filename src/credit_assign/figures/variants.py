"""The gap map: every paper number (rows) under every recipe (columns), the difference
from the paper in units of its tolerance. |gap| ≤ 1 is within tolerance; grey: not run
under that recipe. The first row set is each recipe's numbers as its runs report them;
each further row set, labelled ``[M]``, is the recipe's models measured the way M (no
retraining; credit_assign.measure) — only the numbers M remeasures. Every cell comes from
a reproduction.csv or measurements.csv the pipeline wrote."""

from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns

from credit_assign.figures import style
from credit_assign.reproduction import gap_grid


def _wide(gaps: pd.DataFrame, column: str) -> pd.DataFrame:
    """Rows labelled "run: metric" ("[M] run: metric" in measurement M's row set)."""
    grid = gap_grid(gaps, column)
    grid.index = [f"{r}: {m}" if s == "reported" else f"[{s}] {r}: {m}"
                  for s, r, m in grid.index]
    return grid


# The paper prints the gap map on a rotated full page (ms.tex: sidewaysfigure, width
# \textheight): drawn at that size, the figure is printed at scale ≈ 1, so a font size
# here is its printed size. Text below MIN_PT is unreadable in print.
PAGE_IN = (9.4, 5.6)  # A4, 25 mm margins, rotated: \textheight × 0.9 \textwidth
MIN_PT = 6.0


def font_pt(n_rows: int, n_cols: int) -> float:
    """The cell and label font size: 7 pt where the rows leave room, else what fits a
    row (never below MIN_PT: more rows than that makes the figure taller than a page)."""
    row_pt = PAGE_IN[1] * 72 * 0.8 / max(n_rows, 1)
    col_pt = (PAGE_IN[0] - 2.6) * 72 / max(n_cols, 1) / 5  # about five glyphs per cell
    return max(MIN_PT, min(7.0, 0.8 * row_pt, col_pt))


def plot(gaps: pd.DataFrame):
    """``gaps``: the tidy gap table (credit_assign.reproduction.gap_table)."""
    import matplotlib.pyplot as plt

    style.apply()
    values = _wide(gaps, "gap").astype(float)
    inherited = _wide(gaps, "inherited").eq(True)  # NaN (no such column): not inherited
    pt = font_pt(len(values), len(values.columns))
    # a page when the rows fit one, taller (scaled down in print) only when they do not
    height = max(PAGE_IN[1], len(values) * pt * 1.25 / 72 / 0.8)
    fig, ax = plt.subplots(figsize=(PAGE_IN[0], height), layout="constrained")
    annot = pd.DataFrame(
        [["" if pd.isna(v) else (f"({v:+.1f})" if i else f"{v:+.1f}")
          for v, i in zip(vs, inh, strict=True)]
         for vs, inh in zip(values.values, inherited.values, strict=True)],
        index=values.index, columns=values.columns)
    sns.heatmap(values.clip(-5, 5), ax=ax, cmap="RdBu_r", center=0, vmin=-5, vmax=5,
                annot=annot, fmt="", annot_kws={"fontsize": pt}, linewidths=0.4,
                linecolor="white", mask=values.isna() | inherited,
                cbar_kws={"label": "(ours − paper) / tolerance\n(clipped at ±5)",
                          "shrink": 0.6})
    ax.collections[0].colorbar.ax.yaxis.label.set_fontsize(pt)
    ax.collections[0].colorbar.ax.tick_params(labelsize=pt)
    ax.grid(False)
    for (i, j) in zip(*np.nonzero(inherited.values & values.notna().values), strict=True):
        ax.text(j + 0.5, i + 0.5, annot.iat[i, j], ha="center", va="center",
                fontsize=pt, color="0.35")
    ax.set_facecolor("0.9")
    reported = values[[not label.startswith("[") for label in values.index]]
    within = (reported.abs() <= 1).sum()  # the recipe's own numbers (first row set)
    counted = reported.notna().sum()
    names = list(values.columns)
    ax.set_xticks(np.arange(len(values.columns)) + 0.5,
                  [f"{n}\n{within[c]}/{counted[c]} within" for n, c in
                   zip(names, values.columns, strict=True)], rotation=30, ha="right", fontsize=pt)
    ax.set_xlabel("")
    ax.set_ylabel("")
    ax.tick_params(axis="y", labelsize=pt)
    ax.set_title("Which recipe moves which paper number\n|gap| ≤ 1: within tolerance; "
                 "(grey): inherited\n[M] rows: the recipe's models measured the way M", loc="left",
                 fontsize=max(pt, 7.0))
    return fig


def printed_font_sizes(fig, printed_width_in: float = PAGE_IN[0]) -> list[float]:
    """Every text's size in points as printed at ``printed_width_in`` (the paper's
    \textheight on the rotated page): what the readability check reads."""
    scale = printed_width_in / fig.get_figwidth()
    texts = [t for t in fig.findobj(lambda a: hasattr(a, "get_fontsize")
                                    and hasattr(a, "get_text")) if t.get_text().strip()]
    return [t.get_fontsize() * scale for t in texts]


def make(gaps: pd.DataFrame, outputs) -> None:
    if gaps.empty:
        raise ValueError("no paper numbers to map: is reproduction.reference set?")
    style.save(plot(gaps), outputs)
