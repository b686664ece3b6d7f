"""A toy learning rule, as a newcomer would add one (docs/adding-a-rule.md): DFA with one
feedback matrix shared by every hidden state. The test suite copies this file into
src/credit_assign/science/learning_rules/ of a workflow copy and runs it through the
workflow; nothing else in the repository is changed."""

from __future__ import annotations

from dataclasses import dataclass

from credit_assign.science.learning_rules.base import (
    LocalLosses,
    draw_matrix,
    output_error,
    register,
)
from credit_assign.science.learning_rules.options import Options, option


@dataclass
class SharedOptions(Options):
    scale: float = option(1.0, "factor on the shared feedback matrix", exclusive_minimum=0)
    train_embedding: bool = option(True, "the embedding learns from its signal a_0")


@register
class SharedFeedback(LocalLosses):
    """a_l = scale · e Bᵀ for every hidden state l, one fixed random B ∈ R^{d×C}."""

    name, label, color = "shared", "shared-B DFA", "#ca9161"
    Options = SharedOptions

    def draw_feedback(self, model, generator):
        self.feedback = [draw_matrix(model.width, model.n_classes, "unit", generator)]

    def teaching_signals(self, model, cache, y):
        a = self.options.scale * output_error(cache.logits, y) @ self.feedback[0].T
        return [a] * (model.depth + 1)
