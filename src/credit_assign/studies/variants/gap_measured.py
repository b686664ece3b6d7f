"""The measured gap map, fig_variants_measured and fig_variants_measured_eps
(``plot_measured``): the recipes' saved models measured the other ways
(credit_assign.science.measurement, no retraining) as small multiples, one panel per
measurement M: rows are the numbers any measurement remeasures (‖h_L‖, the deep and
per-layer cosines, in the paper's order, shared by every panel), columns the recipes,
ordered and grouped as in every gap map (gap_map.column_order). A cell is the difference
from the paper in units of its tolerance, as in fig_variants (gap_map); a blank grey
cell is a number M does not measure; grey text, a number measured on the default's
models (the recipe did not rerun that method).

Drawn at the size the paper prints it (scale ≈ 1), so a font size here is its printed
size, on two rotated pages (ms.tex: sidewaysfigure; MEASURED_FIGURES: the epsilon
cosines on the second)."""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pandas as pd

from credit_assign.analysis import tables as table_io
from credit_assign.analysis.gap_table import gap_grid, grid_rows
from credit_assign.analysis.study import STATED, has_measured
from credit_assign.figures import style
from credit_assign.reporting import labels
from credit_assign.studies.variants.gap_map import (
    CBAR_LABEL,
    CLIP,
    MAX_PT,
    MIN_PT,
    PAGE_IN,
    SHORT_GROUPS,
    UNVERIFIED_KEY,
    _heatmap,
    _mark_groups,
    _marked,
    column_order,
    row_label,
)

MEASURED_PAGE_IN = PAGE_IN  # the measured pages, rotated too (four panels a page)
TEXT = labels.figure_text(__name__)


def measured_panels(gaps: pd.DataFrame, column: str = "gap") -> dict[str, pd.DataFrame]:
    """measurement → its grid: rows the numbers it remeasures in the paper's order,
    labelled (row_label); columns the recipes (NaN: not measured there)."""
    grid = gap_grid(gaps, column)
    keys = grid_rows(grid)
    out = {}
    for name in dict.fromkeys(k["measurement"] for k in keys):
        if name != "reported":
            at = [i for i, k in enumerate(keys) if k["measurement"] == name]
            panel = grid.iloc[at]
            panel.index = [row_label(keys[i]) for i in at]
            out[name] = panel
    return out


def _row_sets(panels: dict[str, pd.DataFrame], k: int, order: list[str]) -> list[list[str]]:
    """The rows each line of ``k`` panels shares: every number any of them remeasures,
    in the paper's order (a panel's blank cell: a number it does not measure)."""
    names = list(panels)
    return [sorted({r for n in names[i:i + k] for r in panels[n].index}, key=order.index)
            for i in range(0, len(names), k)]


# The page's room for one line of panels, in font sizes (em) and points: a cell row is
# 1.25 em; a panel title 1.6 em; the recipes' names above the first line (rotated)
# 0.6 em a character, and the brackets naming their groups over them 1.6 em; the colour
# bar and key (where no panel slot is left for them) 6 em;
# constrained layout's padding PAD_PT. A row label takes 0.55 em a character, a cell
# 2.7 em ("+1.5" and a margin), the space between panels GAP_PT.
PAD_PT, GAP_PT = 24.0, 8.0


def measured_layout(rows_per_line: list[int], n_panels: int, n_cols: int, label_chars: int,
                    name_chars: int, page=MEASURED_PAGE_IN) -> tuple[float, float]:
    """(font size, figure height) for lines of panels with ``rows_per_line`` rows each
    and ``n_cols`` recipe columns on the (rotated) page: the largest font (≤ MAX_PT)
    at which every row and every cell's text fit; the page's height unless even
    MIN_PT does not fit (then taller, and scaled down in print)."""
    k = math.ceil(n_panels / len(rows_per_line))
    spare = len(rows_per_line) * k > n_panels  # a free slot takes the colour bar
    ems = (1.25 * sum(rows_per_line) + 1.6 * len(rows_per_line) + 0.6 * name_chars + 1.6
           + (0 if spare else 6))
    row_pt = (page[1] * 72 - PAD_PT) / ems
    cell_pt = (page[0] * 72 - GAP_PT * k) / (0.55 * label_chars + 2.7 * k * n_cols)
    pt = min(MAX_PT, row_pt, cell_pt)
    if pt >= MIN_PT:
        return pt, page[1]
    return MIN_PT, (PAD_PT + ems * MIN_PT) / 72


