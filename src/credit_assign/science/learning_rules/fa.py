"""Feedback Alignment (FA): the output error carried down the network by the model's
own backward pass, with fixed random matrices in place of the transposed forward
weights (Lillicrap et al.; docs/method.md, "Learning rules").

Two backward forms (``methods.fa.backward``):

``standard`` (default): Lillicrap et al.'s FA for this residual MLP. The exact backward
pass of the model with every transposed forward weight replaced by a fixed random
matrix of the same shape — the head's W, and W2, W1 of each block — and everything
else kept: the identity skip path, GELU′, the LayerNorm Jacobians (each block's
pre-LN and the terminal LN_out). With the random matrices equal to the forward weights
it is BP exactly at λ = 0 (the penalty is local to each block, as for DFA).

``jacobian``: the form this project had first, ``a_L = e B_Lᵀ`` (B_L d×C) and
``a_l = a_{l+1} B_lᵀ`` (B_l d×d): one matrix stands in for each block's whole Jacobian,
skip path, GELU′ and LayerNorm included. Not standard FA; kept as a named option.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor
from torch.nn import functional as F

from credit_assign.science.learning_rules.base import (
    LocalLosses,
    draw_matrix,
    error_reduction_option,
    output_error,
    register,
    train_embedding_option,
)
from credit_assign.science.learning_rules.options import Options, option

BACKWARDS = ("standard", "jacobian")
FA_FEEDBACK_SCALES = ("init", "unit", "fan_in")
IN_BLOCK = ("feedback", "exact")


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
    in_block: str = option(
        "feedback", "`feedback` (`standard` only; Lillicrap et al.): the block's own weight "
        "updates take the signal through the random matrices too — W1's from "
        "(a_l B2) ⊙ GELU′, the block's LayerNorm's from that through B1, LN_out's from "
        "e B_head: no transposed forward weight anywhere in the backward pass; `exact`: "
        "each block learns by autograd on its local loss ⟨f_l, a_l⟩ through its true W2, "
        "W1 (FA between blocks, BP inside each; the only choice for `jacobian`)",
        choices=IN_BLOCK)
    error_reduction: str = error_reduction_option()
    train_embedding: bool = train_embedding_option()

    conflicts = (({"backward": "jacobian", "feedback_scale": "init"},
                  "feedback_scale `init` draws each B like the forward weight it stands in "
                  "for, and backward `jacobian` has none (its B replace whole block "
                  "Jacobians): with backward `jacobian` set feedback_scale to `unit` or "
                  "`fan_in`"),
                 ({"backward": "jacobian", "in_block": "feedback"},
                  "in_block `feedback` routes a block's own updates through its B1 and B2, and "
                  "backward `jacobian` has none (one B per block Jacobian): with backward "
                  "`jacobian` set in_block to `exact`"),)


def _uniform(rows: int, cols: int, bound: float, generator: torch.Generator) -> Tensor:
    return (torch.rand(rows, cols, generator=generator) * 2 - 1) * bound


class _FeedbackLinear(torch.autograd.Function):
    """``x Wᵀ + b`` whose backward sends the gradient to ``x`` through the fixed matrix
    ``B`` (the shape of W) instead of W — FA's one change to a linear layer — and gives W
    and b their exact gradients (``gᵀ x``, ``Σ g``)."""

    @staticmethod
    def forward(ctx, x, weight, bias, feedback):
        ctx.save_for_backward(x, feedback)
        return F.linear(x, weight, bias)

    @staticmethod
    def backward(ctx, g):
        x, feedback = ctx.saved_tensors
        return g @ feedback, g.T @ x, g.sum(0), None


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
    embedding from ⟨h_0, a_0⟩, the head from the true CE gradient; the signals a_l come
    down the network as follows. With ``in_block: feedback`` (standard FA, the default) the
    block's own backward uses the random matrices too: ⟨f_l, a_l⟩ is differentiated
    through a recomputation of the block whose linear layers send gradients to their
    input through B (``_FeedbackLinear``), and LN_out learns from e B_head; with
    ``exact`` (and for ``jacobian``) the block's local loss is differentiated through its
    true weights, as for DFA.

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
                "model saved before methods.fa.backward existed was trained with backward "
                "`jacobian` (and feedback_scale `unit`)")
        self.feedback = saved

    # -- the update --------------------------------------------------------------------
    def local_outputs(self, model, cache):
        """With ``in_block: feedback``, the head's logits and each block's f_l recomputed
        from their detached inputs through linear layers whose backward goes through B
        (``_FeedbackLinear``): LocalLosses.update then differentiates the same local
        losses, and W1, the blocks' LayerNorms and LN_out learn as FA defines it."""
        if self.options.in_block == "exact":
            return super().local_outputs(model, cache)
        fb = self.feedback
        top = model.norm_out(cache.h[-1].detach())
        logits = _FeedbackLinear.apply(top, model.head.weight, model.head.bias, fb[-1])
        fs = []
        for l, block in enumerate(model.blocks):
            z = block.norm(cache.h[l].detach())
            pre = _FeedbackLinear.apply(z, block.fc1.weight, block.fc1.bias, fb[2 * l])
            fs.append(_FeedbackLinear.apply(F.gelu(pre), block.fc2.weight, block.fc2.bias,
                                            fb[2 * l + 1]))
        return logits, fs

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
