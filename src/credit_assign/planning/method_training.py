"""The training block of one run: the config's ``training`` with its method's overrides
(``method_training``). A pure function of the config, parsed with it: the workflow
(credit_assign.planning.params' run config) and the compute estimate
(credit_assign.planning.estimate) call the same code. What the training does with the
block (the lr schedule, which parameters AdamW decays) is credit_assign.science.schedule.
"""

from __future__ import annotations

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
