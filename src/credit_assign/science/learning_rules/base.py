"""The interface every learning rule implements, and the pieces rules share.

A rule maps (model, forward cache, target) to

* ``signals``: one teaching signal per hidden state h_0 … h_L — the rule's
  estimate of ∂CE/∂h_l, shape (N, d), or ``None`` where the rule sends none;
* ``grads``: the parameter updates, as gradient-like tensors an optimizer applies.

Every rule is interchangeable behind it. Diagnostics compare ``teaching_signals``
with the true gradient without being on the training path: no rule ever
differentiates CE through a block it does not own, except BP (whose signal *is* the
true gradient).

A rule is one module of this package (docs/adding-a-rule.md): a :class:`LearningRule`
subclass marked ``@register``, with its name, label, colour and options.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import torch
from torch import Tensor
from torch.nn import functional as F

from credit_assign.science.learning_rules.options import Options, option
from credit_assign.science.model import Cache, ResidualMLP, branch_penalty


@dataclass
class RuleOutput:
    signals: list[Tensor | None]
    grads: dict[str, Tensor]
    loss: Tensor  # CE on the batch, detached (the quantity reported as train loss)
    extras: dict = field(default_factory=dict)


class LearningRule:
    """What a rule declares (class attributes) and implements (methods).

    name: the method's name in the config (``sweep.<name>``, ``methods.<name>``) and in
        result paths; lower case letters, digits and ``_``.
    label, color: how figures and the paper show it (any matplotlib colour).
    Options: its options dataclass (:mod:`credit_assign.science.learning_rules.options`), the
        ``methods.<name>`` block of the config; every result records them.
    local: forward with the graph cut at block inputs (no gradient crosses a block).
    probed: the alignment probes measure this rule's signal on every trained network,
        beside the rule the network was trained with.
    """

    name: ClassVar[str]
    label: ClassVar[str]
    color: ClassVar[str]
    Options: ClassVar[type[Options]] = Options
    local: ClassVar[bool] = False
    probed: ClassVar[bool] = False

    def __init__(self, model: ResidualMLP, lam: float, options: Options | None = None):
        self.lam = float(lam)
        self.options = options if options is not None else self.Options()
        if not isinstance(self.options, self.Options):
            raise TypeError(f"rule {self.name!r} takes {self.Options.__name__}, "
                            f"got {type(self.options).__name__}")
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
        """Draw this rule's fixed random state (feedback matrices; none for BP)."""

    def state_dict(self) -> dict:
        return {"feedback": [b.cpu() for b in self.feedback]}

    def load_state_dict(self, state: dict) -> None:
        self.feedback = list(state["feedback"])

    def to(self, device=None, dtype=None) -> LearningRule:
        self.feedback = [b.to(device=device, dtype=dtype) for b in self.feedback]
        return self


# ---- the registry ------------------------------------------------------------------
_REGISTRY: dict[str, type[LearningRule]] = {}


def register(cls: type[LearningRule]) -> type[LearningRule]:
    """Class decorator: make a rule known to the pipeline under ``cls.name``."""
    for attr in ("name", "label", "color"):
        if not isinstance(getattr(cls, attr, None), str):
            raise TypeError(f"{cls.__module__}.{cls.__qualname__}: a registered rule "
                            f"declares {attr} as a string")
    if not cls.name.replace("_", "").isalnum() or not cls.name[0].isalpha() \
            or cls.name != cls.name.lower():
        raise ValueError(f"rule name {cls.name!r}: lower-case letters, digits and _, "
                         "starting with a letter")
    if not (isinstance(cls.Options, type) and issubclass(cls.Options, Options)):
        raise TypeError(f"rule {cls.name!r}: Options must subclass "
                        "credit_assign.science.learning_rules.options.Options")
    other = _REGISTRY.get(cls.name)
    where = (cls.__module__, cls.__qualname__)
    if other is not None and (other.__module__, other.__qualname__) != where:
        raise ValueError(f"two rules are named {cls.name!r}: {other.__module__}."
                         f"{other.__qualname__} and {cls.__module__}.{cls.__qualname__}")
    _REGISTRY[cls.name] = cls
    return cls


