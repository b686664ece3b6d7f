"""Feedback Alignment (FA): the output error carried down the layers, one fixed random
matrix per step, in place of the transposed forward weights."""

from __future__ import annotations

from credit_assign.rules.base import (
    FeedbackOptions,
    LocalLosses,
    draw_matrix,
    output_error,
    register,
)


@register
class FA(LocalLosses):
    """a_L = e B_Lᵀ (B_L d×C), a_l = a_{l+1} B_lᵀ (B_l d×d), fixed and random."""

    name, label, color = "fa", "FA", "#029e73"
    Options = FeedbackOptions
    probed = True

    def draw_feedback(self, model, generator):
        d, c, scale = model.width, model.n_classes, self.options.feedback_scale
        self.feedback = [draw_matrix(d, d, scale, generator) for _ in range(model.depth)]
        self.feedback.append(draw_matrix(d, c, scale, generator))

    def teaching_signals(self, model, cache, y):
        e = output_error(cache.logits, y, self.options.error_reduction)
        signals = [e @ self.feedback[-1].T]
        for b in reversed(self.feedback[:-1]):
            signals.insert(0, signals[0] @ b.T)
        return signals
