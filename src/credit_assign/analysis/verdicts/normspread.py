"""The norm's spread: how far the recipes' own runs move DFA's unpenalised ‖h_L‖ — the
largest recipe mean over the smallest, which recipes they are, and their per-seed gaps
(a mean over three seeds can hide seeds that move in opposite directions). Read from the
stated recipe and the open variants: the finding is about choices the paper leaves open.

Rule: a measurement, no threshold. Outcome ``measured`` (``overlap``: whether the two
recipes' per-seed gaps overlap; unknown without them) or ``missing`` (fewer than two
recipes with a finite mean); a recipe whose mean is not finite is named, never compared."""

from __future__ import annotations

import numpy as np
import pandas as pd

from credit_assign.analysis import study as variant_study
from credit_assign.analysis.comparison import MEASUREMENT_SEP
from credit_assign.analysis.verdicts import Study, Verdict


def _seed_gaps(row) -> list[float]:
    """A gap-map row's per-seed gaps (tolerance units), finite ones only."""
    return [g for g in variant_study.seed_map(row.gap_seed).values() if not pd.isna(g)] \
        if "gap_seed" in row.index else []


def from_rows(own: pd.DataFrame) -> dict:
    """The finding from the recipes' own headline rows (the stated recipe and the open
    variants)."""
    finite = np.isfinite(own.ours_mean.astype(float)) & (own.ours_mean > 0)
    not_finite = sorted(set(own[~finite].recipe))  # diverged: named, never compared
    own = own[finite]
    if len(own) < 2:
        return {"outcome": "missing", "not_finite": not_finite}
    lo, hi = own.loc[own.ours_mean.idxmin()], own.loc[own.ours_mean.idxmax()]
    ends = {}
    for name, row in (("low", lo), ("high", hi)):
        gaps = _seed_gaps(row)
        ends[name] = {"recipe": str(row.recipe), "mean": float(row.ours_mean),
                      "seed_gaps": gaps, **({"gap_min": min(gaps), "gap_max": max(gaps)}
                                            if gaps else {})}
    both = "gap_min" in ends["low"] and "gap_min" in ends["high"]
    overlap = ("unknown" if not both
               else "yes" if ends["low"]["gap_max"] >= ends["high"]["gap_min"] else "no")
    return {"outcome": "measured", "not_finite": not_finite,
            "factor": float(hi.ours_mean / lo.ours_mean), **ends, "overlap": overlap}


def finding(data: Study) -> dict:
    own = data.headline[~data.headline.recipe.str.contains(MEASUREMENT_SEP, regex=False)]
    return from_rows(own[own.kind.isin([variant_study.STATED, "open"])])


END = {"type": "object", "required": ["recipe", "mean", "seed_gaps"]}
VERDICT = Verdict(
    name="normspread", reads="study", outcomes=("measured", "missing"), rule="measure",
    finding=finding, order=2,
    schema={"if": {"properties": {"outcome": {"const": "measured"}}},
            "then": {"required": ["factor", "low", "high", "overlap"],
                     "properties": {"low": END, "high": END,
                                    "overlap": {"enum": ["yes", "no", "unknown"]}}}})