def _choose_columns(panels, order) -> tuple[int, float, float, list[list[str]]]:
    """The number of panels side by side with the largest font (fewest on a tie)."""
    first = next(iter(panels.values()))
    label_chars = max(len(r) for p in panels.values() for r in p.index)
    name_chars = max(len(str(c)) for c in first.columns)
    best = None
    for k in range(1, len(panels) + 1):
        rows = _row_sets(panels, k, order)
        pt, height = measured_layout([len(r) for r in rows], len(panels), first.shape[1],
                                     label_chars, name_chars)
        if best is None or (pt, -height) > (best[1] + 1e-9, -best[2] + 1e-9):
            best = (k, pt, height, rows)
    return best


# the measured map's key: in the spare panel slot (wrapped) or, where no slot is left,
# KEY under the page's title and the columns' and rows' marks either side of the colour bar
KEY = TEXT["key"]
# the columns' marks: a line for each labelled kind, its short name and what it is
_KINDS = "\n".join(TEXT["kind"].format(name=SHORT_GROUPS[kind],
                                       what=labels.RECIPE_KINDS[kind]["figure_what"])
                   for kind in (STATED, "open", "departs"))
MARKS_KEY = (TEXT["columns"].format(kinds=_KINDS),
             UNVERIFIED_KEY.replace(", not", ",\nnot").replace(" (", "\n("))


# The measured gap map's two pages (one panel per measurement does not fit one page at a
# readable size): the other images and estimators, and the epsilon cosines.
MEASURED_FIGURES = {name: TEXT[name]
                    for name in ("fig_variants_measured", "fig_variants_measured_eps")}


def measured_figure_of(measurement: str) -> str:
    """Which page of the measured gap map a measurement's panel is drawn on."""
    return "fig_variants_measured_eps" if measurement.startswith("eps_") \
        else "fig_variants_measured"