# ---- pieces several rules use --------------------------------------------------------
FEEDBACK_SCALES = ("unit", "fan_in")
ERROR_REDUCTIONS = ("mean", "sum")


def feedback_scale_option():
    return option("unit", "feedback entries N(0, 1) (`unit`) or N(0, 1/columns) (`fan_in`)",
                  choices=FEEDBACK_SCALES)


def error_reduction_option():
    return option("mean", "output error e = (softmax − onehot)/N (`mean`, as CE) or without "
                  "1/N (`sum`)",
                  choices=ERROR_REDUCTIONS)


def train_embedding_option():
    return option(True, "the embedding learns from its signal a_0 (else it stays at init)")


@dataclass
class FeedbackOptions(Options):
    """Options of a rule that sends the output error back through random matrices."""

    feedback_scale: str = feedback_scale_option()
    error_reduction: str = error_reduction_option()
    train_embedding: bool = train_embedding_option()


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


def param_grads(loss: Tensor, params: dict[str, torch.nn.Parameter], extra: list[Tensor] = ()):
    """Gradients of ``loss`` w.r.t. the named parameters (zeros where unused) and ``extra``."""
    names = list(params)
    out = torch.autograd.grad(loss, [params[n] for n in names] + list(extra), allow_unused=True)
    grads = {
        n: (g if g is not None else torch.zeros_like(params[n]))
        for n, g in zip(names, out[: len(names)], strict=True)
    }
    return grads, list(out[len(names):])


def true_signals(cache: Cache, y: Tensor) -> list[Tensor]:
    """∂CE/∂h_l for every hidden state: BP's teaching signals."""
    ce = F.cross_entropy(cache.logits, y)
    return [g.detach() for g in torch.autograd.grad(ce, cache.h, retain_graph=True)]


def backprop_update(lam: float, params: dict[str, torch.nn.Parameter], cache: Cache,
                    y: Tensor) -> RuleOutput:
    """Backpropagation of CE + λ·penalty into ``params``; the signals are ∂/∂h_l of it."""
    ce = F.cross_entropy(cache.logits, y)
    loss = ce + lam * branch_penalty(cache.f) if lam else ce
    grads, signals = param_grads(loss, params, cache.h)
    return RuleOutput([s.detach() for s in signals], grads, ce.detach())


class LocalLosses(LearningRule):
    """Training from per-state signals a_l, without backpropagation through blocks:
    each block learns from ⟨f_l(h_{l-1}), a_l⟩ + λ‖f_l‖² with its input detached, the
    embedding from ⟨h_0, a_0⟩, LN_out and head from the true CE gradient (which is local
    to them). A subclass supplies ``teaching_signals``; its Options carry
    ``train_embedding``.
    """

    local = True

    def update(self, model, cache, y):
        signals = self.teaching_signals(model, cache, y)
        logits, f = self.local_outputs(model, cache)
        ce = F.cross_entropy(logits, y)  # reaches only LN_out and head
        local = zip(f, signals[1:], strict=True)  # block l: f_l and a_l
        loss = ce + sum((f_l * a_l).sum() for f_l, a_l in local)
        if self.lam:
            loss = loss + self.lam * branch_penalty(f)
        if self.options.train_embedding:
            loss = loss + (cache.h[0] * signals[0]).sum()
        grads, _ = param_grads(loss, self.trainable(model))
        return RuleOutput(signals, grads, ce.detach())

    def local_outputs(self, model, cache):
        """(logits, the blocks' outputs f_l) whose graphs the update differentiates: the
        forward's own (each block's input detached by the local forward), so that a block
        learns through its true weights. A rule whose blocks learn through other matrices
        (standard FA) recomputes them with its own backward."""
        return cache.logits, cache.f

    def trainable(self, model):
        params = dict(model.named_parameters())
        if not self.options.train_embedding:
            params = {n: p for n, p in params.items() if not n.startswith("embed.")}
        return params
