"""The gap map, in two figures; every cell is the difference from the paper in units of
its tolerance (|gap| ≤ 1: within tolerance) and comes from a reproduction.csv or
measurements.csv the pipeline wrote.

* ``fig_variants`` (``plot``): every paper number (rows) under every recipe (columns), as
  each recipe's runs report it. Grey: not run under that recipe; grey text in
  parentheses: inherited (the default's number, for a method the variant leaves alone).
  Under each recipe, its count within tolerance on the verified numbers and on every
  number (ranking's ``within_verified``/``within_all``).
* ``fig_variants_measured`` (``plot_measured``): the recipes' saved models measured the
  other ways (credit_assign.science.measurement, no retraining) as small multiples, one panel per
  measurement M: rows are the numbers any measurement remeasures (‖h_L‖, the deep and
  per-layer cosines, in the paper's order, shared by every panel), columns the recipes.
  A blank grey cell is a number M does not measure; grey text, a number measured on the
  default's models (the recipe did not rerun that method).

Both are drawn at the size the paper prints them (scale ≈ 1), so a font size here is its
printed size: every one on a rotated page (ms.tex: sidewaysfigure), the measured map on
two (``fig_variants_measured``, ``fig_variants_measured_eps``: the epsilon cosines).

In every map the columns are grouped by their kind and ranked within it, as
credit_assign.reporting.study.ranking orders them (``column_order``): the stated
recipe, then the variants that fill a detail the paper leaves open, then those that
depart from what it states, each group best first, under a bracket naming it; a
measured column keeps its recipe's place. A row whose paper number is not verified (the
reference's ``verified: false``: not a measurement) ends in " *"."""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pandas as pd
import seaborn as sns

from credit_assign.reporting import tables as table_io
from credit_assign.reporting.figures import style
from credit_assign.reporting.gap_map import gap_grid
from credit_assign.reporting.render import flag
from credit_assign.reporting.study import (
    MEASUREMENT,
    STATED,
    has_measured,
    ranking,
    ranking_settings,
    split_recipe,
)

# The page each figure is printed on, as ms.tex includes it (A4, 25 mm margins: \textwidth
# 6.30 in, \textheight 9.72 in), leaving room for the caption:
PAGE_IN = (9.4, 5.6)  # fig_variants, rotated: \textheight × 0.9 \textwidth
MEASURED_PAGE_IN = PAGE_IN  # the measured pages, rotated too (four panels a page)
MIN_PT = 6.0  # text below this is unreadable in print
MAX_PT = 7.0
CLIP = 5.0
CBAR_LABEL = f"(ours − paper) / tolerance\n(clipped at ±{CLIP:g})"


# a column group's name above its columns: in full (fig_variants), or short
# (fig_variants_measured, whose columns are narrow; the key says what the kinds are)
GROUPS = {STATED: "the stated recipe",
          "open": "fills a detail the paper leaves open (best first)",
          "departs": "departs from what the paper states (best first)",
          "unlabelled": "unlabelled variants (no kind given)"}
SHORT_GROUPS = {STATED: "stated", "open": "open", "departs": "departs",
                "unlabelled": "unlabelled"}
UNVERIFIED = " *"
UNVERIFIED_KEY = "*: unverified target, not a measurement (a placeholder in the authors' script)"


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


def _marked(labels, gaps: pd.DataFrame) -> list[str]:
    """Row labels ("run: metric"), an unverified paper number's ending in " *"."""
    if "verified" not in gaps:
        return list(labels)
    unverified = {f"{r}: {m}" for r, m, v in zip(gaps.run, gaps.metric, gaps.verified,
                                                  strict=True) if not flag(v)}
    return [f"{x}{UNVERIFIED}" if x in unverified else x for x in labels]


def _reported(gaps: pd.DataFrame) -> pd.DataFrame:
    """The rows of the recipes' own numbers (no measurement columns)."""
    if "measurement" not in gaps:
        return gaps
    return gaps[gaps.measurement == "reported"]


