"""The frozen-blocks baseline: what a network learns when its residual blocks never do."""

from __future__ import annotations

from dataclasses import dataclass

import torch.nn.functional as F

from credit_assign.science.learning_rules.base import (
    LearningRule,
    RuleOutput,
    backprop_update,
    draw_matrix,
    error_reduction_option,
    feedback_scale_option,
    output_error,
    param_grads,
    register,
    true_signals,
)
from credit_assign.science.learning_rules.options import Options, option


@dataclass
class FrozenOptions(Options):
    embedding_signal: str = option(
        "bp", "the embedding trains by BP through the frozen blocks (`bp`) or by its DFA "
        "signal (`dfa`, \"DFA-shallow\")", choices=("bp", "dfa"))
    feedback_scale: str = feedback_scale_option()
    error_reduction: str = error_reduction_option()


@register
class Frozen(LearningRule):
    """The blocks stay at their random initialisation; embed, LN_out and head train —
    the embedding by BP through the frozen blocks (default) or by its DFA signal a_0
    ("DFA-shallow"; then feedback_scale and error_reduction apply as for DFA)."""

    name, label, color = "frozen", "frozen blocks", "0.35"
    Options = FrozenOptions

    def __init__(self, model, lam, options=None):
        super().__init__(model, lam, options)
        self.local = self.options.embedding_signal == "dfa"

    def trainable(self, model):
        return {n: p for n, p in model.named_parameters() if not n.startswith("blocks.")}

    def draw_feedback(self, model, generator):
        if self.local:
            self.feedback = [draw_matrix(model.width, model.n_classes,
                                         self.options.feedback_scale, generator)]

    def teaching_signals(self, model, cache, y):
        """The embedding's signal only: the frozen blocks receive none, so their
        alignment is not applicable (None), not the trivial cos(g, g) = 1."""
        if self.local:
            e = output_error(cache.logits, y, self.options.error_reduction)
            return [e @ self.feedback[0].T] + [None] * model.depth
        return true_signals(cache, y)[:1] + [None] * model.depth

    def update(self, model, cache, y):
        if not self.local:
            return backprop_update(self.lam, self.trainable(model), cache, y)
        signals = self.teaching_signals(model, cache, y)
        ce = F.cross_entropy(cache.logits, y)
        grads, _ = param_grads(ce + (cache.h[0] * signals[0]).sum(), self.trainable(model))
        return RuleOutput(signals, grads, ce.detach())
