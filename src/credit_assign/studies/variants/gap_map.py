"""The gap map, fig_variants (``plot``), and what every gap map shares. A cell is the
difference from the paper in units of its tolerance (|gap| ≤ 1: within tolerance) and
comes from a reproduction.csv or measurements.csv the pipeline wrote.

fig_variants: every paper number (rows) under every recipe (columns), as each recipe's
runs report it. Grey: not run under that recipe; grey text in parentheses: inherited
(the default's number, for a method the variant leaves alone). Under each recipe, its
count within tolerance on the verified numbers and on every number (ranking's
``within_verified``/``within_all``). It is drawn at the size the paper prints it (scale
≈ 1), so a font size here is its printed size, on a rotated page (ms.tex:
sidewaysfigure).

Shared with the paper's figure of the key recipes (gap_key) and the measured maps
(gap_measured): the cells (``_heatmap``), the row labels and the columns' order and
groups. In every map the columns are grouped by their kind and ranked within it, as
credit_assign.analysis.study.ranking orders them (``column_order``): the stated
recipe, then the variants that fill a detail the paper leaves open, then those that
depart from what it states, each group best first, under a bracket naming it; a
measured column keeps its recipe's place. A row whose paper number is not verified (the
reference's ``verified: false``: not a measurement) ends in " *"."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import seaborn as sns

from credit_assign.analysis.gap_table import gap_grid, grid_rows
from credit_assign.analysis.study import (
    MEASUREMENT,
    STATED,
    ranking,
    ranking_settings,
    split_recipe,
)
from credit_assign.figures import style
from credit_assign.reporting import labels
from credit_assign.reporting.render import flag, metric_label, run_label

# The page the gap maps are printed on, as ms.tex includes them (A4, 25 mm margins:
# \textwidth 6.30 in, \textheight 9.72 in), leaving room for the caption:
PAGE_IN = (9.4, 5.6)  # fig_variants, rotated: \textheight × 0.9 \textwidth
MIN_PT = 6.0  # text below this is unreadable in print
MAX_PT = 7.0
CLIP = 5.0
TEXT = labels.figure_text(__name__)  # the words every gap map shares
CBAR_LABEL = TEXT["colorbar"].format(clip=CLIP)


# a column group's name above its columns: in full (fig_variants), or short
# (fig_variants_measured, whose columns are narrow; the key says what the kinds are)
GROUPS = labels.names(labels.RECIPE_KINDS, "figure")
SHORT_GROUPS = labels.names(labels.RECIPE_KINDS, "figure_short")
UNVERIFIED = " *"
UNVERIFIED_KEY = TEXT["unverified"]


def column_order(gaps: pd.DataFrame, study: dict | None = None) -> pd.DataFrame:
    """The gap maps' columns in the project's one ordering, ranking(gaps, study): the
    stated recipe, the ``open`` variants, the ``departs`` ones, each best first. One row
    per recipe (index: its name, as gap_grid's columns name it): ``group`` (its kind,
    without ``+measurement``), ``rank`` within it, and ranking's counts. A measured
    column (``R/M``, kind ``<kind of R>+measurement``) keeps its recipe R's place, so the
    measured maps group their columns by the same kinds; a recipe only measured (no
    column of its own) follows, by its measured columns' places."""
    rank = ranking(gaps, study)
    rank["recipe"] = [split_recipe(r)[0] for r in rank.recipe]
    out = rank.drop_duplicates("recipe").set_index("recipe")  # own columns come first
    out["group"] = out.kind.str.removesuffix(f"+{MEASUREMENT}")
    return out


def _group_spans(groups: list[str]) -> list[tuple[str, int, int]]:
    """(group, first column, column after its last) for each run of one group."""
    spans = []
    for i, g in enumerate(groups):
        if spans and spans[-1][0] == g:
            spans[-1] = (g, spans[-1][1], i + 1)
        else:
            spans.append((g, i, i + 1))
    return spans


