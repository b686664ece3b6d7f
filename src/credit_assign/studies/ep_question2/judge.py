"""The second EP question judged by its plan (config/claims_ep2.yaml): per fresh seed,
whether it has a stable fixed point (as the first question reads it:
analysis.ep_question.stability), why not where not — ``diverged`` (pretraining left the
finite numbers), ``not_converged``, ``unstable``, ``no_reference`` (the float64
refinement or its adjoint solve fell short of the plan's tolerances) — and its effect:
the mean over its probe batches of block 0's cosine in the judged cell. The verdict: the
Student-t interval of the mean effect over the judged seeds against the threshold;
undecided, with the reason, where it straddles or fewer than min_seeds seeds are judged.
Every seed is named with its outcome; the cells beside the judged one are summarised,
never judged. Plain data.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from credit_assign.analysis.claims import decide, t_interval
from credit_assign.analysis.ep_question import stability

KEYS = ("precision", "r", "nudged_steps_max")


class JudgeError(ValueError):
    """Results the plan cannot be applied to as written, named."""


def _key(cell: dict) -> tuple:
    return (cell["precision"], float(cell["r"]), int(cell["nudged_steps_max"]))


def batch_rows(result: dict) -> list[dict]:
    """One row per probe batch: the free phase, the leading eigenvalue, the reference."""
    rows = []
    for b in result["batches"]:
        lead = b["eigenvalues"][0] if b["eigenvalues"] else {"real": math.nan,
                                                             "imag": math.nan}
        ref = b.get("reference") or {}
        rows.append({"seed": result["seed"], "batch": b["batch"],
                     "converged": b["free"]["converged"], "steps": b["free"]["steps"],
                     "residual": b["free"]["residual"],
                     "leading_real": math.nan if lead["real"] is None else lead["real"],
                     "leading_imag": math.nan if lead["imag"] is None else lead["imag"],
                     "adjoint_residual": ref.get("adjoint_residual", math.nan),
                     "reference_residual": ref.get("residual", math.nan),
                     "reference_converged": ref.get("converged", False)})
    return rows


def cosine_rows(result: dict) -> list[dict]:
    """One row per (batch, cell, parameter group): EP's cosine to the implicit gradient."""
    rows = []
    for b in result["batches"]:
        for e in b.get("estimates", []):
            for group, cos in e["cosine"].items():
                rows.append({"seed": result["seed"], "batch": b["batch"],
                             **{k: e[k] for k in KEYS}, "group": group,
                             "cosine": math.nan if cos is None else float(cos),
                             "nudge_ulps_block0": e["nudge_ulps_block0"]})
    return rows


def seed_row(plan: dict, result: dict) -> dict:
    """One fresh seed: its outcome and, where judged, its effect and per-batch values."""
    seed, n = result["seed"], result["settings"]["fixed_point"]["batches"]
    base = {"seed": seed, "val_loss": result["pretrain"]["val_loss"], "effect": None,
            "per_batch": [], "max_leading_real": None, "max_adjoint_residual": None}
    if result.get("diverged"):
        return {**base, "stable": False, "reason": "diverged", "detail": result["diverged"]}
    batches = pd.DataFrame(batch_rows(result))
    ids = batches.batch.tolist()
    if len(set(ids)) != len(ids) or len(ids) != n:
        raise JudgeError(f"EP question 2: seed {seed} has batches {sorted(ids)}, not {n} "
                         "distinct ones")
    s = stability(batches)[seed]
    row = {**base, "stable": s["stable"], "reason": s["reason"], "detail": None,
           "max_leading_real": s["max_leading_real"],
           "max_adjoint_residual": s["max_adjoint_residual"]}
    if not s["stable"]:
        return row
    accept = plan["no_stable_fixed_point"]
    short = batches[~(batches.reference_residual < accept["reference_residual"])
                    | ~(batches.adjoint_residual < accept["adjoint_residual"])]
    if len(short):
        return {**row, "stable": False, "reason": "no_reference",
                "detail": f"batches {short.batch.tolist()}"}
    cos = pd.DataFrame(cosine_rows(result))
    judged = _key(plan["estimator"]["judged"])
    at = cos[(cos.group == plan["claim"]["group"])
             & cos.apply(lambda r: _key(r) == judged, axis=1)].sort_values("batch")
    values = at.cosine.to_numpy(float)
    if len(values) != n or not np.all(np.isfinite(values)):
        raise JudgeError(f"EP question 2: seed {seed} has a stable fixed point but no "
                         f"finite block 0 cosine in the judged cell on every batch "
                         f"({values.tolist()}): the plan defines no effect for it")
    return {**row, "effect": float(values.mean()),
            "per_batch": [{"batch": int(b), "cosine": float(c)}
                          for b, c in zip(at.batch, values, strict=True)]}


