"""Learning rules behind one interface.

A rule maps (model, forward cache, target) to

* ``signals``: one teaching signal per hidden state h_0 … h_L — the rule's
  estimate of ∂CE/∂h_l, shape (N, d), or ``None`` where the rule sends none;
* ``grads``: the parameter updates, as gradient-like tensors an optimizer applies.

BP, DFA, FA and the frozen-blocks baseline are interchangeable behind it.
Diagnostics compare ``teaching_signals`` with the true gradient without being
on the training path: no rule here ever differentiates CE through a block it
does not own, except BP (whose signal *is* the true gradient).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import torch
from torch import Tensor
from torch.nn import functional as F

from credit_assign.model import Cache, ResidualMLP, branch_penalty
from credit_assign.perturbation import node_perturbation_signals

FEEDBACK_SCALES = ("unit", "fan_in")
ERROR_REDUCTIONS = ("mean", "sum")


@dataclass
class RuleOptions:
    """Choices the paper's description leaves open (docs/method.md, "Defaults"); every
    result file records them.

    feedback_scale: ``unit`` → B entries N(0, 1); ``fan_in`` → N(0, 1/cols).
    error_reduction: ``mean`` → e = (softmax − onehot)/N, as CE's mean; ``sum`` → no 1/N.
    train_embedding: DFA/FA: the embedding learns from its signal a_0 (else frozen).
    frozen_embedding_signal: ``bp`` or ``dfa``: how the frozen baseline trains its embedding.
    np_sigma, np_directions, np_mode: node perturbation's perturbation size, number of
        random directions per batch, and ``simultaneous`` or ``sequential`` passes.
    """

    feedback_scale: str = "unit"
    error_reduction: str = "mean"
    train_embedding: bool = True
    frozen_embedding_signal: str = "bp"
    np_sigma: float = 1e-3
    np_directions: int = 16
    np_mode: str = "simultaneous"

    def __post_init__(self):
        if self.feedback_scale not in FEEDBACK_SCALES:
            raise ValueError(f"feedback_scale must be one of {FEEDBACK_SCALES}")
        if self.error_reduction not in ERROR_REDUCTIONS:
            raise ValueError(f"error_reduction must be one of {ERROR_REDUCTIONS}")
        if self.frozen_embedding_signal not in ("bp", "dfa"):
            raise ValueError("frozen_embedding_signal must be 'bp' or 'dfa'")


@dataclass
class RuleOutput:
    signals: list[Tensor | None]
    grads: dict[str, Tensor]
    loss: Tensor  # CE on the batch, detached (the quantity reported as train loss)
    extras: dict = field(default_factory=dict)


def output_error(logits: Tensor, y: Tensor, reduction: str = "mean") -> Tensor:
    """e = ∂CE/∂logits = softmax − one-hot (÷ N for a mean-reduced CE). Shape (N, C)."""
    e = torch.softmax(logits.detach(), dim=1)
    e[torch.arange(len(y), device=y.device), y] -= 1.0
    return e / len(y) if reduction == "mean" else e


def draw_matrix(rows: int, cols: int, scale: str, generator: torch.Generator) -> Tensor:
    b = torch.randn(rows, cols, generator=generator)
    return b / cols**0.5 if scale == "fan_in" else b


def feedback_generator(seed: int, draw: int | None = None) -> torch.Generator:
    """Generator for feedback matrices: the trained set (draw=None) and fresh
    null draws k = 0, 1, … get independent, reproducible streams."""
    key = [seed, 0] if draw is None else [seed, 1, draw]
    state = int(np.random.SeedSequence(key).generate_state(1, dtype=np.uint64)[0] >> 1)
    return torch.Generator().manual_seed(state)


class LearningRule:
    name: ClassVar[str]
    local: ClassVar[bool]  # forward with the graph cut at block inputs

    def __init__(self, model: ResidualMLP, lam: float, options: RuleOptions | None = None):
        self.lam = float(lam)
        self.options = options or RuleOptions()
        self.feedback: list[Tensor] = []

    # -- what the optimizer sees -------------------------------------------------
    def trainable(self, model: ResidualMLP) -> dict[str, torch.nn.Parameter]:
        return dict(model.named_parameters())

    # -- the rule ---------------------------------------------------------------
    def teaching_signals(self, model: ResidualMLP, cache: Cache, y: Tensor) -> list[Tensor | None]:
        raise NotImplementedError

    def update(self, model: ResidualMLP, cache: Cache, y: Tensor) -> RuleOutput:
        raise NotImplementedError

    # -- feedback state (checkpointed with the model) ------------------------------
    def draw_feedback(self, model: ResidualMLP, generator: torch.Generator) -> None:
        """Draw this rule's fixed random feedback matrices (none for BP)."""

    def state_dict(self) -> dict:
        return {"feedback": [b.cpu() for b in self.feedback]}

    def load_state_dict(self, state: dict) -> None:
        self.feedback = list(state["feedback"])

    def to(self, device=None, dtype=None) -> LearningRule:
        self.feedback = [b.to(device=device, dtype=dtype) for b in self.feedback]
        return self


def param_grads(loss: Tensor, params: dict[str, torch.nn.Parameter], extra: list[Tensor] = ()):
    """Gradients of ``loss`` w.r.t. the named parameters (zeros where unused) and ``extra``."""
    names = list(params)
    out = torch.autograd.grad(loss, [params[n] for n in names] + list(extra), allow_unused=True)
    grads = {
        n: (g if g is not None else torch.zeros_like(params[n]))
        for n, g in zip(names, out[: len(names)])
    }
    return grads, list(out[len(names):])