def _mark_groups(ax, groups: list[str], pt: float, names: dict | None = None,
                 above: float = 2.0, column_pt: float = math.inf) -> float:
    """A dark line between neighbouring column groups and, with ``names``, a bracket
    ``above`` points over the axes' top over each group, its name on it (SHORT_GROUPS'
    where the name is wider than the group's ``column_pt``-wide columns). Returns how
    far the brackets reach above the axes, in points (0 without ``names``)."""
    from matplotlib.markers import TICKDOWN
    from matplotlib.transforms import ScaledTranslation

    spans = _group_spans(groups)
    for _, _, end in spans[:-1]:
        ax.axvline(end, color="0.1", linewidth=1.2)
    if names is None:
        return 0.0
    fig = ax.figure
    half = 0.6 * pt  # half a line of text: the bracket runs through its middle
    at = ax.get_xaxis_transform() + ScaledTranslation(0, (above + half) / 72,
                                                      fig.dpi_scale_trans)
    for group, a, b in spans:
        ax.plot([a + 0.1, b - 0.1], [1, 1], color="0.1", linewidth=0.8, marker=TICKDOWN,
                markersize=half, markeredgewidth=0.8, clip_on=False, transform=at)
        name = names.get(group, group)
        if 0.55 * pt * (len(name) + 2) > (b - a) * column_pt:
            name = SHORT_GROUPS.get(group, group)
        ax.annotate(name, ((a + b) / 2, 1), xycoords=at, ha="center", va="center",
                    fontsize=pt, annotation_clip=False,
                    bbox={"boxstyle": "square,pad=0.25", "fc": fig.get_facecolor(),
                          "ec": "none"})
    return above + 2 * half


def row_label(key) -> str:
    """A paper number's row label on every gap map, "run: metric" (render.run_label and
    metric_label); ``key``: a row of the gap table, or of grid_rows."""
    return f"{run_label(key)}: {metric_label(key)}"


def _marked(labels, gaps: pd.DataFrame) -> list[str]:
    """Row labels (row_label), an unverified paper number's ending in " *"."""
    if "verified" not in gaps:
        return list(labels)
    unverified = {row_label(r) for r in gaps.itertuples() if not flag(r.verified)}
    return [f"{x}{UNVERIFIED}" if x in unverified else x for x in labels]


def _reported(gaps: pd.DataFrame) -> pd.DataFrame:
    """The rows of the recipes' own numbers (no measurement columns)."""
    if "measurement" not in gaps:
        return gaps
    return gaps[gaps.measurement == "reported"]


def _wide(gaps: pd.DataFrame, column: str) -> pd.DataFrame:
    """The reported row set, rows labelled (row_label)."""
    grid = gap_grid(_reported(gaps), column)
    grid.index = [row_label(key) for key in grid_rows(grid)]
    return grid


def font_pt(n_rows: int, n_cols: int) -> float:
    """fig_variants' cell and label font size: 7 pt where the rows leave room, else what
    fits a row (never below MIN_PT: more rows than that makes the figure taller than a
    page)."""
    row_pt = PAGE_IN[1] * 72 * 0.8 / max(n_rows, 1)
    col_pt = (PAGE_IN[0] - 2.6) * 72 / max(n_cols, 1) / 5  # about five glyphs per cell
    return max(MIN_PT, min(MAX_PT, 0.8 * row_pt, col_pt))


def _cell(v: float, inherited: bool = False, brackets: bool = True) -> str:
    if pd.isna(v):
        return ""
    text = f"{v:+.1f}" if abs(v) < 9.95 else f"{v:+.0f}"
    return f"({text})" if inherited and brackets else text


