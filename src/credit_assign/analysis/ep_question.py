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


def _finite(values) -> list[float]:
    v = np.asarray(values, dtype=float)
    return [float(x) for x in v[np.isfinite(v)]]


def _max(values) -> float | None:
    v = _finite(values)
    return max(v) if v else None


def stability(batches: pd.DataFrame) -> dict[int, dict]:
    """Per seed: whether it has a stable fixed point — on every probe batch the free phase
    converged and J's leading real part at its end state is below 0 (the file's
    no_stable_fixed_point; a leading real part that is not a number is not below 0) —
    and, where not, why: ``not_converged`` (some batch's free phase reached its cap or
    diverged) before ``unstable`` (a converged state with a leading real part ≥ 0). Plain
    values (None where a quantity is missing); a residual or leading real part that is
    not finite is counted (``nonfinite``), never hidden by a maximum over the rest."""
    out = {}
    for seed, sub in batches.groupby("seed", sort=True):
        converged = bool(sub.converged.astype(bool).all())
        lead = sub.leading_real.to_numpy(float)
        reason = None if converged and bool(np.all(lead < 0)) else (
            "not_converged" if not converged else "unstable")
        growth = [c for c in sub.columns if c.startswith("growth_")]
        top = max(growth, key=lambda c: int(c.split("_")[1])) if growth else None
        residual = sub.residual.to_numpy(float)
        out[int(seed)] = {
            "batches": int(len(sub)), "stable": reason is None, "reason": reason,
            "not_converged": int((~sub.converged.astype(bool)).sum()),
            "max_leading_real": _max(lead), "max_residual": _max(residual),
            "nonfinite": int((~np.isfinite(residual)).sum() + (~np.isfinite(lead)).sum()),
            "max_steps": int(sub.steps.max()),
            "growth_power": int(top.split("_")[1]) if top else None,
            "max_growth": _max(sub[top]) if top else None,
            "max_adjoint_residual": _max(sub.adjoint_residual)}
    return out


def same_r(values, r: float):
    """Which of ``values`` is the nudge size ``r`` (floats read back from JSON: isclose)."""
    return np.isclose(np.asarray(values, dtype=float), r, rtol=1e-9, atol=0)


def cell(cosines: pd.DataFrame, effect: dict) -> pd.DataFrame:
    """The rows of the claim's cell: block 0, its reference, T1, T2max and r."""
    c = cosines
    return c[(c.group == GROUP) & (c.reference == effect["reference"])
             & (c.free_steps == _t1(effect["free_steps"]))
             & (c.nudged_steps_max == effect["nudged_steps_max"]) & same_r(c.r, effect["r"])]


def is_cell(row: dict, effect: dict) -> bool:
    """Whether a row of :func:`cells` is the claim's cell (the page bolds it)."""
    return bool(row["reference"] == effect["reference"]
                and row["free_steps"] == _t1(effect["free_steps"])
                and row["nudged_steps_max"] == effect["nudged_steps_max"]
                and same_r([row["r"]], effect["r"])[0])


def cells(cosines: pd.DataFrame, seeds: list[int], effect: dict) -> list[dict]:
    """Block 0's cosine in every (T1, T2max, r, reference) over ``seeds`` (the judged
    fresh seeds): each seed's mean over its batches (a seed with a batch whose cosine is
    not finite has no mean there, and is counted out), then their mean, min and max —
    shown beside the judged cell (``judged``), never judged."""
    c = cosines[(cosines.group == GROUP) & cosines.seed.isin(seeds)]
    rows = []
    keys = ["free_steps", "nudged_steps_max", "r", "reference"]
    for (t1, t2, r, ref), sub in c.groupby(keys):
        means = [float(np.mean(v)) for _, v in sub.groupby("seed").cosine
                 if np.all(np.isfinite(v.to_numpy(float)))]
        row = {"free_steps": t1, "nudged_steps_max": int(t2), "r": float(r),
               "reference": ref, "n": len(means),
               "mean": float(np.mean(means)) if means else None,
               "min": min(means) if means else None, "max": max(means) if means else None}
        rows.append({**row, "judged": is_cell(row, effect)})
    t1s = sorted({x["free_steps"] for x in rows},
                 key=lambda t: (t == CONVERGED, 0 if t == CONVERGED else int(t)))

    def ref_rank(ref: str) -> int:
        return -1 if ref == "implicit" else int(ref[4:]) if ref.startswith("bptt") else 0

    return sorted(rows, key=lambda x: (ref_rank(x["reference"]), t1s.index(x["free_steps"]),
                                       x["nudged_steps_max"], x["r"]))


