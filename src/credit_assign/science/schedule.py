"""The optimiser side of a run's training block (credit_assign.planning.method_training's
``method_training``): the learning-rate schedule and which parameters AdamW decays.
Plain functions (no torch at import); credit_assign.science.training calls them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any


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
