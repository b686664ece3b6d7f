"""The variant study's page: results/<dataset>/<recipe>/summary/variants_gap.csv (the gap map as
analysis.gap_table builds it) and the study's section of reproduction_variants.md
(variants.md.j2 beside this module), written by step variants_gap_map.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from credit_assign.analysis.cells import flag
from credit_assign.analysis.comparison import (
    MEASUREMENT_SEP,
    load_reference,
    measured_comparisons,
    number_key,
    paper_number,
)
from credit_assign.analysis.gap_table import gap_grid, gap_table, grid_rows
from credit_assign.analysis.study import (
    best,
    holdout,
    holdout_data,
    ranking,
    ranking_settings,
    split_recipe,
)
from credit_assign.analysis.tables import read as read_table
from credit_assign.analysis.tables import write as write_table
from credit_assign.infra import paths
from credit_assign.infra.files import atomic_write_text
from credit_assign.infra.paths import DEFAULT_RECIPE
from credit_assign.reporting import render


def _side(z) -> dict:
    """A row of the side-by-side table: one column's number (its keys and the paper's
    number, labelled by the template)."""
    return {**number_key(z), **paper_number(z), "verified": flag(z.verified),
            "ours_n": z.ours_n, "ours_mean": z.ours_mean, "ours_std": z.ours_std,
            "gap": z.gap, "gap_sd": z.gap_sd, "tighter": z.tolerance_below_sd,
            "inherited": flag(z.inherited)}


def variants_markdown(gaps: pd.DataFrame, rank: pd.DataFrame, about: dict[str, dict],
                      study: dict | None = None) -> str:
    """The variant study as markdown (variants.md.j2 beside this module): the ranking (by the
    study's ranking, each kind on its own), the default recipe beside the best ``open``
    variant, the winner's-curse check, and the whole gap map. ``about``: recipe → {kind,
    description, methods, seeds}; ``rank``: ranking(gaps, study). '' without a variant."""
    variants = rank[rank.recipe != DEFAULT_RECIPE]
    if variants.empty:
        return ""
    best_open = best(rank, "open")
    # no open variant: the first variant of the ranking, named for what it is
    shown = best_open or variants.recipe.iloc[0]
    ranked = [{"kind": r.kind, "rank": r.rank, "recipe": r.recipe,
               "description": a.get("description", ""), "methods": a.get("methods", []),
               "seeds": a.get("seeds", []), "within": int(r.within),
               "compared": int(r.compared), "within_all": int(r.within_all),
               "compared_all": int(r.compared_all), "within_verified": int(r.within_verified),
               "compared_verified": int(r.compared_verified), "rerun": r.rerun,
               "clipped_gap_sum": r.clipped_gap_sum}
              for r in rank.itertuples() for a in [about.get(r.recipe, {})]]
    default = gaps[gaps.recipe == DEFAULT_RECIPE].itertuples()
    side = [(_side(x), _side(y)) for x, y in
            zip(default, gaps[gaps.recipe == shown].itertuples(), strict=True)]
    # the gap map's cells: each the row of ``gaps`` it shows (NaN: not measured there)
    grid = gap_grid(gaps.assign(row=range(len(gaps))), "row")
    cells = [{**key, "cells": [None if pd.isna(i) else
                               {"gap": gaps.gap.iat[int(i)],
                                "inherited": bool(gaps.inherited.iat[int(i)])} for i in row]}
             for key, row in zip(grid_rows(grid), grid.to_numpy(), strict=True)]
    figures = {name: paths.figure(name, "png") for name in
               ("fig_variants", "fig_variants_measured", "fig_variants_measured_eps")}
    return render.macro("variants.md.j2", "variants")({
        "settings": ranking_settings(study), "figures": figures, "rank": ranked,
        "best_open": best_open, "shown": shown,
        "shown_kind": rank.set_index("recipe").kind[shown], "side": side,
        "curse": holdout_data(holdout(gaps, study)), "columns": list(grid.columns), "grid": cells})


def write_gap_map(tables: dict, out_csv, reference_path=None, measurements=None,
                  default_md=None, out_md=None, about: dict | None = None,
                  expect: dict | None = None, study: dict | None = None) -> pd.DataFrame:
    """variants_gap.csv and (``out_md``) the default's reproduction.md followed by the
    variant study; returns the gap table (what fig_variants draws). ``tables``: recipe →
    its reproduction.csv, default first; ``measurements``: recipe → its measurements.csv
    (a single path: the default's), each adding a column ``<recipe>/<measurement>`` per
    measurement variant. ``expect``: recipe → the runs its measurements.csv must hold;
    ``study``: config ``study`` (the ranking); ``about[name]["kind"]``: each
    variant's kind."""
    frames = {name: read_table(path, "reproduction") for name, path in tables.items()}
    about = dict(about or {})
    if measurements and not isinstance(measurements, dict):
        measurements = {DEFAULT_RECIPE: measurements}
    if measurements:
        reference = load_reference(reference_path)
        column = render.macro("measurements.j2", "column")  # `R`'s models; how M measures
        for recipe, path in measurements.items():
            expected = (expect or {}).get(recipe)
            measured = measured_comparisons(
                reference, read_table(path, "measurements", expected), recipe)
            frames.update(measured)
            for name in measured:
                _, measurement = split_recipe(name)
                own = about.get(recipe, {})
                about[name] = {**own, "description": column(recipe, measurement)}
    gaps = gap_table(frames, {name: a["kind"] for name, a in about.items()
                              if MEASUREMENT_SEP not in name and "kind" in a})
    inputs = [*tables.values(), *(measurements or {}).values(), *([reference_path] if
                                                                 reference_path else [])]
    # full precision: the notes and the paper format each number once, from this value
    write_table(gaps, out_csv, "variants_gap", inputs)
    if out_md:
        text = Path(default_md).read_text().rstrip("\n") + "\n\n"
        atomic_write_text(out_md, text + variants_markdown(gaps, ranking(gaps, study), about,
                                                           study))
    return gaps
