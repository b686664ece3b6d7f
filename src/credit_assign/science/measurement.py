"""Measurement variants on a trained model: the same quantities measured the ways a paper
might have measured them, with no retraining.

A published number can differ from ours because it was measured differently. On the
saved final model, each *measurement* yields ‖h_L‖ (where it measures it), the per-layer
cosines l0 … lL between the rule's teaching signal and the true gradient, and the deep
cosine (their mean over l = 1 … L). Two things vary: the images, and the cosine.

The images (``sets`` of the result, each recorded with its draw, n, seed and the classes
it covers):

* ``stratified`` — the fixed, seeded, class-stratified diagnostic set
  (``inputs.diagnostic_indices``): what the pipeline reports;
* ``mixed_n`` — a fixed, seeded, class-mixed draw of ``diagnostics.n_samples`` test
  images (``inputs.mixed_indices``: the first n of a seeded permutation of the test set),
  what "the first n test images" are in the official test batch, whose order is mixed;
* ``one_batch`` — the first ``measurements.batch`` images of that same draw.

The cosine (the functions in ``credit_assign.science.diagnostics``):

* ``exact`` — the headline: mean per-sample cosine, no epsilon, float64, exact-zero rows
  left out (``per_sample_cosine``);
* ``eps_cos`` — ``torch.nn.functional.cosine_similarity`` with eps = 1e-8 clamping each
  norm separately, float32, every row counted (``eps_clamp_cosine``);
* ``eps_den`` — u·v / (‖u‖‖v‖ + 1e-8), float32 (``eps_denominator_cosine``);
* ``flat`` — one cosine of the whole flattened (N, d) matrices (``flattened_cosine``).

``exact`` and ``flat`` do not depend on the gradient's scale; the two epsilon cosines do.
The true gradient is that of the *batch-mean* CE, so an image's gradient is 1/N times
its own CE's when N images share the batch, and the rule's signal scales the same way
(DFA's e is divided by the batch, unless ``error_reduction: sum``). The epsilon cosines
are therefore measured at each of ``measurements.batch_sizes``: the set is cut into
consecutive batches of that size (the last one shorter where the size does not divide
the set, and one batch of the whole set where the size exceeds it — the result records
the batch sizes actually used), and gradients and signals are taken per batch, as a
training script's per-batch probe would.

The measurements (result ``variants``; the gap map's measurement names):
``stratified`` (exact cosine, median ‖h_L‖ — equals the training's final report),
``mixed_n`` (the same statistics on the class-mixed draw), ``one_batch`` (‖h_L‖ as the
Frobenius norm of the batch × d matrix, as a script printing ``h.norm()`` reports it,
and the exact cosine on that batch), ``eps_cos_b<B>`` and ``eps_den_b<B>`` (the epsilon
cosines on the stratified set at batch size B) and ``flat`` (the flattened cosine on the
stratified set). The cosine-only measurements leave ‖h_L‖ unmeasured (null): it is the
stratified set's, already reported.

``gain`` — the seed probes' gain-weighted cosine, read for this model. The seed's probe
(``_row_cos(a ⊙ φ'(u_l), −g ⊙ φ'(u_l))``) weights signal and gradient at h_l by the
derivative of the activation that makes h_l's increment (its residual variant:
h_l = h_{l-1} + α φ(u_l)), "so the reported alignment is what the weight update sees".
Here the increment is f_l = W2 GELU(pre_l) + b2 with pre_l = W1 LN(h_{l-1}) + b1, so
what W1's update sees of a signal at h_l is (a_l W2) ⊙ GELU′(pre_l) — the true W2, as
for every local rule but standard FA, whose W1 update goes through B2 instead; the
measurement compares (a_l W2_l) ⊙ GELU′(pre_l) with (g_l W2_l) ⊙ GELU′(pre_l) per
sample (exact cosine, the stratified set), l = 1 … L. The embedding (l = 0) is linear
(gain 1): its cosine is the ``exact`` one. W2's own update sees a_l itself (gain 1):
the ``exact`` cosine.
"""

from __future__ import annotations

from typing import Any

import torch

from credit_assign.science import inputs
from credit_assign.science.diagnostics import (
    deep_cosine,
    eps_clamp_cosine,
    eps_denominator_cosine,
    flattened_cosine,
    per_sample_cosine,
    true_hidden_grads,
)

COSINES = {"exact": per_sample_cosine, "eps_cos": eps_clamp_cosine,
           "eps_den": eps_denominator_cosine, "flat": flattened_cosine}
SCALE_DEPENDENT = ("eps_cos", "eps_den")


def measurement_names(batch_sizes) -> list[str]:
    """Every measurement a measure job writes, in the order it writes them."""
    return (["stratified", "mixed_n", "one_batch"]
            + [f"{kind}_b{b}" for kind in SCALE_DEPENDENT for b in batch_sizes]
            + ["flat", "gain"])


def _normalised(data: dict, idx: torch.Tensor, device) -> tuple[torch.Tensor, torch.Tensor]:
    x = inputs.Normalizer(data["info"], device)(data["test_x"][idx].to(device))
    return x, data["test_y"][idx].to(device)


