"""Measurements that compare a rule with the true gradient. Never on the training path."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from torch import Tensor
from torch.nn import functional as F

from credit_assign.science.learning_rules import LearningRule, feedback_generator, make_rule
from credit_assign.science.model import ResidualMLP


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


# ---- cosine measurement variants (credit_assign.science.measurement): how a paper may have
# measured the alignment. The headline diagnostic is per_sample_cosine above; these never
# replace it.
COSINE_EPS = 1e-8


def eps_clamp_cosine(u: Tensor, v: Tensor, eps: float = COSINE_EPS) -> float:
    """Mean over samples of ``torch.nn.functional.cosine_similarity(u, v, dim=1, eps)``,
    computed as torch does, in float32: each row's norm clamped from below at ``eps``
    *separately* (u_i/max(‖u_i‖, eps) · v_i/max(‖v_i‖, eps)), every row counted (a zero
    row gives 0). Where a norm is under eps the value shrinks with the norm: at DFA's
    deep gradients (~1e-10) this cosine reads near 0 whatever the directions."""
    u, v = u.float(), v.float()
    nu = torch.linalg.vector_norm(u, dim=1, keepdim=True).clamp_min(eps)
    nv = torch.linalg.vector_norm(v, dim=1, keepdim=True).clamp_min(eps)
    return ((u / nu) * (v / nv)).sum(dim=1).mean().item()


def eps_denominator_cosine(u: Tensor, v: Tensor, eps: float = COSINE_EPS) -> float:
    """Mean over samples of u_i·v_i / (‖u_i‖‖v_i‖ + eps), in float32 (the epsilon a
    hand-written cosine adds to its denominator); every row counted. Where ‖u_i‖‖v_i‖ is
    under eps — norms under 1e-4 each — the value shrinks with the product."""
    u, v = u.float(), v.float()
    den = torch.linalg.vector_norm(u, dim=1) * torch.linalg.vector_norm(v, dim=1) + eps
    return ((u * v).sum(dim=1) / den).mean().item()


def flattened_cosine(u: Tensor, v: Tensor) -> float:
    """One cosine of the whole (N, d) matrices, flattened: Σ u·v / (‖u‖_F ‖v‖_F), with
    no epsilon, in float64 (NaN if either is all zeros). Unlike the per-sample mean it
    weights each sample by its norms, so a few large rows dominate."""
    u, v = u.double().flatten(), v.double().flatten()
    den = torch.linalg.vector_norm(u) * torch.linalg.vector_norm(v)
    if not bool(den > 0):
        return math.nan
    return ((u * v).sum() / den).item()


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
    cosines = [per_sample_cosine(a, g) if a is not None else None
               for a, g in zip(signals, grads, strict=True)]
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


def fresh_b_null_cosines(rule: LearningRule, model: ResidualMLP, x: Tensor, y: Tensor, draws: int,
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
