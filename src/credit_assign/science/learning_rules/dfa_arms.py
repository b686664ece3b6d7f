"""The dose-response study's arms (config/claims_dose.yaml, issue #56): DFA with one thing
changed, each moving one candidate for what carries the penalty's rescue and holding the
other.

``dfa_cap``: the branches' norm bounded without the penalty's pull towards −a_l/(2λ).
``dfa_redraw``: the penalty kept, with no feedback matrix lasting long enough to be
aligned to.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from credit_assign.science.learning_rules.base import (
    FeedbackOptions,
    LocalLosses,
    draw_matrix,
    output_error,
    register,
)
from credit_assign.science.learning_rules.options import option


class _DFA(LocalLosses):
    """DFA as science/learning_rules/dfa.py has it (a rule module stands alone: the two are
    compared step for step by tests/test_dose_arms.py)."""

    def draw_feedback(self, model, generator):
        d, c = model.width, model.n_classes
        self.feedback = [draw_matrix(d, c, self.options.feedback_scale, generator)
                         for _ in range(model.depth + 1)]

    def teaching_signals(self, model, cache, y):
        e = output_error(cache.logits, y, self.options.error_reduction)
        return [e @ b.T for b in self.feedback]


@dataclass
class CapOptions(FeedbackOptions):
    cap: float = option(50.0, "the largest median ‖f_l‖ over a step's batch: before each "
                        "step a block's output layer is scaled down to it where above",
                        exclusive_minimum=0)


@register
class DFACap(_DFA):
    """DFA at λ = 0 whose residual branches are held at a norm: before every optimizer
    step, a block whose median ‖f_l‖ over the step's batch exceeds ``cap`` has its output
    layer (W2, b2) scaled by cap / median, and the step's gradient is taken at the scaled
    weights (the forward is run again). A max-norm constraint: it bounds the branch without
    adding a force towards any direction, where the penalty pulls f_l towards −a_l/(2λ).
    Under AdamW the scaled weights take steps of the same size, so the cap also changes
    the branches' relative step size (config/claims_dose.yaml says so)."""

    name, label, color = "dfa_cap", "DFA, capped branches", "#cc79a7"
    Options = CapOptions
    probed = False

    def __init__(self, model, lam, options=None):
        super().__init__(model, lam, options)
        if self.lam:
            raise ValueError(f"rule dfa_cap runs at λ = 0 (the cap replaces the penalty); "
                             f"got λ = {self.lam:g}")

    def update(self, model, cache, y):
        scaled = False
        with torch.no_grad():  # block by block: scaling f_l moves the input of l + 1
            h = cache.h[0]
            for block in model.blocks:
                f_l = block(h)
                median = float(f_l.norm(dim=1).median())
                if median > self.options.cap:
                    s = self.options.cap / median
                    block.fc2.weight.mul_(s)
                    block.fc2.bias.mul_(s)
                    f_l, scaled = f_l * s, True
                h = h + f_l
        if scaled:
            cache = model(cache.x, local=self.local)
        return super().update(model, cache, y)


@dataclass
class RedrawOptions(FeedbackOptions):
    redraw_every: int = option(1, "every B_l is drawn anew every this many optimizer steps",
                               minimum=1)


@register
class DFARedraw(_DFA):
    """DFA whose feedback matrices B_0 … B_L are all drawn anew every ``redraw_every``
    optimizer steps, from a stream of the run's own (its feedback generator's first draw
    after the initial B: reproducible, and a resumed run draws the same). A signal then
    points along a matrix that is gone by the time a block could align to it; the penalty
    acts as in DFA."""

    name, label, color = "dfa_redraw", "DFA, B redrawn", "#009e73"
    Options = RedrawOptions
    probed = False

    def draw_feedback(self, model, generator):
        super().draw_feedback(model, generator)
        self.stream = int(torch.randint(0, 2**62, (1,), generator=generator))
        self.steps = 0

    def update(self, model, cache, y):
        if self.steps and self.steps % self.options.redraw_every == 0:
            draw = self.steps // self.options.redraw_every
            state = np.random.SeedSequence([self.stream, draw]).generate_state(1, np.uint64)
            g = torch.Generator().manual_seed(int(state[0] >> 1))
            like = self.feedback[0]
            self.feedback = [
                draw_matrix(*b.shape, self.options.feedback_scale, g).to(like)
                for b in self.feedback
            ]
        self.steps += 1
        return super().update(model, cache, y)

    def state_dict(self):
        return {**super().state_dict(), "stream": self.stream, "steps": self.steps}

    def load_state_dict(self, state):
        super().load_state_dict(state)
        self.stream, self.steps = int(state["stream"]), int(state["steps"])
