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


REMADE = ["seed", "recorded_val_loss", "remade_val_loss", "recorded_free_steps",
          "remade_free_steps", "recorded_cosine", "remade_cosine"]


def remade(result: dict, recorded: dict, r: float = 0.005, nudged_steps_max: int = 500
           ) -> dict:
    """Whether a stack remade by the seeded pretraining gives back the one the first EP
    question recorded (step ep_fixed_point's result for the seed): the validation loss
    after pretraining, the free phase's steps to convergence (each batch's, joined), and
    block 0's float32 cosine to the implicit gradient from the converged state at ``r``
    and ``nudged_steps_max`` (the first question's judged cell; each a mean over the
    batches where it is defined)."""
    def mean(values):
        v = [x for x in values if x is not None]
        return sum(v) / len(v) if v else math.nan

    rec = [e["cosine"]["implicit"]["block0"] for b in recorded["batches"] for e in b["ep"]
           if e["free_steps"] == "converged" and e["nudged_steps_max"] == nudged_steps_max
           and math.isclose(e["r"], r) and "implicit" in e["cosine"]]
    new = [e["cosine"]["block0"] for b in result["batches"] for e in b.get("estimates", [])
           if e["precision"] == "float32" and e["stencil"] == "central"
           and math.isclose(e["r"], r)]
    return {"seed": result["seed"],
            "recorded_val_loss": recorded["pretrain"]["val_loss"],
            "remade_val_loss": result["pretrain"]["val_loss"],
            "recorded_free_steps": "/".join(str(b["steps"]) for b in recorded["batches"]),
            "remade_free_steps": "/".join(str(b["free"]["steps"]) for b in result["batches"]),
            "recorded_cosine": mean(rec), "remade_cosine": mean(new)}
