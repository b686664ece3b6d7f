"""Backpropagation (BP): the control every other rule is measured against."""

from __future__ import annotations

from credit_assign.science.learning_rules.base import (
    LearningRule,
    backprop_update,
    register,
    true_signals,
)


@register
class BP(LearningRule):
    """Backpropagation of CE + λ·penalty. Its signals are ∂(CE + λ·penalty)/∂h_l; its
    teaching signals (what the diagnostics compare) are ∂CE/∂h_l."""

    name, label, color = "bp", "BP", "#0173b2"
    probed = True

    def teaching_signals(self, model, cache, y):
        return true_signals(cache, y)

    def update(self, model, cache, y):
        return backprop_update(self.lam, self.trainable(model), cache, y)