def _wide(gaps: pd.DataFrame, column: str) -> pd.DataFrame:
    """The reported row set, rows labelled "run: metric"."""
    grid = gap_grid(_reported(gaps), column)
    grid.index = [f"{r}: {m}" for _, r, m in grid.index]
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
    return (f"under each recipe: within tolerance / compared, verified numbers · all "
            f"numbers (the ranking counts {ranked})")


def _column_label(name: str, row) -> str:
    """A column's name (its rank in its group before it) and its two counts."""
    head = name if row.group == STATED else f"{row['rank']}. {name}"
    return (f"{head}\n{row.within_verified}/{row.compared_verified} · "
            f"{row.within_all}/{row.compared_all}")


def plot(gaps: pd.DataFrame, study: dict | None = None):
    """fig_variants. ``gaps``: the tidy gap table (credit_assign.reporting.gap_map.gap_table);
    only its recipes' own numbers are drawn (the measurements: ``plot_measured``);
    ``study``: config ``study`` (the ranking rule the columns are ordered by)."""
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
    ax.set_title("Which recipe moves which paper number\n|gap| ≤ 1: within tolerance; "
                 f"(grey): inherited; {UNVERIFIED_KEY}\n{_count_key(study)}",
                 loc="left", fontsize=max(pt, MAX_PT), pad=pad + 3)
    return fig


# ---- fig_variants_key: the paper's figure (the full maps are docs/ pages) ------------
KEY_GROUPS = {STATED: "stated recipe", "open": "best open variant",
              "departs": "best departing variant"}


def key_columns(gaps: pd.DataFrame, study: dict | None = None) -> list[str]:
    """The recipes the paper's gap figure shows: the stated one and the best of each
    kind (the ranking's first ``open`` and first ``departs``), where present."""
    columns = column_order(gaps, study)
    return [columns.index[columns.group == g][0] for g in KEY_GROUPS
            if (columns.group == g).any()]


def plot_key(gaps: pd.DataFrame, study: dict | None = None):
    """fig_variants_key: every paper number (rows) under the key recipes (key_columns),
    drawn at the paper's text width with MAX_PT text, upright: a figure a reader reads
    in the column. The full map (every recipe) is fig_variants, a docs/ page."""
    import matplotlib.pyplot as plt

    style.apply()
    columns = column_order(gaps, study)
    keep = key_columns(gaps, study)
    values = _wide(gaps, "gap").astype(float)[keep]
    inherited = _wide(gaps, "inherited").eq(True)[keep]
    pt = MAX_PT
    height = len(values) * pt * 1.45 / 72 + 1.3  # a row 1.45 lines; column names, key
    fig, ax = plt.subplots(figsize=(style.TEXT_WIDTH_IN - 0.1, height), layout="constrained")
    _heatmap(ax, values, inherited, pt)
    bar = ax.collections[0].colorbar  # fig_variants' colour bar, as wide as a cell column
    bar.ax.yaxis.label.set_fontsize(pt)
    bar.ax.tick_params(labelsize=pt)
    labels = [f"{KEY_GROUPS[columns.group[c]]}\n{_column_label(c, columns.loc[c])}"
              for c in keep]
    ax.set_xticks(np.arange(len(keep)) + 0.5, labels, rotation=0, fontsize=pt)
    ax.xaxis.tick_top()
    ax.set_yticks(np.arange(len(values)) + 0.5, _marked(values.index, gaps), rotation=0)
    ax.tick_params(axis="both", labelsize=pt, length=0)
    key = (f"{_count_key(study)}; (grey): inherited from the stated recipe; "
           f"{UNVERIFIED_KEY}")
    ax.set_xlabel("\n".join(textwrap.wrap(key, 62)), fontsize=pt, loc="left")
    return fig


def make_key(gaps: pd.DataFrame, outputs, study: dict | None = None) -> None:
    """fig_variants_key to ``outputs`` (its PDF, PNG and SVG)."""
    style.save(plot_key(gaps, study), outputs)


