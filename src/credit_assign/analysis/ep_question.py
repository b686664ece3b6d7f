"""The EP question judged (config/claims_ep.yaml, issue #44): does EP's gradient reach
block 0 of the spring-coupled stack, against the gradient it estimates — the implicit
(fixed-point) gradient at the converged free state?

From the step ep_fixed_point's results: one row per probe batch (the free phase's
convergence, the Jacobian's leading eigenvalue, the non-normal growth, the adjoint
solver's residual), one row per EP cosine (seed, batch, T1, T2max, r, reference, group),
each seed's stability and effect, and the verdict by the file's decision rule. Findings
are data: the words are templates (credit_assign.reporting).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from credit_assign.analysis.claims import decide, t_interval
from credit_assign.spec.claims import ClaimsError

GROUP = "block0"  # the bottom block: the last one the nudge reaches
CONVERGED = "converged"  # the T1 of EP from the converged free state


def _t1(value) -> str:
    """T1 as one spelling for tables: a step count or 'converged'."""
    return CONVERGED if value == CONVERGED else str(int(value))


def batch_table(results: list[dict]) -> pd.DataFrame:
    """One row per (seed, probe batch): the free phase run to convergence (converged,
    steps, residual), the leading eigenvalue of J at its end state, ‖(I + εJ)ⁿ‖₂ for each
    reported n, and the adjoint solve's residual (NaN where no fixed point was reached)."""
    rows = []
    for res in results:
        for b in res["batches"]:
            lead = b["eigenvalues"][0]
            row = {"seed": res["seed"], "batch": b["batch"], "converged": b["converged"],
                   "steps": b["steps"], "residual": b["residual"],
                   "leading_real": lead["real"], "leading_imag": lead["imag"],
                   "adjoint_residual": b.get("adjoint", {}).get("residual", math.nan),
                   "adjoint_converged": b.get("adjoint", {}).get("converged", False)}
            row.update({f"growth_{g['power']}": g["norm"] for g in b["growth"]})
            rows.append(row)
    return pd.DataFrame(rows)


def cosine_table(results: list[dict]) -> pd.DataFrame:
    """One row per (seed, batch, T1, T2max, r, reference, group): EP's cosine to that
    reference, with the free state's residual and the nudged phases' t_best."""
    rows = []
    for res in results:
        for b in res["batches"]:
            for e in b["ep"]:
                for ref, groups in e["cosine"].items():
                    for group, cos in groups.items():
                        rows.append({
                            "seed": res["seed"], "batch": b["batch"],
                            "free_steps": _t1(e["free_steps"]),
                            "nudged_steps_max": e["nudged_steps_max"], "r": e["r"],
                            "residual": e["residual"], "t_best": e["t_best"],
                            "reference": ref, "group": group,
                            "cosine": math.nan if cos is None else cos})
    return pd.DataFrame(rows)


def stability(batches: pd.DataFrame) -> pd.DataFrame:
    """Per seed: whether it has a stable fixed point — on every probe batch the free phase
    converged and J's leading real part at its end state is below 0 (the file's
    no_stable_fixed_point) — and, where not, why: ``not_converged`` (some batch's free
    phase reached its cap) before ``unstable`` (a converged state with a leading real part
    ≥ 0)."""
    rows = []
    for seed, sub in batches.groupby("seed", sort=True):
        converged = bool(sub.converged.all())
        stable_j = bool((sub.leading_real < 0).all())
        reason = None if converged and stable_j else (
            "not_converged" if not converged else "unstable")
        growth = [c for c in sub.columns if c.startswith("growth_")]
        top = max(growth, key=lambda c: int(c.split("_")[1])) if growth else None
        rows.append({"seed": int(seed), "batches": len(sub), "stable": reason is None,
                     "reason": reason, "not_converged": int((~sub.converged).sum()),
                     "max_leading_real": float(sub.leading_real.max()),
                     "max_residual": float(sub.residual.max()),
                     "max_steps": int(sub.steps.max()),
                     "growth_power": int(top.split("_")[1]) if top else None,
                     "max_growth": float(sub[top].max()) if top else None,
                     "max_adjoint_residual": _max(sub.adjoint_residual)})
    return pd.DataFrame(rows)


