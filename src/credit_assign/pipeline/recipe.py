"""The training recipe of one run: per-method overrides, the learning-rate schedule and
which parameters AdamW decays. Pure functions of the config (no torch at import), so
the workflow (``run_config`` in common.smk) and the tests call the same code.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

# Recipe keys added after the first results were published. A run records them only
# when they depart from their default, so the results of a config that does not use
# them keep their bytes (metrics.json records the run's recipe in its config block).
LATER_KEYS = {"schedule": "cosine", "decay": "all"}


def method_training(training: dict[str, Any], method: str) -> dict[str, Any]:
    """The training block a run of ``method`` uses: the config's ``training`` with that
    method's ``training.per_method`` entry laid over it (the authors' BP and DFA runs
    came from different scripts: a recipe may differ per method)."""
    out = {k: v for k, v in training.items() if k != "per_method"}
    out.update((training.get("per_method") or {}).get(method, {}))
    for key, default in LATER_KEYS.items():
        if out.get(key, default) == default:
            out.pop(key, None)
    return out


def cosine(total_steps: int) -> Callable[[int], float]:
    """lr multiplier of a cosine from 1 to 0 over ``total_steps`` scheduler steps."""
    return lambda step: 0.5 * (1.0 + math.cos(math.pi * min(step, total_steps) / total_steps))


def lr_schedule(training: dict[str, Any], batches_per_epoch: int
                ) -> tuple[Callable[[int], float], bool]:
    """(multiplier of the scheduler step, whether the scheduler steps every batch).

    * ``schedule: cosine``, ``schedule_step: batch`` — cosine over every batch of the run
      (the default);
    * ``schedule_step: epoch`` — cosine over the epochs, stepped once per epoch;
    * ``schedule_step: epoch_slip`` — the period counted in batches but the scheduler
      stepped once per epoch: the lr falls only to cos(π/batches_per_epoch·…) ≈ its
      start, a common slip that leaves the lr almost constant;
    * ``schedule: constant`` — the lr never changes.
    """
    epochs = training["epochs"]
    if training.get("schedule", "cosine") == "constant":
        return (lambda step: 1.0), True
    step = training["schedule_step"]
    if step == "batch":
        return cosine(epochs * batches_per_epoch), True
    if step == "epoch":
        return cosine(epochs), False
    if step == "epoch_slip":
        return cosine(epochs * batches_per_epoch), False
    raise ValueError(f"training.schedule_step must be batch, epoch or epoch_slip, got {step!r}")


def no_decay(name: str) -> bool:
    """LayerNorm gains and biases, and every linear layer's bias: the parameters that
    ``decay: weights`` leaves out of AdamW's weight decay."""
    module = name.rsplit(".", 1)[0].rsplit(".", 1)[-1]  # blocks.0.norm.weight -> norm
    return name.endswith(".bias") or module.startswith("norm")


def param_groups(params: dict[str, Any], training: dict[str, Any]) -> list[dict] | list:
    """What AdamW gets: every parameter decayed (``decay: all``, the default, as torch's
    AdamW does with one group), or the matrices only (``decay: weights``)."""
    if training.get("decay", "all") == "all":
        return list(params.values())
    return [{"params": [p for n, p in params.items() if not no_decay(n)]},
            {"params": [p for n, p in params.items() if no_decay(n)], "weight_decay": 0.0}]
