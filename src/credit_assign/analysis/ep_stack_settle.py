"""When an EP estimate's free phase counts as *settled* (config ``ep_stack.settle``,
docs/method.md "EP stack probe"). Pure Python: the summary reads it, the figure and the
paper read the flags it leaves in the tables.

An estimate (one seed, probe batch and free-phase length T1) is settled when both hold:

* its free-phase residual ρ = ‖εF(z*)‖/‖z*‖ is below ``max_drift / T2max``. ρ is the
  relative distance one relaxation step still moves z*. EP reads the nudged phases as a
  response around a fixed z* (the AEP correction is even linearised there); a state
  that still moves drifts by at most T2max·ρ over the nudged phases (while the free
  phase's steps shrink), and the estimate's relative error is first order in that
  drift. ``max_drift: 0.01`` allows a drift of 1 % of ‖z*‖ over the whole nudged phase:
  ρ < 0.01/120 ≈ 8e-5 at the seed's T2max = 120. The bound comes from the probe's own
  settings, not from any measured residual.
* its hindsight-selected t_best lies beyond the first comparison point, 2 × check_every
  (the first reading has no predecessor, so the first increment is taken at the second).
  An estimate kept at the first comparison (or none, t_best = 0) means the increments
  only grew from there: the nudged phases ran away at once, the signature of a free
  phase that had not reached a fixed point.

A seed is settled at a T1 when every one of its probe batches is.
"""

from __future__ import annotations

DEFAULTS = {"max_drift": 0.01, "t_best_after": None}


def thresholds(probe: dict, settle: dict | None = None) -> dict[str, float]:
    """{"max_residual", "t_best_after"} for a probe run with ``probe`` settings
    (``nudged_steps_max``, ``check_every``) under the criterion ``settle``."""
    s = {**DEFAULTS, **(settle or {})}
    after = s["t_best_after"]
    return {"max_residual": s["max_drift"] / probe["nudged_steps_max"],
            "t_best_after": 2 * probe["check_every"] if after is None else after}


def flags(residual: float, t_best: float, limits: dict) -> dict[str, bool]:
    """The criterion on one estimate: each half (the reasons) and both together."""
    residual_ok = bool(residual < limits["max_residual"])
    t_best_ok = bool(t_best > limits["t_best_after"])
    return {"residual_ok": residual_ok, "t_best_ok": t_best_ok,
            "settled": residual_ok and t_best_ok}


def failed(row) -> list[str]:
    """Why an estimate or a seed is unsettled: the halves of the criterion it fails ([]
    when settled), by the names its flags carry, ``residual`` and ``t_best``."""
    return [name for name in ("residual", "t_best") if not row[f"{name}_ok"]]
