"""Alignment probes (docs/method.md, "Alignment probes"): what each rule teaches a
layer, against the true gradient.

Measurement tools only: no learning rule calls them.

* node perturbation's estimates (:mod:`credit_assign.science.perturbation`), measured like
  every rule's signal;
* :func:`loss_decrease_ratio` — one rule update on a copy vs one exact-gradient SGD
  step on another copy, same batch, same learning rate: ΔL_rule / ΔL_sgd;
* :func:`report` — per-layer cosines and norms of every rule at one checkpoint.
"""

from __future__ import annotations

import copy

import torch
from torch import Tensor
from torch.nn import functional as F

from credit_assign.science.diagnostics import (
    alignment,
    median_norm,
    per_sample_cosine,
    true_hidden_grads,
)
from credit_assign.science.learning_rules import RULES, RuleOutput, make_rule, param_grads
from credit_assign.science.model import ResidualMLP
from credit_assign.science.perturbation import node_perturbation_signals


def loss_decrease_ratio(model: ResidualMLP, rule, x: Tensor, y: Tensor, lr: float) -> dict:
    """ΔL_rule / ΔL_sgd for one plain-SGD step of the rule vs of the exact gradient,
    from the same parameters on the same batch (ΔL = L_before − L_after).

    In (0, 1]: descends, less steeply than SGD; ≤ 0: went uphill; 1 for BP itself.
    """
    def step(grads: dict[str, Tensor]) -> float:
        twin = copy.deepcopy(model)
        params = dict(twin.named_parameters())
        with torch.no_grad():
            for name, g in grads.items():
                params[name] -= lr * g
            return F.cross_entropy(twin(x).logits, y).item()

    with torch.no_grad():
        before = F.cross_entropy(model(x).logits, y).item()
    exact = dict(zip([n for n, _ in model.named_parameters()],
                     torch.autograd.grad(F.cross_entropy(model(x).logits, y),
                                         list(model.parameters())), strict=True))
    out = rule.update(model, model(x, local=rule.local), y)
    d_sgd = before - step(exact)
    d_rule = before - step(out.grads)
    return {"loss_before": before, "decrease_sgd": d_sgd, "decrease_rule": d_rule,
            "ratio": d_rule / d_sgd if d_sgd != 0 else float("nan")}


def random_direction_rule(model: ResidualMLP, generator: torch.Generator):
    """A control 'rule' whose update is a random direction of the gradient's size."""

    class Random:
        local = False

        def update(self, model, cache, y):
            grads, _ = param_grads(F.cross_entropy(cache.logits, y), dict(model.named_parameters()))
            rand = {}
            for name, g in grads.items():
                r = torch.randn(g.shape, generator=generator, dtype=g.dtype).to(g.device)
                rand[name] = r * (g.norm() / r.norm().clamp_min(1e-30))
            return RuleOutput([None] * (model.depth + 1), rand, torch.zeros(()))

    return Random()


def np_alignment(model: ResidualMLP, x: Tensor, y: Tensor, grads: list[Tensor], sigma: float,
                 directions: int, mode: str, generator: torch.Generator) -> dict:
    signals = node_perturbation_signals(model, x, y, sigma, directions, mode, generator)
    return {"cosine": [per_sample_cosine(a, g) for a, g in zip(signals, grads, strict=True)],
            "signal_norm_median": [median_norm(a) for a in signals]}


def compared_rules(model: ResidualMLP, own_rule, method: str, options: dict,
                   generator: torch.Generator) -> dict:
    """The rules measured on a network: the one it was trained with, and every probed
    rule of the registry (``probed = True``), in name order. A probed rule is the
    trained one where the network was trained with it and it carries random feedback
    (its B are what it teaches with); otherwise a fresh λ = 0 instance with the
    config's options (``options[name]``), its feedback drawn from ``generator``."""
    rules = {method: own_rule}
    for name, cls in RULES.items():
        if cls.probed and not (name == method and own_rule.feedback):
            rules[name] = make_rule(name, model, 0.0, options.get(name), generator)
    return rules


def report(model: ResidualMLP, own_rule, method: str, x: Tensor, y: Tensor, settings: dict,
           seed: int) -> dict:
    """Every rule's per-layer alignment at one checkpoint, and its loss-decrease ratio.
    ``settings``: the probes' config, with ``methods`` the options of the rules built."""
    model.eval()
    grads, cache, ce = true_hidden_grads(model, x, y)
    out = {"loss": ce.item(), "grad_norm_median": [median_norm(g) for g in grads], "rules": {}}
    gen = torch.Generator().manual_seed(seed)
    options = settings.get("methods", {})
    rules = compared_rules(model, own_rule, method, options, gen)
    for name, rule in rules.items():
        rep = alignment(rule, model, x, y, grads=(grads, cache))
        out["rules"][name] = {"cosine": rep["cosine"],
                              "signal_norm_median": rep["signal_norm_median"],
                              "trained_with": name == method}
    for mode in ("sequential", "simultaneous"):
        rep = np_alignment(model, x, y, grads, settings["sigma"], settings["directions"], mode,
                           gen)
        out["rules"][f"np_{mode}"] = {**rep, "trained_with": False}
    lr = settings["lr"]
    ratios = {name: loss_decrease_ratio(model, rule, x, y, lr) for name, rule in rules.items()}
    np_options = {"sigma": settings["sigma"], "directions": settings["directions"],
                  "mode": "simultaneous"}  # an instrument set by probes.*
    np_rule = make_rule("np", model, 0.0, np_options, gen)
    ratios["np_simultaneous"] = loss_decrease_ratio(model, np_rule, x, y, lr)
    ratios["random"] = loss_decrease_ratio(model, random_direction_rule(model, gen), x, y, lr)
    out["loss_decrease"] = ratios
    return out