def plot_measured(gaps: pd.DataFrame, figure: str = "fig_variants_measured",
                  study: dict | None = None):
    """One page of the measured gap map (``figure``, MEASURED_FIGURES): one panel per
    measurement drawn there (the numbers it remeasures under every recipe), small
    multiples side by side sharing their rows, every column one recipe, the columns in
    fig_variants' order (column_order; ``study``: config ``study``)."""
    import matplotlib.pyplot as plt
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize

    style.apply()
    every = measured_panels(gaps, "gap")
    if not every:
        raise ValueError("no measurement remeasured a number: nothing to map")
    values = {m: p.astype(float) for m, p in every.items() if measured_figure_of(m) == figure}
    if not values:
        fig, ax = plt.subplots(figsize=(MEASURED_PAGE_IN[0], 1.5))
        ax.set_axis_off()
        ax.text(0.01, 0.5, TEXT["none_measured"].format(title=MEASURED_FIGURES[figure]),
                fontsize=MAX_PT, va="center")
        return fig
    inherited = {m: p.eq(True) for m, p in measured_panels(gaps, "inherited").items()
                 if measured_figure_of(m) == figure}
    order = list(dict.fromkeys(row_label(r) for r in gaps.itertuples()))
    k, pt, height, rows = _choose_columns(values, order)
    fig, axes = plt.subplots(len(rows), k, figsize=(MEASURED_PAGE_IN[0], height),
                             layout="constrained", squeeze=False,
                             gridspec_kw={"height_ratios": [len(r) + 1.3 for r in rows]})
    columns = column_order(gaps, study)
    recipes = [c for c in columns.index if c in next(iter(values.values())).columns]
    groups = list(columns.group[recipes])
    for i, name in enumerate(values):
        ax, line = axes.flat[i], rows[i // k]
        _heatmap(ax, values[name].reindex(index=line, columns=recipes),
                 inherited[name].reindex(index=line, columns=recipes).eq(True),
                 pt, brackets=False, cbar=False)
        ax.set_xticks(np.arange(len(recipes)) + 0.5, recipes, rotation=90)
        ax.set_yticks(np.arange(len(line)) + 0.5, _marked(line, gaps), rotation=0)
        ax.tick_params(axis="both", labelsize=pt, length=0, pad=1)
        ax.tick_params(axis="x", top=False, labeltop=i < k, bottom=False, labelbottom=False)
        ax.tick_params(axis="y", labelleft=i % k == 0)
        pad = 2.0
        if i < k:  # the first line: the groups bracketed over the recipes' names
            names_pt = _top_labels_pt(ax)
            pad += _mark_groups(ax, groups, pt, SHORT_GROUPS, above=names_pt + 2)
        else:
            _mark_groups(ax, groups, pt)
        ax.set_title(f"[{name}]", loc="left", fontsize=pt, pad=pad)
        ax.title.set_position((0, 1))
    spare = list(axes.flat[len(values):])
    for ax in spare:
        ax.set_axis_off()
    bar = ScalarMappable(Normalize(-CLIP, CLIP), "RdBu_r")
    title = MEASURED_FIGURES[figure]
    if spare:
        cax = spare[0].inset_axes([0.08, 0.78, 0.84, 0.07])
        cbar = fig.colorbar(bar, cax=cax, orientation="horizontal")
        key = "\n".join(textwrap.fill(t, 50) for t in KEY.split("; "))
        marks = "\n".join(MARKS_KEY).replace(",\nnot", ", not")
        spare[0].text(0.08, 0.45, f"{key}\n{marks}", transform=spare[0].transAxes,
                      fontsize=pt, va="top", ha="left")
    else:
        cbar = fig.colorbar(bar, ax=axes, location="bottom", shrink=0.5, aspect=40)
        title += "\n" + KEY
        fig.text(0.01, 0.005, MARKS_KEY[0], fontsize=pt, va="bottom", ha="left")
        fig.text(0.99, 0.005, MARKS_KEY[1], fontsize=pt, va="bottom", ha="right",
                 ma="left")
    cbar.set_label(CBAR_LABEL, fontsize=pt)
    cbar.ax.tick_params(labelsize=pt)
    fig.suptitle(title, x=0.01, ha="left", fontsize=max(pt, MAX_PT), fontweight="bold")
    return fig


def _top_labels_pt(ax) -> float:
    """How far the x tick labels above ``ax`` reach over its top, in points."""
    renderer = ax.figure.canvas.get_renderer()
    ticks = ax.xaxis.get_major_ticks()
    heights = [t.label2.get_window_extent(renderer).height for t in ticks
               if t.label2.get_text()]
    pad = ticks[0].get_pad() if ticks else 0.0
    return max(heights, default=0.0) * 72 / ax.figure.dpi + pad


def make_measured(gaps_csv, outputs: dict, study: dict | None = None) -> None:
    """The measured gap map's pages from variants_gap.csv (read through its contract):
    ``outputs``: figure name (MEASURED_FIGURES) → its files (PDF, PNG, SVG); ``study``:
    config ``study`` (the ranking the columns are ordered by)."""
    gaps = table_io.read(gaps_csv, "variants_gap")
    if not has_measured(gaps):
        raise ValueError("the gap table holds no measured number: did measurements run "
                         "(config measurements.run)?")
    for figure, files in outputs.items():
        style.save(plot_measured(gaps, figure, study), files)
