"""What the pages say about EP's two questions, as data: the precision study's measured
facts (read from its tables, results/ep_stack/summary/ep_estimator*.csv: data, not its
code) and the second question's verdict, each with the outcome a sentence asserts
(``outcomes``), so a page or the paper can guard the sentence against it."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

GRID = (0.00125, 0.005, 0.02)  # the nudges the sentences quote (on the study's grid)


def is_flat(seed: dict) -> bool:
    """The rule for one seed of ``float64_per_seed``: its float64 1 − cos varies over the
    grid by under a hundredth of itself (never where no error is left: a zero has no
    fraction)."""
    return seed["spread"] is not None and seed["spread"] < 0.01


def _at(frame: pd.DataFrame, precision: str, stencil: str, r: float) -> pd.Series:
    """Each seed's mean over its batches of block 0's cosine in one cell."""
    d = frame[(frame.group == "block0") & (frame.precision == precision)
              & (frame.stencil == stencil) & np.isclose(frame.r, r)]
    return d.groupby("seed").cosine.mean()


def precision(table: pd.DataFrame, remade: pd.DataFrame) -> dict:
    """The precision study's facts: block 0's cosine (the mean over seeds of each seed's
    mean over batches) per precision and r, float64's spread over r, Richardson against
    the centred stencil in float32, block 0's nudge in float32 units at r = 0.005, and
    whether the remade stacks are the recorded ones; beside each quoted mean, the range
    of the seeds' means (``<key>_seeds``: (lowest, highest)). Outcomes, each judged seed by
    seed — "yes" where every seed shows it, "no" where none does, "mixed" where some do
    (a mean hides which) — ``float32_rounding`` (float32's error falls as r grows over
    GRID), ``float64_flat`` (float64's 1 − cos varies over the whole grid by under 1 % of
    itself), ``richardson_worse`` (in float32 at r = 0.005); and ``remade_same`` (every
    remade stack's validation loss equals the recorded one: "yes" or "no")."""
    seeds = sorted(int(s) for s in table.seed.unique())
    out: dict = {"seeds": seeds, "n": len(seeds), "r_min": float(table.r.min()),
                 "r_max": float(table.r.max())}
    def quote(key: str, per_seed: pd.Series) -> None:
        out[key] = float(per_seed.mean())
        out[f"{key}_seeds"] = (float(per_seed.min()), float(per_seed.max()))

    for p in ("float32", "float64"):
        for r in GRID:
            quote(f"{p}_{r}", _at(table, p, "central", r))
    err64 = pd.DataFrame({r: 1 - _at(table, "float64", "central", r)
                          for r in sorted(table.r.unique())})  # seed × r
    f64 = list(err64.mean())
    out["float64_err_min"], out["float64_err_max"] = float(min(f64)), float(max(f64))
    out["float64_spread"] = float((max(f64) - min(f64)) / min(f64))
    quote("richardson32", _at(table, "float32", "richardson", 0.005))
    b0 = table[(table.group == "block0") & (table.precision == "float32")
               & (table.stencil == "central") & np.isclose(table.r, 0.005)]
    out["ulps_0.005"] = float(b0.nudge_ulps_block0.median())
    err32 = pd.DataFrame({r: 1 - _at(table, "float32", "central", r) for r in GRID})
    falls = [list(e) == sorted(e, reverse=True) for _, e in err32.iterrows()]
    # per seed, float64's 1 − cos over the grid: its least and largest value, its largest
    # size, and how much it varies as a fraction of itself (None where no error is left:
    # the fraction of a zero is undefined, and the rule reads such a seed as not flat)
    out["float64_per_seed"] = [
        {"seed": int(s), "cos": float(1 - e.mean()), "err_min": float(e.min()),
         "err_max": float(e.max()), "err_abs": float(e.abs().max()),
         "spread": float((e.max() - e.min()) / e.min()) if e.min() > 0 else None}
        for s, e in err64.iterrows()]
    flat = [is_flat(s) for s in out["float64_per_seed"]]
    worse = list(_at(table, "float32", "richardson", 0.005)
                 < _at(table, "float32", "central", 0.005))
    same = bool(len(remade)) and bool(np.allclose(remade.recorded_val_loss,
                                                  remade.remade_val_loss, rtol=0, atol=0))
    out["remade"] = [{k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                      for k, v in row.items()} for row in remade.to_dict("records")]
    out["outcomes"] = {
        "float32_rounding": _every(falls), "float64_flat": _every(flat),
        "richardson_worse": _every(worse), "remade_same": "yes" if same else "no"}
    return out


def _every(per_seed: list[bool]) -> str:
    """"yes" where every seed shows it, "no" where none does, "mixed" otherwise."""
    return "yes" if all(per_seed) else "no" if not any(per_seed) else "mixed"


def question2(found: dict) -> dict:
    """The second question's verdict as the pages quote it, with its outcome
    (``verdict`` or ``verdict_reason``), each seed's effect (None where not judged, with
    the reason) and the float32 cell beside it."""
    v = found["verdict"]
    cells = {(c["precision"], c["r"]): c for c in found["cells"]}
    f32 = cells.get(("float32", 0.005), {})
    outcome = v["verdict"] + (f"_{v['reason']}" if v["reason"] else "")
    return {**{k: v[k] for k in ("verdict", "reason", "mean", "low", "high", "threshold",
                                 "confidence", "n_judged", "n_fresh", "waiting",
                                 "not_judged")},
            "per_seed": [{"seed": r["seed"], "effect": r["effect"], "reason": r["reason"]}
                         for r in found["seeds"]],
            "batches": found.get("batches", []),
            "run": v["n_fresh"] - len(v["waiting"]), "float32_mean": f32.get("mean"),
            "r": found["estimator"]["judged"]["r"],
            "t2max": found["estimator"]["judged"]["nudged_steps_max"],
            "outcomes": {"question2": outcome}}


def fmt(x, digits: int = 3) -> str:
    """A number as the pages print it (– where there is none)."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return f"{x:.{digits}f}"
