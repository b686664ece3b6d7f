"""Direct Feedback Alignment (DFA): the output error sent to every hidden state through
its own fixed random matrix."""

from __future__ import annotations

from credit_assign.science.learning_rules.base import (
    FeedbackOptions,
    LocalLosses,
    draw_matrix,
    output_error,
    register,
)


@register
class DFA(LocalLosses):
    """a_l = e B_lᵀ, B_l ∈ R^{d×C} fixed and random, one per hidden state h_0 … h_L."""

    name, label, color = "dfa", "DFA", "#d55e00"
    Options = FeedbackOptions
    probed = True

    def draw_feedback(self, model, generator):
        d, c = model.width, model.n_classes
        self.feedback = [
            draw_matrix(d, c, self.options.feedback_scale, generator)
            for _ in range(model.depth + 1)
        ]

    def teaching_signals(self, model, cache, y):
        e = output_error(cache.logits, y, self.options.error_reduction)
        return [e @ b.T for b in self.feedback]
