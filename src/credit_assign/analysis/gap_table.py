"""The gap map: every recipe's comparison with the paper, and its models measured other
ways, as one table (results/<dataset>/<recipe>/summary/variants_gap.csv, what fig_variants draws;
written with the study's page by studies.variants.page).
"""

from __future__ import annotations

import json
import math

import pandas as pd

from credit_assign.analysis.cells import flag
from credit_assign.analysis.comparison import (
    KEY,
    MEASUREMENT_SEP,
    number_key,
    paper_number,
)
from credit_assign.analysis.study import (
    recipe_kind,
    split_recipe,
)
from credit_assign.infra.paths import DEFAULT_RECIPE


def gap_table(tables: dict[str, pd.DataFrame], kinds: dict[str, str] | None = None
              ) -> pd.DataFrame:
    """The gap map as a tidy table: one row per (paper number, column), the column's value
    and ours − paper in units of the tolerance (|gap| ≤ 1: within; NaN: no tolerance).
    A paper number is its keys (comparison.KEY: ``method``, ``lam``, ``seed`` and
    ``layer``, nullable ints, ``metric``) and the published number as data (``paper``,
    ``paper_std``, ``paper_range`` as reproduction.csv holds them: a range as text);
    the pages and figures label it (render.run_label, metric_label, paper_text).
    ``tables``: column name → its comparison, ``default`` first; a column is a recipe
    (its reproduction table) or ``<recipe>/<measurement>`` (measured_comparisons);
    ``kinds``: variant → ``open`` | ``departs`` (recipe_kind). Each row also carries
    whether the paper's number is ``verified`` (the reference's flag), the gap in units
    of our own sd (``gap_sd``), whether the tolerance is tighter than that sd, and the
    per-seed gaps the hold-one-seed-out check reads.

    A number a column does not measure itself is *inherited*, so every column is judged
    on the whole table: a recipe variant's number for a method it leaves alone is the
    default's; a measurement column's number the measurement does not remeasure (test
    accuracy, the null) is its recipe's own; and a number it remeasures on a method the
    recipe did not rerun is the default's models measured the same way
    (``default/<measurement>``). ``inherited_from`` names the source column."""
    default = tables[DEFAULT_RECIPE]
    keys = [number_key(r) for r in default.itertuples()]
    rows_of = {}
    for name, table in tables.items():
        if [number_key(r) for r in table.itertuples()] != keys:
            raise ValueError(f"recipe {name!r}: its reproduction table compares other paper "
                             f"numbers than the default's; rebuild both from one reference")
        rows_of[name] = list(table.itertuples())

    def source(name: str, i: int) -> str:
        r = rows_of[name][i]
        if r.ours_n > 0 or name == DEFAULT_RECIPE:
            return name
        base, measurement = split_recipe(name)
        if measurement == "reported":
            return source(DEFAULT_RECIPE, i) if rows_of[DEFAULT_RECIPE][i].ours_n > 0 else name
        if getattr(r, "remeasured", False):
            same = f"{DEFAULT_RECIPE}{MEASUREMENT_SEP}{measurement}"
            if name != same and same in rows_of and rows_of[same][i].ours_n > 0:
                return same
            return name
        return source(base, i) if base in rows_of else source(DEFAULT_RECIPE, i)

    rows = []
    for name in tables:
        base, measurement = split_recipe(name)
        for i, key in enumerate(keys):
            r = rows_of[name][i]
            src = rows_of[source(name, i)][i]
            inherited = source(name, i) != name
            d = rows_of[DEFAULT_RECIPE][i]
            rows.append({**key, **_paper(r), "recipe": name, "kind": recipe_kind(name, kinds),
                         "base_recipe": base, "measurement": measurement,
                         "remeasured": bool(getattr(r, "remeasured", True)),
                         "verified": flag(getattr(d, "verified", True)),
                         "note": _text(getattr(d, "note", "")),
                         "ours_mean": src.ours_mean, "ours_std": src.ours_std,
                         "ours_n": src.ours_n, "gap": src.gap,
                         "gap_sd": getattr(src, "gap_sd", math.nan),
                         "tolerance_below_sd": flag(getattr(src, "tolerance_below_sd",
                                                             False)),
                         "gap_seed": _text(getattr(src, "gap_seed", "{}")) or "{}",
                         "gap_without_seed": _text(getattr(src, "gap_without_seed", "{}"))
                         or "{}",
                         "inherited": inherited,
                         "inherited_from": source(name, i) if inherited else ""})
    out = pd.DataFrame(rows)
    out = out.astype({"seed": "Int64", "layer": "Int64"})
    out["within"] = out.gap.abs() <= 1
    return out


def _paper(r) -> dict:
    """The published number as reproduction.csv holds it: a range as its text."""
    p = paper_number(r)
    return {**p, "paper_range": None if p["paper_range"] is None
            else json.dumps(p["paper_range"])}


def _text(x) -> str:
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else str(x)


def gap_grid(gaps: pd.DataFrame, column: str = "gap") -> pd.DataFrame:
    """The gap map laid out for reading: columns are the recipes; rows are the paper
    numbers as each recipe reports them (``reported``), then one labelled row set per
    measurement holding only the numbers that measurement remeasures — a cell of the row
    set ``[eps_cos_b128]`` under ``dfa_no_aug`` is the column ``dfa_no_aug/eps_cos_b128``.
    Index: (measurement, *comparison.KEY), a missing seed or layer None; a missing
    combination is NaN."""
    recipes = list(dict.fromkeys(gaps.base_recipe))
    measurements = list(dict.fromkeys(gaps.measurement))
    keep = (gaps.measurement == "reported") | gaps.remeasured.astype(bool)
    g = gaps[keep]
    rows = [(m, *number_key(r).values()) for m, r in zip(g.measurement, g.itertuples(),
                                                         strict=True)]
    order = list(dict.fromkeys(rows))
    order.sort(key=lambda k: measurements.index(k[0]))  # stable: paper order within a set
    at = {k: i for i, k in enumerate(order)}
    wide = g.assign(_row=[at[k] for k in rows]).pivot_table(
        index="_row", columns="base_recipe", values=column, aggfunc="first", dropna=False)
    wide = wide.reindex(index=range(len(order)), columns=recipes)
    wide.index = pd.MultiIndex.from_tuples(order, names=["measurement", *KEY])
    return wide


def grid_rows(grid: pd.DataFrame) -> list[dict]:
    """gap_grid's rows as the labels want them: {measurement, method, lam, seed, metric,
    layer}, a missing seed or layer None."""
    return [{k: (None if v is None or pd.isna(v) else v) for k, v in zip(grid.index.names, key,
                                                                         strict=True)}
            for key in grid.index]