def seed_rows(spec: dict, batches: pd.DataFrame, cosines: pd.DataFrame,
              n_batches: int | None = None) -> list[dict]:
    """Per seed of the file (fresh, then seen): its set, stability, and its effect — the
    mean over its probe batches of block 0's cosine in the claim's cell — with the
    per-batch values ({batch, cosine}); a seed without a stable fixed point has no effect
    (None). Raises, naming the seed, where the file cannot be applied as written: a seed
    with no result, a seed whose batches are not ``n_batches`` distinct ones (the
    settings' fixed_point.batches), or a stable seed whose cell has no finite cosine on
    some batch (the file defines no effect for it)."""
    stable = stability(batches) if len(batches) else {}
    at = cell(cosines, spec["claim"]["effect"]) if len(cosines) else cosines
    rows = []
    for which in ("fresh", "seen"):
        for seed in spec["seeds"][which]:
            if seed not in stable:
                raise ClaimsError(f"EP question: no ep_fixed_point result for {which} "
                                  f"seed {seed}")
            s = stable[seed]
            ids = batches.loc[batches.seed == seed, "batch"].tolist()
            if len(set(ids)) != len(ids) or (n_batches is not None and len(ids) != n_batches):
                raise ClaimsError(f"EP question: seed {seed} has batches {sorted(ids)}, not "
                                  f"{n_batches} distinct ones")
            mine = at[at.seed == seed].sort_values("batch")
            per_batch = [{"batch": int(b), "cosine": float(c) if math.isfinite(c) else None}
                         for b, c in zip(mine.batch, mine.cosine.astype(float), strict=True)]
            effect = None
            if s["stable"]:
                values = [x["cosine"] for x in per_batch]
                if len(values) != len(ids) or any(v is None for v in values):
                    raise ClaimsError(
                        f"EP question: seed {seed} has a stable fixed point but no finite "
                        f"block 0 cosine in the judged cell on every batch ({per_batch}): "
                        "the file defines no effect for it")
                effect = float(np.mean(values))
            rows.append({"seed": seed, "set": which, **s, "effect": effect,
                         "per_batch": per_batch})
    return rows


def verdict(spec: dict, rows: list[dict]) -> dict:
    """The file's decision on the fresh seeds with a stable fixed point: the Student-t
    interval of their mean effect against the threshold (claims.decide); undecided with
    reason ``no_stable_fixed_point`` where fewer than min_seeds fresh seeds have one. The
    seen seeds are never judged."""
    d, claim = spec["decision"], spec["claim"]
    fresh = [r for r in rows if r["set"] == "fresh"]
    judged = [r["effect"] for r in fresh if r["stable"]]
    out = {"id": claim["id"], "threshold": claim["threshold"], "side": claim["side"],
           "confidence": d["confidence"], "n_fresh": len(fresh), "n_judged": len(judged),
           "not_judged": [r["seed"] for r in fresh if not r["stable"]],
           "mean": float(np.mean(judged)) if judged else None,
           "low": None, "high": None, "verdict": "undecided", "reason": None}
    if len(judged) < d["min_seeds"]:
        out["reason"] = "no_stable_fixed_point"
        return out
    low, high = t_interval(judged, d["confidence"])
    out["low"], out["high"] = low, high
    out["verdict"], out["reason"] = decide(
        low, high, {"claim": {"side": claim["side"], "threshold": claim["threshold"]}})
    return out


def findings(spec: dict, results: list[dict]) -> dict:
    """Everything the pages say about the EP question, as data: the verdict, each seed's
    row, and every cell beside the judged one. One result per seed, each with its
    settings' number of probe batches (named where not)."""
    seeds = [r["seed"] for r in results]
    if len(set(seeds)) != len(seeds):
        raise ClaimsError(f"EP question: more than one result for seeds "
                          f"{sorted({s for s in seeds if seeds.count(s) > 1})}")
    n = {r.get("settings", {}).get("fixed_point", {}).get("batches") for r in results}
    batches, cosines = batch_table(results), cosine_table(results)
    rows = seed_rows(spec, batches, cosines, n.pop() if len(n) == 1 else None)
    judged = [r["seed"] for r in rows if r["set"] == "fresh" and r["stable"]]
    return {"claim": spec["claim"], "decision": spec["decision"], "runs": spec["runs"],
            "seed_sets": spec["seeds"], "seeds": rows, "verdict": verdict(spec, rows),
            "cells": cells(cosines, judged, spec["claim"]["effect"])}