def signals_and_grads(rule, model, x, y, batch: int):
    """The rule's teaching signals and the true gradients g_l = ∂CE/∂h_l (CE the mean over
    each batch) on consecutive batches of ``batch`` images, concatenated per layer (None
    where the rule gives a layer no signal); h_L; and the batch sizes used."""
    per_batch_signals, per_batch_grads, h_last, sizes = [], [], [], []
    for start in range(0, len(y), batch):
        xb, yb = x[start:start + batch], y[start:start + batch]
        g, cache, _ = true_hidden_grads(model, xb, yb)
        with torch.enable_grad():
            a = rule.teaching_signals(model, cache, yb)
        per_batch_signals.append([s.detach() if s is not None else None for s in a])
        per_batch_grads.append(g)
        h_last.append(cache.h[-1].detach())
        sizes.append(len(yb))
    # per layer: its batches in order (zip(*…) turns batches × layers into layers × batches)
    signals = [None if parts[0] is None else torch.cat(parts)
               for parts in zip(*per_batch_signals, strict=True)]
    grads = [torch.cat(parts) for parts in zip(*per_batch_grads, strict=True)]
    return signals, grads, torch.cat(h_last), sorted(set(sizes))


def gain_weighted(model, x, signals, grads):
    """The signals and gradients as W1's update sees them (``gain`` in the module
    docstring): (v W2_l) ⊙ GELU′(pre_l) for blocks l = 1 … L; the embedding's (l = 0)
    unchanged (a linear map: gain 1). None stays None (a layer without a signal)."""
    with torch.no_grad():
        h = model(x, local=True).h
    u, v = [signals[0]], [grads[0]]
    for l, block in enumerate(model.blocks, start=1):
        with torch.enable_grad():
            pre = block.fc1(block.norm(h[l - 1])).detach().requires_grad_()
            (gain,) = torch.autograd.grad(torch.nn.functional.gelu(pre).sum(), pre)
        w2 = block.fc2.weight.detach()
        a = signals[l]
        u.append(None if a is None else (a @ w2) * gain)
        v.append((grads[l] @ w2) * gain)
    return u, v


def cosines(kind: str, signals, grads) -> dict[str, Any]:
    """Per-layer cosines l0 … lL of one kind (None where the layer has no signal) and the
    deep cosine (mean over l = 1 … L)."""
    fn = COSINES[kind]
    per_layer = [fn(a, g) if a is not None else None for a, g in zip(signals, grads, strict=True)]
    return {"cosine": per_layer, "deep_cosine": deep_cosine(per_layer)}


def describe_set(name: str, draw: str, idx: torch.Tensor, labels: torch.Tensor,
                 seed: int | None) -> dict[str, Any]:
    return {"name": name, "draw": draw, "n": len(idx), "seed": seed,
            "classes": len(labels[idx].unique()), "classes_in_test_set": len(labels.unique())}


def measure_sets(labels: torch.Tensor, n_samples: int, seed: int, batch: int):
    """{set name: (indices, description)} for the three sets of the module docstring."""
    mixed = inputs.mixed_indices(labels, n_samples, seed)
    sets = {
        "stratified": (inputs.diagnostic_indices(labels, n_samples, seed),
                       "class-stratified (the diagnostic set)", seed),
        "mixed_n": (mixed, "seeded class-mixed draw: first n of a seeded permutation", seed),
        "one_batch": (mixed[:batch], "the first `batch` images of the mixed_n draw", seed),
    }
    return {name: (idx, describe_set(name, draw, idx, labels, s))
            for name, (idx, draw, s) in sets.items()}


def measurements(model, rule, data: dict, n_samples: int, seed: int, batch: int,
                 device, batch_sizes=(2048, 128)) -> tuple[dict, dict]:
    """(sets, variants): the image sets, and {measurement: {set, cosine_kind, batch_size,
    batch_sizes_used, h_L_norm, h_L_norm_statistic, cosine, deep_cosine, n}} for the
    measurements of the module docstring."""
    model.eval()
    labels = data["test_y"]
    sets = measure_sets(labels, n_samples, seed, batch)
    out = {}
    for name, (idx, _) in sets.items():
        x, y = _normalised(data, idx, device)
        signals, grads, h, used = signals_and_grads(rule, model, x, y, len(y))
        h = h.double()
        if name == "one_batch":
            norm, how = torch.linalg.matrix_norm(h).item(), "Frobenius norm of the batch"
        else:
            norm = torch.linalg.vector_norm(h, dim=1).median().item()
            how = "median over samples"
        out[name] = {"set": name, "cosine_kind": "exact", "batch_size": len(y),
                     "batch_sizes_used": used, "h_L_norm": norm, "h_L_norm_statistic": how,
                     **cosines("exact", signals, grads), "n": len(idx)}
        if name != "stratified":
            continue
        native = (signals, grads)
        for b in batch_sizes:
            at_b = native[:2] if b == len(y) else signals_and_grads(rule, model, x, y, b)
            used_b = used if b == len(y) else at_b[3]
            for kind in SCALE_DEPENDENT:
                out[f"{kind}_b{b}"] = {
                    "set": name, "cosine_kind": kind, "batch_size": b,
                    "batch_sizes_used": used_b, "h_L_norm": None, "h_L_norm_statistic": None,
                    **cosines(kind, at_b[0], at_b[1]), "n": len(idx)}
        out["flat"] = {"set": name, "cosine_kind": "flat", "batch_size": len(y),
                       "batch_sizes_used": used, "h_L_norm": None, "h_L_norm_statistic": None,
                       **cosines("flat", *native), "n": len(idx)}
        out["gain"] = {"set": name, "cosine_kind": "gain", "batch_size": len(y),
                       "batch_sizes_used": used, "h_L_norm": None, "h_L_norm_statistic": None,
                       **cosines("exact", *gain_weighted(model, x, *native)), "n": len(idx)}
    order = measurement_names(batch_sizes)
    return ({name: d for name, (_, d) in sets.items()},
            {name: out[name] for name in order})
