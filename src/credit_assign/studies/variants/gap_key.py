"""The paper's gap figure, fig_variants_key (``plot_key``): every paper number (rows)
under the key recipes only, the stated one and the best of each kind (``key_columns``),
drawn upright at the paper's text width with MAX_PT text, its cells, rows and columns as
in fig_variants (gap_map). The full maps (every recipe: gap_map, gap_measured) are
docs/ pages."""

from __future__ import annotations

import re
import textwrap

import numpy as np
import pandas as pd

from credit_assign.analysis.study import STATED
from credit_assign.figures import style
from credit_assign.reporting import labels
from credit_assign.studies.variants.gap_map import (
    MAX_PT,
    UNVERIFIED_KEY,
    _column_label,
    _count_key,
    _heatmap,
    _marked,
    _wide,
    column_order,
)

TEXT = labels.figure_text(__name__)
# the kinds whose best recipe the figure shows, in its column order, and their names
KEY_GROUPS = {kind: labels.RECIPE_KINDS[kind]["figure_key"]
              for kind in (STATED, "open", "departs")}


# the widest a line of a column's header may be, in points at MAX_PT: neighbouring
# headers stay apart (a column is about 75 pt wide at the text width, "best departing
# variant" 78 pt); a longer recipe name is wrapped after an underscore, or anywhere when
# a part of it is wider (a name is at most planning.checks.VARIANT_NAME_MAX characters)
LINE_PT = 64.0


def text_width_pt(text: str, pt: float = MAX_PT) -> float:
    """The width of ``text`` set in the figures' font at ``pt`` points."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    prop = FontProperties(family="DejaVu Sans", size=pt)
    return TextToPath().get_text_width_height_descent(text, prop, ismath=False)[0]


def wrap_name(head: str, width_pt: float = LINE_PT, pt: float = MAX_PT) -> str:
    """A column's name (``head``: "1. name") in lines no wider than ``width_pt``: broken
    after an underscore, or within a part wider than a line."""
    lines, line = [], ""
    for part in re.findall(r"[^_]*_|[^_]+", head):
        if line and text_width_pt(line + part, pt) > width_pt:
            lines.append(line)
            line = ""
        for ch in part:  # a part wider than a line is broken where it must be
            if line and text_width_pt(line + ch, pt) > width_pt:
                lines.append(line)
                line = ""
            line += ch
    return "\n".join([*lines, line])


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
    heads = [wrap_name(head) + "\n" + counts for head, counts in
             (_column_label(c, columns.loc[c]).split("\n", 1) for c in keep)]
    extra = max((h.count("\n") - 1 for h in heads), default=0)  # a wrapped name's lines
    # a row 1.45 lines; column names (3 lines, more when wrapped), key
    height = len(values) * pt * 1.45 / 72 + 1.3 + max(extra, 0) * pt * 1.25 / 72
    fig, ax = plt.subplots(figsize=(style.TEXT_WIDTH_IN - 0.1, height), layout="constrained")
    _heatmap(ax, values, inherited, pt)
    bar = ax.collections[0].colorbar  # fig_variants' colour bar, as wide as a cell column
    bar.ax.yaxis.label.set_fontsize(pt)
    bar.ax.tick_params(labelsize=pt)
    labels = [f"{KEY_GROUPS[columns.group[c]]}\n{head}" for c, head in zip(keep, heads,
                                                                          strict=True)]
    ax.set_xticks(np.arange(len(keep)) + 0.5, labels, rotation=0, fontsize=pt)
    ax.xaxis.tick_top()
    ax.set_yticks(np.arange(len(values)) + 0.5, _marked(values.index, gaps), rotation=0)
    ax.tick_params(axis="both", labelsize=pt, length=0)
    key = TEXT["key"].format(counts=_count_key(study), unverified=UNVERIFIED_KEY)
    ax.set_xlabel("\n".join(textwrap.wrap(key, 62)), fontsize=pt, loc="left")
    return fig


def make_key(gaps: pd.DataFrame, outputs, study: dict | None = None) -> None:
    """fig_variants_key to ``outputs`` (its PDF, PNG and SVG)."""
    style.save(plot_key(gaps, study), outputs)
