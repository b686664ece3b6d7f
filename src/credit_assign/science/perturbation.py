"""Node perturbation: forward-difference estimates of ∂CE/∂h_l from random perturbations
of the hidden states. A measurement (the alignment probes) and a learning rule
(``rules.node_perturbation``) at once, so it sits below both: it needs only the model.
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch.nn import functional as F

from credit_assign.science.model import ResidualMLP


def per_sample_loss(model: ResidualMLP, x: Tensor, y: Tensor,
                    noise: list[Tensor | None] | None = None) -> Tensor:
    """CE of each sample (N,) with ``noise[l]`` added to hidden state h_l (None: none).

    Divided by N, so that its sum is the batch-mean CE whose gradient the probes
    compare with: the estimates carry the same scale as ∂CE/∂h_l.
    """
    noise = noise or [None] * (model.depth + 1)
    h = model.embed(x)
    if noise[0] is not None:
        h = h + noise[0]
    for l in range(1, model.depth + 1):
        h = model.layer_map(l, h)
        if noise[l] is not None:
            h = h + noise[l]
    return F.cross_entropy(model.readout(h), y, reduction="none") / len(y)


@torch.no_grad()
def node_perturbation_signals(model: ResidualMLP, x: Tensor, y: Tensor, sigma: float,
                              directions: int, mode: str, generator: torch.Generator
                              ) -> list[Tensor]:
    """Estimate g_l = ∂CE/∂h_l for every l from ``directions`` random perturbations.

    ĝ_l = mean_k [L(h + σ_l ξ_k) − L(h)] / σ_l · ξ_k,l per sample, with ξ ~ N(0, I).
    ``sigma`` is relative: σ_l = sigma · RMS(h_l) per sample, so the perturbation is
    the same fraction of every state whatever its scale (an absolute σ on a state of
    norm 1e5, as DFA's at λ = 0 reaches, falls below float32's resolution of it and
    the estimate becomes rounding noise). Unbiased for small σ in both modes, since
    E[ΔL ξ_l] = σ_l g_l when the ξ of different layers are independent.
    mode ``sequential``: a separate pass per layer and direction (only ξ_l ≠ 0);
    ``simultaneous``: one pass per direction with every layer perturbed at once —
    cheaper by a factor L+1, noisier (the other layers' noise enters ΔL).
    """
    if mode not in ("sequential", "simultaneous"):
        raise ValueError(f"node perturbation mode must be sequential or simultaneous, got {mode}")
    n_states = model.depth + 1
    clean = per_sample_loss(model, x, y)
    width, n = model.width, len(x)
    scale = [sigma * h.pow(2).mean(dim=1, keepdim=True).sqrt().clamp_min(1e-30)
             for h in hidden_states(model, x)]
    estimates = [torch.zeros(n, width, dtype=x.dtype, device=x.device) for _ in range(n_states)]

    def draw():
        return torch.randn(n, width, generator=generator, dtype=x.dtype).to(x.device)

    for _ in range(directions):
        if mode == "simultaneous":
            xi = [draw() for _ in range(n_states)]
            shifted = [s * z for s, z in zip(scale, xi, strict=True)]
            delta = per_sample_loss(model, x, y, shifted) - clean
            for l in range(n_states):
                estimates[l] += delta[:, None] * xi[l] / scale[l]
        else:
            for l in range(n_states):
                xi = draw()
                noise = [None] * n_states
                noise[l] = scale[l] * xi
                delta = per_sample_loss(model, x, y, noise) - clean
                estimates[l] += delta[:, None] * xi / scale[l]
    return [e / directions for e in estimates]


def hidden_states(model: ResidualMLP, x: Tensor) -> list[Tensor]:
    """h_0 … h_L of the clean forward pass."""
    h = [model.embed(x)]
    for l in range(1, model.depth + 1):
        h.append(model.layer_map(l, h[-1]))
    return h
