"""The headline: does any column that ran or measured DFA at λ = 0 itself (a recipe's own
runs, or a measurement of them) bring the headline norm within tolerance?

Rule: a screen, |gap| ≤ 1 tolerance. Outcome ``within`` (``columns``: those that do,
each recipe, kind and gap; ``departs``: one of them departs from the stated recipe),
``none`` (``closest``) or ``missing``."""

from __future__ import annotations

import pandas as pd

from credit_assign.analysis.verdicts import Study, Verdict


def from_rows(own: pd.DataFrame) -> dict:
    """The finding from the headline rows that ran or measured the norm."""
    own = own[own.gap.notna()]
    if own.empty:
        return {"outcome": "missing"}
    within = own[own.gap.abs() <= 1]
    closest = own.loc[own.gap.abs().idxmin()]
    if within.empty:
        return {"outcome": "none", "closest": {"recipe": str(closest.recipe),
                                               "kind": str(closest.kind),
                                               "gap": float(closest.gap)}}
    return {"outcome": "within",
            "columns": [{"recipe": str(r.recipe), "kind": str(r.kind), "gap": float(r.gap)}
                        for r in within.itertuples()],
            "departs": any(str(k).startswith("departs") for k in within.kind)}


def finding(data: Study) -> dict:
    return from_rows(data.headline)


COLUMN = {"type": "object", "required": ["recipe", "kind", "gap"]}
VERDICT = Verdict(
    name="headline", reads="study", outcomes=("within", "none", "missing"), rule="screen",
    finding=finding, order=1,
    schema={"allOf": [
        {"if": {"properties": {"outcome": {"const": "within"}}},
         "then": {"required": ["columns", "departs"],
                  "properties": {"departs": {"type": "boolean"},
                                 "columns": {"type": "array", "minItems": 1,
                                             "items": COLUMN}}}},
        {"if": {"properties": {"outcome": {"const": "none"}}},
         "then": {"required": ["closest"], "properties": {"closest": COLUMN}}}]})
