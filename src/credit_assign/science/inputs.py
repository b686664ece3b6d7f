"""The recipe's inputs from the decoded data: the fixed diagnostic and class-mixed
draws of the test set, the per-channel normalisation and the batch augmentation
(random crop and flip). Moved here from credit_assign.infra.data, which keeps the
sources, the decoding and the cache: these are the training recipe's, not the data's."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import Tensor


def diagnostic_indices(labels: Tensor, n: int, seed: int) -> Tensor:
    """A fixed, seeded, class-stratified subset of ``n`` indices (all if n ≥ len)."""
    from sklearn.model_selection import train_test_split

    if n >= len(labels):
        return torch.arange(len(labels))
    idx, _ = train_test_split(np.arange(len(labels)), train_size=n,
                              stratify=labels.numpy(), random_state=seed)
    return torch.as_tensor(np.sort(idx))


def mixed_indices(labels: Tensor, n: int, seed: int) -> Tensor:
    """A fixed, seeded, class-mixed draw of ``n`` test indices: the first n of a seeded
    random permutation of the whole test set, in the permutation's order (so its first
    ``batch`` are a class-mixed batch too). What "the first n test images" means in the
    official test batch, whose order is mixed — never a class-sorted folder's first n.
    Raises if the draw covers one class while the set holds more (it cannot at n ≥ 30
    with 10 balanced classes, short of odds of ~1e-29)."""
    n = min(n, len(labels))
    generator = torch.Generator().manual_seed(seed)
    idx = torch.randperm(len(labels), generator=generator)[:n]
    if n > 1 and len(labels[idx].unique()) == 1 and len(labels.unique()) > 1:
        raise ValueError(f"the class-mixed draw of {n} (seed {seed}) is one class: "
                         f"choose another seed")
    return idx


def diagnostic_batch(data: dict[str, Any], n: int, seed: int, device) -> tuple[Tensor, Tensor]:
    """The fixed diagnostic subset of the test set, normalised and on ``device``:
    the same images in training, the fresh-B null and the probes."""
    idx = diagnostic_indices(data["test_y"], n, seed)
    x = Normalizer(data["info"], device)(data["test_x"][idx].to(device))
    return x, data["test_y"][idx].to(device)


class Normalizer:
    """uint8 (N, C, H, W) → float (N, C·H·W): scale to [0, 1], per-channel standardise."""

    def __init__(self, info: dict, device):
        mean = torch.tensor(info["mean"], device=device).view(1, -1, 1, 1)
        std = torch.tensor(info["std"], device=device).view(1, -1, 1, 1)
        # (x/scale − mean)/std as a multiply and an add, in place: x · a + b (addcmul with
        # these broadcast shapes is 2× slower on the CPU; docs/performance.md)
        self.a = 1.0 / (float(info["scale"]) * std)
        self.b = -mean / std

    def __call__(self, x: Tensor) -> Tensor:
        return x.float().mul_(self.a).add_(self.b).flatten(1)


def crop_flip(x: Tensor, pad: int, generator: torch.Generator) -> Tensor:
    """Random crop after zero padding by ``pad`` and random horizontal flip, for a
    whole batch at once (N, C, H, W): one gather over flattened pixel indices, no
    per-image Python loop (4× faster than advanced indexing; docs/performance.md)."""
    n, c, h, w = x.shape
    offsets = torch.randint(0, 2 * pad + 1, (2, n), generator=generator).to(x.device)
    flips = (torch.rand(n, generator=generator) < 0.5).to(x.device)
    padded = torch.nn.functional.pad(x, (pad, pad, pad, pad))
    width = w + 2 * pad
    rows = offsets[0][:, None] + torch.arange(h, device=x.device)  # (N, h)
    cols = offsets[1][:, None] + torch.arange(w, device=x.device)  # (N, w)
    cols = torch.where(flips[:, None], cols.flip(1), cols)
    index = (rows[:, :, None] * width + cols[:, None, :]).view(n, 1, h * w).expand(n, c, h * w)
    return padded.view(n, c, -1).gather(2, index).view(n, c, h, w)