def _plain(value, kind):
    """A table's value as a plain number for the findings file (None where missing)."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) \
        else kind(value)


def _max(values: pd.Series) -> float | None:
    v = values.to_numpy(float)
    v = v[np.isfinite(v)]
    return float(v.max()) if len(v) else None


def cells(cosines: pd.DataFrame, seeds: list[int]) -> list[dict]:
    """Block 0's cosine in every (T1, T2max, r, reference) over ``seeds`` (the judged
    fresh seeds): each seed's mean over its batches, then their mean, min and max —
    shown beside the judged cell, never judged."""
    c = cosines[(cosines.group == GROUP) & cosines.seed.isin(seeds)]
    per_seed = (c.groupby(["free_steps", "nudged_steps_max", "r", "reference", "seed"])
                .cosine.mean().reset_index())
    order = {t: i for i, t in enumerate(sorted(
        set(per_seed.free_steps), key=lambda t: (t == CONVERGED, int(t) if t != CONVERGED
                                                 else 0)))}
    rows = []
    for (t1, t2, r, ref), sub in per_seed.groupby(["free_steps", "nudged_steps_max", "r",
                                                   "reference"]):
        v = sub.cosine.to_numpy(float)
        v = v[np.isfinite(v)]
        rows.append({"free_steps": t1, "nudged_steps_max": int(t2), "r": float(r),
                     "reference": ref, "n": int(len(v)),
                     "mean": float(v.mean()) if len(v) else None,
                     "min": float(v.min()) if len(v) else None,
                     "max": float(v.max()) if len(v) else None})
    refs = {"implicit": -1}
    return sorted(rows, key=lambda x: (refs.get(x["reference"], int(x["reference"][4:])
                                                if x["reference"].startswith("bptt") else 0),
                                       order[x["free_steps"]], x["nudged_steps_max"], x["r"]))


def cell(cosines: pd.DataFrame, effect: dict) -> pd.DataFrame:
    """The rows of the claim's cell: block 0, its reference, T1, T2max and r."""
    c = cosines
    return c[(c.group == GROUP) & (c.reference == effect["reference"])
             & (c.free_steps == _t1(effect["free_steps"]))
             & (c.nudged_steps_max == effect["nudged_steps_max"])
             & np.isclose(c.r, effect["r"])]


def seed_rows(spec: dict, batches: pd.DataFrame, cosines: pd.DataFrame) -> list[dict]:
    """Per seed of the file (fresh, then seen): its set, stability, and its effect — the
    mean over its probe batches of block 0's cosine in the claim's cell — with the
    per-batch values; a seed without a stable fixed point has no effect (None). A seed of
    the file with no result raises (the verdict needs every fresh seed's run)."""
    stable = stability(batches).set_index("seed") if len(batches) else None
    at = cell(cosines, spec["claim"]["effect"]) if len(cosines) else cosines
    rows = []
    for which in ("fresh", "seen"):
        for seed in spec["seeds"][which]:
            if stable is None or seed not in stable.index:
                raise ClaimsError(f"EP question: no ep_fixed_point result for {which} "
                                  f"seed {seed}")
            s = stable.loc[seed]
            values = at[at.seed == seed].sort_values("batch").cosine.tolist()
            effect = float(np.mean(values)) if s.stable and values else None
            if effect is not None and not math.isfinite(effect):
                effect = None
            rows.append({"seed": seed, "set": which, "stable": bool(s.stable),
                         "reason": s.reason, "effect": effect, "per_batch": values,
                         "max_residual": float(s.max_residual),
                         "max_steps": int(s.max_steps),
                         "max_leading_real": float(s.max_leading_real),
                         "not_converged": int(s.not_converged), "batches": int(s.batches),
                         "growth_power": _plain(s.growth_power, int),
                         "max_growth": _plain(s.max_growth, float),
                         "max_adjoint_residual": _plain(s.max_adjoint_residual, float)})
    return rows


def verdict(spec: dict, rows: list[dict]) -> dict:
    """The file's decision on the fresh seeds with a stable fixed point: the Student-t
    interval of their mean effect against the threshold (claims.decide); undecided with
    reason ``no_stable_fixed_point`` where fewer than min_seeds fresh seeds have one
    (``too_few`` where they all have one but some effect is undefined). The seen seeds are
    never judged."""
    d, claim = spec["decision"], spec["claim"]
    fresh = [r for r in rows if r["set"] == "fresh"]
    judged = [r["effect"] for r in fresh if r["effect"] is not None]
    out = {"id": claim["id"], "threshold": claim["threshold"], "side": claim["side"],
           "n_fresh": len(fresh), "n_judged": len(judged),
           "not_judged": [r["seed"] for r in fresh if r["effect"] is None],
           "mean": float(np.mean(judged)) if judged else None,
           "low": None, "high": None, "verdict": "undecided", "reason": None}
    if len(judged) < d["min_seeds"]:  # why: the seeds without a fixed point, if any
        unstable = any(not r["stable"] for r in fresh)
        out["reason"] = "no_stable_fixed_point" if unstable else "too_few"
        return out
    low, high = t_interval(judged, d["confidence"])
    out["low"], out["high"] = low, high
    out["verdict"], out["reason"] = decide(
        low, high, {"claim": {"side": claim["side"], "threshold": claim["threshold"]}})
    return out


def findings(spec: dict, results: list[dict]) -> dict:
    """Everything the pages say about the EP question, as data: the verdict, each seed's
    row, and the settings the file names."""
    batches, cosines = batch_table(results), cosine_table(results)
    rows = seed_rows(spec, batches, cosines)
    judged = [r["seed"] for r in rows if r["set"] == "fresh" and r["effect"] is not None]
    return {"claim": spec["claim"], "decision": spec["decision"], "runs": spec["runs"],
            "seed_sets": spec["seeds"], "seeds": rows, "verdict": verdict(spec, rows),
            "cells": cells(cosines, judged)}