def verdict(plan: dict, rows: list[dict], waiting: list[int]) -> dict:
    """The plan's decision over the judged seeds; undecided while a fresh seed's run is
    still to be made (``waiting``), or where fewer than min_seeds are judged."""
    d, claim = plan["decision"], plan["claim"]
    judged = [r["effect"] for r in rows if r["effect"] is not None]
    out = {"id": claim["id"], "threshold": claim["threshold"], "side": claim["side"],
           "confidence": d["confidence"], "n_fresh": len(plan["seeds"]["fresh"]),
           "n_judged": len(judged), "waiting": waiting,
           "not_judged": [{"seed": r["seed"], "reason": r["reason"]} for r in rows
                       if r["effect"] is None],
           "mean": float(np.mean(judged)) if judged else None,
           "low": None, "high": None, "verdict": "undecided", "reason": None}
    if waiting:
        out["reason"] = "runs_waiting"
        return out
    if len(judged) < d["min_seeds"]:
        out["reason"] = "no_stable_fixed_point"
        return out
    out["low"], out["high"] = t_interval(judged, d["confidence"])
    out["verdict"], out["reason"] = decide(out["low"], out["high"], {"claim": claim})
    return out


def beside(plan: dict, results: list[dict], rows: list[dict]) -> list[dict]:
    """Block 0's cosine in every cell over the judged seeds (each seed's mean over its
    batches, then their mean, min and max): shown beside, never judged."""
    seeds = [r["seed"] for r in rows if r["effect"] is not None]
    cos = pd.DataFrame([c for res in results for c in cosine_rows(res)])
    out = []
    for cell in [plan["estimator"]["judged"], *plan["estimator"]["beside"]]:
        if cos.empty:
            break
        at = cos[(cos.group == plan["claim"]["group"]) & cos.seed.isin(seeds)
                 & cos.apply(lambda r, c=cell: _key(r) == _key(c), axis=1)]
        means = at.groupby("seed").cosine.mean().to_numpy(float)
        out.append({**{k: cell[k] for k in KEYS}, "judged": cell is plan["estimator"]["judged"],
                    "n": len(means),
                    "mean": float(means.mean()) if len(means) else None,
                    "min": float(means.min()) if len(means) else None,
                    "max": float(means.max()) if len(means) else None,
                    "nudge_ulps_block0": float(at.nudge_ulps_block0.median())
                    if len(at) else None})
    return out


def findings(plan: dict, results: list[dict]) -> dict:
    """Everything the page says about the second question, as data."""
    seeds = [r["seed"] for r in results]
    if len(set(seeds)) != len(seeds):
        raise JudgeError(f"EP question 2: more than one result for seeds {sorted(seeds)}")
    stray = sorted(set(seeds) - set(plan["seeds"]["fresh"]))
    if stray:
        raise JudgeError(f"EP question 2: results for seeds {stray}, not the plan's")
    by_seed = {r["seed"]: r for r in results}
    rows = [seed_row(plan, by_seed[s]) for s in plan["seeds"]["fresh"] if s in by_seed]
    waiting = [s for s in plan["seeds"]["fresh"] if s not in by_seed]
    return {"claim": plan["claim"], "decision": plan["decision"],
            "estimator": plan["estimator"], "seeds": rows, "waiting": waiting,
            "verdict": verdict(plan, rows, waiting), "cells": beside(plan, results, rows)}


def seed_table(findings_: dict) -> pd.DataFrame:
    """Per seed, one row: outcome, leading Re λ, effect and each batch's cosine."""
    rows = []
    for r in findings_["seeds"]:
        row = {k: r[k] for k in ("seed", "stable", "reason", "max_leading_real",
                                 "max_adjoint_residual", "effect")}
        row.update({f"batch{b['batch']}": b["cosine"] for b in r["per_batch"]})
        rows.append(row)
    return pd.DataFrame(rows)
