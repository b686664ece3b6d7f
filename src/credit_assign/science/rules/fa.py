"""Feedback Alignment (FA): the output error carried down the network by the model's
own backward pass, with fixed random matrices in place of the transposed forward
weights (Lillicrap et al.; docs/method.md, "Learning rules").

Two backward forms (``rule.fa.backward``):

``standard`` (default): Lillicrap et al.'s FA for this residual MLP. The exact backward
pass of the model with every transposed forward weight replaced by a fixed random
matrix of the same shape — the head's W, and W2, W1 of each block — and everything
else kept: the identity skip path, GELU′, the LayerNorm Jacobians (each block's
pre-LN and the terminal LN_out). With the random matrices equal to the forward weights
it is BP exactly.

``jacobian``: the form this project had first, ``a_L = e B_Lᵀ`` (B_L d×C) and
``a_l = a_{l+1} B_lᵀ`` (B_l d×d): one matrix stands in for each block's whole Jacobian,
skip path, GELU′ and LayerNorm included. Not standard FA; kept as a named option.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor
from torch.nn import functional as F

from credit_assign.science.rules.base import (
    LocalLosses,
    draw_matrix,
    error_reduction_option,
    output_error,
    register,
    train_embedding_option,
)
from credit_assign.science.rules.options import Options, option

BACKWARDS = ("standard", "jacobian")
FA_FEEDBACK_SCALES = ("init", "unit", "fan_in")


@dataclass
class FAOptions(Options):
    """FA's options: DFA's (error_reduction, train_embedding), its backward form, and a
    feedback scale with one more choice, ``init`` (the default, and ``standard`` only)."""

    backward: str = option(
        "standard", "`standard`: the model's exact backward pass with the head's W and each "
        "block's W2, W1 replaced by fixed random matrices of their shapes (skip path, GELU′ "
        "and LayerNorm Jacobians kept: Lillicrap et al.'s FA); `jacobian`: a_L = e B_Lᵀ, "
        "a_l = a_{l+1} B_lᵀ, one d×d matrix in place of each block's whole Jacobian",
        choices=BACKWARDS)
    feedback_scale: str = option(
        "init", "`init` (`standard` only): each B drawn as the forward weight it replaces is "
        "at initialisation (W1, head: U(±1/√fan_in), nn.Linear's default; W2: "
        "N(0, model.branch_init_std²)); `unit`: entries N(0, 1); `fan_in`: N(0, 1/columns of "
        "B) (`standard`: the weight's fan-in d)", choices=FA_FEEDBACK_SCALES)
    error_reduction: str = error_reduction_option()
    train_embedding: bool = train_embedding_option()

    conflicts = (({"backward": "jacobian", "feedback_scale": "init"},
                  "feedback_scale `init` draws each B like the forward weight it stands in "
                  "for, and backward `jacobian` has none (its B replace whole block "
                  "Jacobians): with backward `jacobian` set feedback_scale to `unit` or "
                  "`fan_in`"),)


def _uniform(rows: int, cols: int, bound: float, generator: torch.Generator) -> Tensor:
    return (torch.rand(rows, cols, generator=generator) * 2 - 1) * bound


def _vjp(fn, x: Tensor, v: Tensor) -> Tensor:
    """v · ∂fn/∂x at x (per sample for the row-wise maps used here): the exact Jacobian of
    ``fn`` at the detached ``x``, by autograd on a recomputation of ``fn`` alone."""
    x = x.detach().requires_grad_()
    out = fn(x)
    if out is x:  # an identity map (nn.Identity in place of LN_out)
        return v
    (g,) = torch.autograd.grad(out, x, v)
    return g


@register
class FA(LocalLosses):
    """Feedback Alignment: each block learns from ⟨f_l(h_{l-1}), a_l⟩ (+ penalty), the
    embedding from ⟨h_0, a_0⟩, LN_out and head from the true CE gradient, as for DFA; the
    signals a_l come down the network as follows.

    ``standard`` (``self.feedback`` = [B1_1, B2_1, …, B1_L, B2_L, B_head], each the shape
    of the forward weight it replaces: fc1.weight, fc2.weight, head.weight)::

        e   = ∂CE/∂logits                         (output_error)
        a_L = (e B_head) · J_LN_out(h_L)
        a_{l-1} = a_l + ((a_l B2_l) ⊙ GELU′(fc1(LN_l(h_{l-1})))) B1_l · J_LN_l(h_{l-1})

    (the skip term ``a_l`` only where ``model.residual``). The LayerNorm Jacobians and
    GELU′ are exact: local, per-sample quantities at the cached activations — what a
    layer's own backward uses in standard FA — computed by autograd on a recomputation
    of that one LayerNorm or GELU at the detached cached input. No gradient of CE
    through a block is ever taken: only the forward *weights* are replaced, and those
    never enter the signal.

    ``jacobian`` (``self.feedback`` = [B_0, …, B_{L-1}, B_L], B_l d×d for l < L, B_L d×C)::

        a_L = e B_Lᵀ,   a_l = a_{l+1} B_lᵀ

    The B are drawn once per seed from the rule's generator (``draw_feedback``), never
    trained, and saved with the model (``state_dict``).
    """

    name, label, color = "fa", "FA", "#029e73"
    Options = FAOptions
    probed = True

    # -- the fixed random feedback ---------------------------------------------------
    def draw_feedback(self, model, generator):
        if self.options.backward == "jacobian":
            d, c, scale = model.width, model.n_classes, self.options.feedback_scale
            self.feedback = [draw_matrix(d, d, scale, generator) for _ in range(model.depth)]
            self.feedback.append(draw_matrix(d, c, scale, generator))
            return
        self.feedback = []
        for block in model.blocks:
            self.feedback.append(self._draw_like(block.fc1.weight, "linear", model, generator))
            self.feedback.append(self._draw_like(block.fc2.weight, "branch", model, generator))
        self.feedback.append(self._draw_like(model.head.weight, "linear", model, generator))

    def _draw_like(self, weight: Tensor, kind: str, model, generator) -> Tensor:
        rows, cols = weight.shape
        scale = self.options.feedback_scale
        if scale != "init":
            return draw_matrix(rows, cols, scale, generator)
        if kind == "branch":  # Block: W2 ~ N(0, branch_init_std²)
            std = getattr(model, "branch_init_std", 0.01)
            return torch.randn(rows, cols, generator=generator) * std
        return _uniform(rows, cols, cols**-0.5, generator)  # nn.Linear: U(±1/√fan_in)

    def load_state_dict(self, state):
        saved = list(state["feedback"])
        if self.feedback and [tuple(b.shape) for b in saved] != \
                [tuple(b.shape) for b in self.feedback]:
            raise ValueError(
                f"FA feedback: the saved state holds {len(saved)} matrices, backward "
                f"{self.options.backward!r} needs {len(self.feedback)} of other shapes; a "
                "model saved before rule.fa.backward existed was trained with backward "
                "`jacobian` (and feedback_scale `unit`)")
        self.feedback = saved

    # -- the signals ---------------------------------------------------------------------
    def teaching_signals(self, model, cache, y):
        e = output_error(cache.logits, y, self.options.error_reduction)
        if self.options.backward == "jacobian":
            signals = [e @ self.feedback[-1].T]
            for b in reversed(self.feedback[:-1]):
                signals.insert(0, signals[0] @ b.T)
            return signals
        with torch.enable_grad():
            a = _vjp(model.norm_out, cache.h[-1], e @ self.feedback[-1])
            signals = [a.detach()]
            for l in range(model.depth, 0, -1):
                b1, b2 = self.feedback[2 * (l - 1)], self.feedback[2 * (l - 1) + 1]
                branch = self._branch_vjp(model.blocks[l - 1], cache.h[l - 1], a, b1, b2)
                a = (a + branch if model.residual else branch).detach()
                signals.insert(0, a)
        return signals

    @staticmethod
    def _branch_vjp(block, h: Tensor, a: Tensor, b1: Tensor, b2: Tensor) -> Tensor:
        """a · ∂f/∂h at h for the branch f = fc2 ∘ GELU ∘ fc1 ∘ LN, with fc2.weight and
        fc1.weight replaced by b2 and b1 in the backward (the forward values are the
        model's)."""
        h = h.detach().requires_grad_()
        z = block.norm(h)
        with torch.no_grad():
            pre = block.fc1(z)
        pre.requires_grad_()
        (u,) = torch.autograd.grad(F.gelu(pre), pre, a @ b2)  # (a B2) ⊙ GELU′(pre)
        (u,) = torch.autograd.grad(z, h, u @ b1)  # · J_LN(h)
        return u
