"""The residual MLP (docs/method.md, "Model"): ``h_0 = embed(x)``, ``h_l = h_{l-1} + f_l(h_{l-1})``,
``logits = head(LN_out(h_L))``."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn import functional as F


@dataclass
class Cache:
    """What one forward pass leaves for a learning rule and for diagnostics.

    h: hidden states h_0 … h_L, each (N, d). ``h[0]`` is the embedding output.
    f: residual-branch outputs f_1 … f_L, each (N, d); ``f[l-1]`` belongs to block l.
    logits: (N, C).
    """

    h: list[Tensor]
    f: list[Tensor]
    logits: Tensor
    x: Tensor | None = None  # the input, for rules that re-run the network (node perturbation)


class Block(nn.Module):
    """Pre-LayerNorm residual branch ``f(h) = W2 · GELU(W1 · LN(h) + b1) + b2``."""

    def __init__(self, width: int, branch_init_std: float = 0.01):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, width)
        # Small W2, zero b2: each block starts near identity (‖f‖/‖h‖ ≈ 0.1).
        nn.init.normal_(self.fc2.weight, mean=0.0, std=branch_init_std)
        nn.init.zeros_(self.fc2.bias)

    def forward(self, h: Tensor) -> Tensor:
        return self.fc2(F.gelu(self.fc1(self.norm(h))))


class ResidualMLP(nn.Module):
    """``d``-wide, ``L``-block residual MLP with a terminal LayerNorm.

    Args:
        in_features: flattened input size (3072 for CIFAR-10).
        width: d.  depth: L.  n_classes: C.
        final_norm: keep LN_out before the head (docs/method.md); off only in tests that
            need the readout to be linear in h_L.
        residual: ``h_l = h_{l-1} + f_l(h_{l-1})`` (docs/method.md); False gives the plain MLP
            ``h_l = f_l(h_{l-1})`` used by the primer check.
    """

    def __init__(
        self,
        in_features: int,
        width: int,
        depth: int,
        n_classes: int,
        final_norm: bool = True,
        branch_init_std: float = 0.01,
        residual: bool = True,
    ):
        super().__init__()
        self.width, self.depth, self.n_classes = width, depth, n_classes
        self.residual = residual
        self.branch_init_std = branch_init_std  # W2's init std (FA's `init` feedback draws it)
        self.embed = nn.Linear(in_features, width)
        self.blocks = nn.ModuleList(Block(width, branch_init_std) for _ in range(depth))
        self.norm_out = nn.LayerNorm(width) if final_norm else nn.Identity()
        self.head = nn.Linear(width, n_classes)

    def forward(self, x: Tensor, local: bool = False) -> Cache:
        """Run the network and keep every hidden state.

        local: cut the graph at every block input and at the head's input, so
            a loss built from the cache only reaches parameters of the module
            that produced each term (no gradient crosses blocks) — what the
            DFA/FA local losses need. The values are identical either way.
        """
        h = [self.embed(x)]
        f = []
        for block in self.blocks:
            inp = h[-1].detach() if local else h[-1]
            f_l = block(inp)
            f.append(f_l)
            h_l = inp + f_l if self.residual else f_l
            h.append(h_l.detach() if local else h_l)
        top = h[-1].detach() if local else h[-1]
        return Cache(h=h, f=f, logits=self.head(self.norm_out(top)), x=x)

    def layer_map(self, l: int, z: Tensor) -> Tensor:
        """The map of layer l ≥ 1 from state z_{l-1} to z_l (as in forward)."""
        f = self.blocks[l - 1](z)
        return z + f if self.residual else f

    def readout(self, z: Tensor) -> Tensor:
        return self.head(self.norm_out(z))

    def block_parameters(self) -> list[nn.Parameter]:
        return [p for b in self.blocks for p in b.parameters()]

    def readout_parameters(self) -> list[nn.Parameter]:
        return [*self.norm_out.parameters(), *self.head.parameters()]


def branch_penalty(f: list[Tensor]) -> Tensor:
    """Σ_l mean_batch ‖f_l‖²: the residual-branch penalty (multiply by λ)."""
    return torch.stack([fl.pow(2).sum(dim=1).mean() for fl in f]).sum()