def _heatmap(ax, values: pd.DataFrame, inherited: pd.DataFrame, pt: float,
             brackets: bool = True, cbar: bool = True):
    """One gap grid on ``ax``: measured cells coloured and annotated, inherited ones
    annotated in grey on grey, missing ones grey."""
    annot = pd.DataFrame([[_cell(v, i, brackets) for v, i in zip(vs, inh, strict=True)]
                          for vs, inh in zip(values.values, inherited.values, strict=True)],
                         index=values.index, columns=values.columns)
    mask = values.isna() | inherited
    kw = {"cbar_kws": {"label": CBAR_LABEL, "shrink": 0.6}} if cbar else {}
    sns.heatmap(values.clip(-CLIP, CLIP), ax=ax, cmap="RdBu_r", center=0, vmin=-CLIP,
                vmax=CLIP, annot=annot, fmt="", annot_kws={"fontsize": pt},
                linewidths=0.4, linecolor="white", mask=mask, cbar=cbar, **kw)
    ax.grid(False)
    for (i, j) in zip(*np.nonzero(inherited.values & values.notna().values), strict=True):
        ax.text(j + 0.5, i + 0.5, annot.iat[i, j], ha="center", va="center",
                fontsize=pt, color="0.35")
    ax.set_facecolor("0.9")
    ax.set_xlabel("")
    ax.set_ylabel("")
    return ax


def _count_key(study: dict | None) -> str:
    """What the two counts under each column are, and which one the ranking counts."""
    ranked = "verified" if ranking_settings(study)["exclude_unverified"] else "all"
    return TEXT["counts"].format(ranked=ranked)


def _column_label(name: str, row) -> str:
    """A column's name (its rank in its group before it) and its two counts."""
    head = name if row.group == STATED else f"{row['rank']}. {name}"
    return (f"{head}\n{row.within_verified}/{row.compared_verified} · "
            f"{row.within_all}/{row.compared_all}")


def plot(gaps: pd.DataFrame, study: dict | None = None):
    """fig_variants. ``gaps``: the tidy gap table (credit_assign.analysis.gap_table.gap_table);
    only its recipes' own numbers are drawn (the measurements: ``plot_measured``);
    ``study``: config ``study`` (the ranking the columns are ordered by)."""
    import matplotlib.pyplot as plt

    style.apply()
    columns = column_order(gaps, study)
    values = _wide(gaps, "gap").astype(float)
    order = [c for c in columns.index if c in values.columns]
    values = values[order]
    inherited = _wide(gaps, "inherited").eq(True)[order]  # NaN (no column): not inherited
    pt = font_pt(len(values), len(values.columns))
    # a page when the rows fit one, taller (scaled down in print) only when they do not
    height = max(PAGE_IN[1], len(values) * pt * 1.25 / 72 / 0.8)
    fig, ax = plt.subplots(figsize=(PAGE_IN[0], height), layout="constrained")
    _heatmap(ax, values, inherited, pt)
    ax.collections[0].colorbar.ax.yaxis.label.set_fontsize(pt)
    ax.collections[0].colorbar.ax.tick_params(labelsize=pt)
    ax.set_xticks(np.arange(len(order)) + 0.5,
                  [_column_label(c, columns.loc[c]) for c in order],
                  rotation=30, ha="right", fontsize=pt)
    ax.set_yticks(np.arange(len(values)) + 0.5, _marked(values.index, gaps), rotation=0)
    ax.tick_params(axis="y", labelsize=pt)
    pad = _mark_groups(ax, list(columns.group[order]), pt, GROUPS,
                       column_pt=(PAGE_IN[0] - 2.6) * 72 / len(order))
    ax.set_title(TEXT["title"].format(unverified=UNVERIFIED_KEY, counts=_count_key(study)),
                 loc="left", fontsize=max(pt, MAX_PT), pad=pad + 3)
    return fig


def make(gaps: pd.DataFrame, outputs, study: dict | None = None) -> None:
    """fig_variants to ``outputs`` (its PDF, PNG and SVG); ``study``: config ``study``
    (the ranking its columns are ordered by)."""
    if gaps.empty:
        raise ValueError("no paper numbers to map: is reproduction.reference set?")
    style.save(plot(gaps, study), outputs)
