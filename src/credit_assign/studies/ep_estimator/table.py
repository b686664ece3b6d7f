"""The precision study's results as one table: a row per (seed, probe batch, precision,
stencil, r, parameter group) with EP's cosine to the float64 implicit gradient, and
block 0's nudge in float32 units beside. Pure: reads result dicts (step ep_estimator's
JSON, ep_stack.estimator.SCHEMA)."""

from __future__ import annotations

import math

import pandas as pd

COLUMNS = ["seed", "batch", "precision", "stencil", "r", "group", "cosine",
           "one_minus_cos", "nudge_ulps_block0", "free_residual", "reference_residual",
           "adjoint_residual"]


def rows(result: dict) -> list[dict]:
    """One result's rows; a batch whose free phase did not converge gives none (it has
    no fixed point to estimate the gradient of: counted by ``unconverged``)."""
    out = []
    for b in result["batches"]:
        ref = b.get("reference")
        for e in b.get("estimates", []):
            for group, cos in e["cosine"].items():
                c = math.nan if cos is None else float(cos)
                out.append({"seed": result["seed"], "batch": b["batch"],
                            "precision": e["precision"], "stencil": e["stencil"],
                            "r": float(e["r"]), "group": group, "cosine": c,
                            "one_minus_cos": 1.0 - c,
                            "nudge_ulps_block0": e["nudge_ulps_block0"],
                            "free_residual": b["free"]["residual"],
                            "reference_residual": ref["residual"],
                            "adjoint_residual": ref["adjoint_residual"]})
    return out


def unconverged(result: dict) -> int:
    """Probe batches whose float32 free phase did not converge within its cap."""
    return sum(not b["free"]["converged"] for b in result["batches"])


def table(results: list[dict]) -> pd.DataFrame:
    """Every result's rows, in one frame with COLUMNS."""
    return pd.DataFrame([r for res in results for r in rows(res)], columns=COLUMNS)


def per_seed(frame: pd.DataFrame, group: str = "block0") -> pd.DataFrame:
    """Each seed's mean 1 − cos over its probe batches, per (precision, stencil, r), in
    ``group``, with block 0's median nudge in float32 units."""
    d = frame[frame.group == group]
    return (d.groupby(["seed", "precision", "stencil", "r"], as_index=False)
            .agg(one_minus_cos=("one_minus_cos", "mean"),
                 nudge_ulps_block0=("nudge_ulps_block0", "median"),
                 batches=("batch", "nunique")))
