"""Node perturbation (NP): teaching signals estimated from the loss changes that random
perturbations of the hidden states cause; no feedback path at all."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from credit_assign.science.learning_rules.base import LocalLosses, register, train_embedding_option
from credit_assign.science.learning_rules.options import Options, option
from credit_assign.science.perturbation import node_perturbation_signals


@dataclass
class NPOptions(Options):
    sigma: float = option(
        1e-3, "size σ of the hidden-state perturbations, relative to each state's RMS per "
        "sample (σ_l = σ·RMS(h_l)): the same fraction of a state of norm 10 or 1e5, where "
        "an absolute σ in float32 would be rounding noise", exclusive_minimum=0)
    directions: int = option(16, "random directions per batch", minimum=1)
    mode: str = option("simultaneous", "all layers in one noisy pass (`simultaneous`) or "
                       "one layer per pass (`sequential`)",
                       choices=("simultaneous", "sequential"))
    train_embedding: bool = train_embedding_option()


@register
class NodePerturbation(LocalLosses):
    """a_l = forward-difference estimate of ∂CE/∂h_l (credit_assign.science.perturbation), with
    the same local losses as DFA. Its noise comes from the rule's own seeded generator."""

    name, label, color = "np", "NP", "#cc78bc"
    Options = NPOptions

    def draw_feedback(self, model, generator):
        self.generator = torch.Generator().manual_seed(
            int(torch.randint(0, 2**62, (1,), generator=generator)))

    def teaching_signals(self, model, cache, y):
        o = self.options
        return node_perturbation_signals(model, cache.x, y, o.sigma, o.directions, o.mode,
                                         self.generator)

    def state_dict(self):
        return {"feedback": [], "generator": self.generator.get_state()}

    def load_state_dict(self, state):
        self.generator.set_state(state["generator"])