# ---- fig_variants_measured: one panel per measurement ---------------------------------
def measured_panels(gaps: pd.DataFrame, column: str = "gap") -> dict[str, pd.DataFrame]:
    """measurement → its grid: rows "run: metric", the numbers it remeasures in the
    paper's order; columns the recipes (NaN: not measured there)."""
    grid = gap_grid(gaps, column)
    out = {}
    for name in dict.fromkeys(grid.index.get_level_values(0)):
        if name != "reported":
            panel = grid.loc[name]
            panel.index = [f"{r}: {m}" for r, m in panel.index]
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
KEY = ("|gap| ≤ 1: within tolerance; grey text: the default's models measured alike (the "
       "recipe did not rerun that method); blank: not measured this way")
MARKS_KEY = ("columns: stated: the stated recipe\nopen: fills a detail the paper leaves open"
             "\ndeparts: departs from what it states\neach group best first by the ranking",
             UNVERIFIED_KEY.replace(", not", ",\nnot").replace(" (", "\n("))


# The measured gap map's two pages (one panel per measurement does not fit one page at a
# readable size): the other images and estimators, and the epsilon cosines.
MEASURED_FIGURES = {
    "fig_variants_measured": ("The recipes' models measured another way: other images, "
                              "other cosines (no retraining)"),
    "fig_variants_measured_eps": ("The recipes' models measured with an epsilon cosine, "
                                  "at two batch sizes (no retraining)"),
}


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
        ax.text(0.01, 0.5, f"{MEASURED_FIGURES[figure]}: no measurement of this kind "
                "remeasured a number (config measurements)", fontsize=MAX_PT, va="center")
        return fig
    inherited = {m: p.eq(True) for m, p in measured_panels(gaps, "inherited").items()
                 if measured_figure_of(m) == figure}
    order = [f"{r}: {m}" for r, m in dict.fromkeys(zip(gaps.run, gaps.metric, strict=True))]
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


def saved_size_in(fig) -> tuple[float, float]:
    """The figure's size as style.save writes it (bbox_inches="tight", matplotlib's
    0.1 in pad), in inches: what \\includegraphics scales onto the page."""
    fig.canvas.draw()  # the constrained layout, as saving runs it
    bbox = fig.get_tightbbox(fig.canvas.get_renderer())
    return bbox.width + 0.2, bbox.height + 0.2


def printed_scale(fig, page=PAGE_IN) -> float:
    """How much the paper scales the saved figure to fit ``page`` (width, height in
    inches; ms.tex: width and height given, keepaspectratio)."""
    width, height = saved_size_in(fig)
    return min(page[0] / width, page[1] / height)


def printed_font_sizes(fig, page=PAGE_IN) -> list[float]:
    """Every text's size in points as printed on ``page`` (PAGE_IN: fig_variants on the
    rotated page; MEASURED_PAGE_IN: fig_variants_measured): what the readability check
    reads."""
    scale = printed_scale(fig, page)
    texts = [t for t in fig.findobj(lambda a: hasattr(a, "get_fontsize")
                                    and hasattr(a, "get_text")) if t.get_text().strip()]
    return [t.get_fontsize() * scale for t in texts]


def make(gaps: pd.DataFrame, outputs, study: dict | None = None) -> None:
    """fig_variants to ``outputs`` (its PDF, PNG and SVG); ``study``: config ``study``
    (the ranking rule its columns are ordered by)."""
    if gaps.empty:
        raise ValueError("no paper numbers to map: is reproduction.reference set?")
    style.save(plot(gaps, study), outputs)


def make_measured(gaps_csv, outputs: dict, study: dict | None = None) -> None:
    """The measured gap map's pages from variants_gap.csv (read through its contract):
    ``outputs``: figure name (MEASURED_FIGURES) → its files (PDF, PNG, SVG); ``study``:
    config ``study`` (the ranking rule the columns are ordered by)."""
    gaps = table_io.read(gaps_csv, "variants_gap")
    if not has_measured(gaps):
        raise ValueError("the gap table holds no measured number: did measurements run "
                         "(config measurements.run)?")
    for figure, files in outputs.items():
        style.save(plot_measured(gaps, figure, study), files)