class BP(LearningRule):
    """Backpropagation of CE + λ·penalty. Its signals are ∂(CE + λ·penalty)/∂h_l."""

    name, local = "bp", False

    def teaching_signals(self, model, cache, y):
        ce = F.cross_entropy(cache.logits, y)
        return [g.detach() for g in torch.autograd.grad(ce, cache.h, retain_graph=True)]

    def update(self, model, cache, y):
        ce = F.cross_entropy(cache.logits, y)
        loss = ce + self.lam * branch_penalty(cache.f) if self.lam else ce
        grads, signals = param_grads(loss, self.trainable(model), cache.h)
        return RuleOutput([s.detach() for s in signals], grads, ce.detach())


class _Local(LearningRule):
    """Shared machinery of DFA and FA: local losses from per-state signals a_l.

    Each block learns from ⟨f_l(h_{l-1}), a_l⟩ + λ‖f_l‖² with its input detached,
    the embedding from ⟨h_0, a_0⟩, LN_out and head from the true CE gradient
    (which is local to them).
    """

    local = True

    def update(self, model, cache, y):
        signals = self.teaching_signals(model, cache, y)
        ce = F.cross_entropy(cache.logits, y)  # reaches only LN_out and head
        loss = ce + sum((f_l * a_l).sum() for f_l, a_l in zip(cache.f, signals[1:]))
        if self.lam:
            loss = loss + self.lam * branch_penalty(cache.f)
        if self.options.train_embedding:
            loss = loss + (cache.h[0] * signals[0]).sum()
        grads, _ = param_grads(loss, self.trainable(model))
        return RuleOutput(signals, grads, ce.detach())

    def trainable(self, model):
        params = dict(model.named_parameters())
        if not self.options.train_embedding:
            params = {n: p for n, p in params.items() if not n.startswith("embed.")}
        return params


class DFA(_Local):
    """Direct Feedback Alignment: a_l = e B_lᵀ, B_l ∈ R^{d×C} fixed and random."""

    name = "dfa"

    def draw_feedback(self, model, generator):
        d, c = model.width, model.n_classes
        self.feedback = [
            draw_matrix(d, c, self.options.feedback_scale, generator)
            for _ in range(model.depth + 1)
        ]

    def teaching_signals(self, model, cache, y):
        e = output_error(cache.logits, y, self.options.error_reduction)
        return [e @ b.T for b in self.feedback]


class FA(_Local):
    """Sequential Feedback Alignment: a_L = e B_Lᵀ (B_L d×C), a_l = B_l a_{l+1} (B_l d×d)."""

    name = "fa"

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


class Frozen(LearningRule):
    """Baseline: the blocks stay at their random initialisation; embed, LN_out and
    head train — the embedding by BP through the frozen blocks (default) or by
    its DFA signal a_0 ("DFA-shallow")."""

    name = "frozen"

    def __init__(self, model, lam, options=None):
        super().__init__(model, lam, options)
        self.local = self.options.frozen_embedding_signal == "dfa"

    def trainable(self, model):
        return {n: p for n, p in model.named_parameters() if not n.startswith("blocks.")}

    def draw_feedback(self, model, generator):
        if self.local:
            self.feedback = [draw_matrix(model.width, model.n_classes, self.options.feedback_scale,
                                         generator)]

    def teaching_signals(self, model, cache, y):
        """The embedding's signal only: the frozen blocks receive none, so their
        alignment is not applicable (None), not the trivial cos(g, g) = 1."""
        if self.local:
            e = output_error(cache.logits, y, self.options.error_reduction)
            return [e @ self.feedback[0].T] + [None] * model.depth
        return BP.teaching_signals(self, model, cache, y)[:1] + [None] * model.depth

    def update(self, model, cache, y):
        if not self.local:
            return BP.update(self, model, cache, y)
        signals = self.teaching_signals(model, cache, y)
        ce = F.cross_entropy(cache.logits, y)
        grads, _ = param_grads(ce + (cache.h[0] * signals[0]).sum(), self.trainable(model))
        return RuleOutput(signals, grads, ce.detach())


class NodePerturbation(_Local):
    """Node perturbation: a_l = forward-difference estimate of ∂CE/∂h_l from random
    perturbations of the hidden states (no feedback path at all), same local
    losses as DFA. Its noise comes from the rule's own seeded generator."""

    name = "np"

    def draw_feedback(self, model, generator):
        self.generator = torch.Generator().manual_seed(
            int(torch.randint(0, 2**62, (1,), generator=generator)))

    def teaching_signals(self, model, cache, y):
        o = self.options
        return node_perturbation_signals(model, cache.x, y, o.np_sigma, o.np_directions,
                                         o.np_mode, self.generator)

    def state_dict(self):
        return {"feedback": [], "generator": self.generator.get_state()}

    def load_state_dict(self, state):
        self.generator.set_state(state["generator"])


RULES: dict[str, type[LearningRule]] = {r.name: r for r in (BP, DFA, FA, Frozen, NodePerturbation)}


def make_rule(
    method: str,
    model: ResidualMLP,
    lam: float,
    options: RuleOptions | None = None,
    generator: torch.Generator | None = None,
) -> LearningRule:
    """Build a rule and draw its feedback matrices from ``generator``."""
    if method not in RULES:
        raise ValueError(f"unknown learning rule {method!r}; known: {sorted(RULES)}")
    if lam < 0:
        raise ValueError(f"penalty λ must be >= 0, got {lam}")
    rule = RULES[method](model, lam, options)
    rule.draw_feedback(model, generator if generator is not None else torch.Generator())
    p = next(model.parameters())
    return rule.to(p.device, p.dtype)
