"""Measurements that compare a rule with the true gradient. Never on the training path."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from torch import Tensor
from torch.nn import functional as F

from credit_assign.model import ResidualMLP
from credit_assign.rules import LearningRule, feedback_generator, make_rule


def per_sample_cosine(u: Tensor, v: Tensor) -> float:
    """Mean over samples of cos(u_i, v_i), for (N, d) tensors.

    Rows where either vector is exactly zero have no direction and are left out;
    no epsilon is added to the denominator (an epsilon would make the cosine
    depend on magnitude — DFA's deep gradients reach ~1e-10). Computed in
    float64 so tiny norms neither underflow nor lose digits. NaN if no row is left.
    """
    u, v = u.double(), v.double()
    den = torch.linalg.vector_norm(u, dim=1) * torch.linalg.vector_norm(v, dim=1)
    valid = den > 0
    if not bool(valid.any()):
        return math.nan
    return ((u * v).sum(dim=1)[valid] / den[valid]).mean().item()


def median_norm(t: Tensor) -> float:
    return torch.linalg.vector_norm(t.double(), dim=1).median().item()


def true_hidden_grads(model: ResidualMLP, x: Tensor, y: Tensor):
    """g_l = ∂CE/∂h_l for l = 0 … L by autograd (CE mean over the batch), plus the cache."""
    with torch.enable_grad():
        cache = model(x, local=False)
        ce = F.cross_entropy(cache.logits, y)
        grads = torch.autograd.grad(ce, cache.h, retain_graph=True)
    return [g.detach() for g in grads], cache, ce.detach()


def deep_cosine(cosines: list[float | None]) -> float | None:
    """Mean of cos_l over the blocks l = 1 … L (the embedding l = 0 is left out). None
    — not applicable — when no block receives a teaching signal (the frozen baseline);
    NaN when signals exist but no cosine is defined."""
    if all(c is None for c in cosines[1:]):
        return None
    deep = [c for c in cosines[1:] if c is not None and not math.isnan(c)]
    return float(np.mean(deep)) if deep else math.nan


def alignment(rule: LearningRule, model: ResidualMLP, x: Tensor, y: Tensor,
              grads=None) -> dict:
    """Per-layer cosine of the rule's teaching signal with the true gradient, and norms."""
    if grads is None:
        grads, cache, _ = true_hidden_grads(model, x, y)
    else:
        grads, cache = grads
    with torch.enable_grad():
        signals = rule.teaching_signals(model, cache, y)
    cosines = [per_sample_cosine(a, g) if a is not None else None for a, g in zip(signals, grads)]
    return {
        "cosine": cosines,
        "deep_cosine": deep_cosine(cosines),
        "grad_norm_median": [median_norm(g) for g in grads],
        "signal_norm_median": [median_norm(a) if a is not None else None for a in signals],
        "h_norm_median": [median_norm(h.detach()) for h in cache.h],
        "branch_norm_median": [median_norm(f.detach()) for f in cache.f],
    }


@torch.no_grad()
def accuracy_and_loss(model: ResidualMLP, batches) -> tuple[float, float]:
    correct, loss, n = 0, 0.0, 0
    for x, y in batches:
        logits = model(x).logits
        correct += (logits.argmax(1) == y).sum().item()
        loss += F.cross_entropy(logits, y, reduction="sum").item()
        n += len(y)
    return correct / n, loss / n


def evaluate(rule: LearningRule, model: ResidualMLP, diag_x: Tensor, diag_y: Tensor,
             test_batches: Callable) -> dict:
    """The per-epoch diagnostics (docs/method.md, "Diagnostics"; eval mode)."""
    was_training = model.training
    model.eval()
    try:
        test_acc, test_loss = accuracy_and_loss(model, test_batches())
        report = alignment(rule, model, diag_x, diag_y)
    finally:
        model.train(was_training)
    return {"test_acc": test_acc, "test_loss": test_loss, **report}


def fresh_b_null(rule: LearningRule, model: ResidualMLP, x: Tensor, y: Tensor, draws: int,
                 seed: int, method: str = "dfa") -> dict:
    """Deep cosine with the trained-with feedback vs ``draws`` fresh feedback sets
    from the same distribution (mean and ddof=1 std over draws)."""
    if draws < 2:
        raise ValueError("the fresh-B null needs at least 2 draws for a std")
    model.eval()
    grads, cache, _ = true_hidden_grads(model, x, y)
    trained = alignment(rule, model, x, y, grads=(grads, cache))
    fresh = []
    for k in range(draws):
        other = make_rule(method, model, rule.lam, rule.options, feedback_generator(seed, k))
        other.to(x.device)
        fresh.append(alignment(other, model, x, y, grads=(grads, cache)))
    deep = np.array([f["deep_cosine"] for f in fresh], dtype=float)
    return {
        "trained": {"cosine": trained["cosine"], "deep_cosine": trained["deep_cosine"]},
        "fresh": {
            "deep_cosine": deep.tolist(),
            "cosine": [f["cosine"] for f in fresh],
            "deep_cosine_mean": float(deep.mean()),
            "deep_cosine_std": float(deep.std(ddof=1)),
        },
    }
