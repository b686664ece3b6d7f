"""Equilibrium propagation through a spring-coupled stack of transformer blocks
(docs/method.md, "EP stack probe").

The central object is the force field of :class:`SpringStack`. The state is
``z`` of shape (K, B, T, C): one copy of the token stream per block. Block k
feels

* its *internal* force ``N_k(z_k)`` = attention(z_k) + MLP(z_k) — a transformer
  block's residual branches, not the gradient of any energy (non-conservative);
* a spring to the block below, ``-γ (z_k - z_{k-1})`` with ``z_{-1} = x`` the
  clamped input embedding, and the spring's *reaction* from the block above,
  ``+γ (z_{k+1} - z_k)`` (Newton's third law; the springs are the gradient of
  ``Σ_k γ/2 ‖z_k - z_{k-1}‖²``, so they are conservative);
* a leak ``-c z_k``.

The free phase relaxes ``z ← z + ε F(z)`` from ``z = x``. The cost (next-token
cross entropy read out from the top block) pulls only ``z_{K-1}``; the springs'
reactions carry that tension down to block 0.

Two gradient estimates are short functions of the field:

* :func:`bptt_grads` — the reference: backpropagation through the unrolled
  relaxation (optionally checkpointed, so 400 steps fit in a few hundred MB);
* :func:`ep_grads` — equilibrium propagation with two real nudged phases ±r.
  Because the internal force is not conservative, its Jacobian J at the free
  state is replaced by Jᵀ in the nudged dynamics (the AEP correction
  ``-(J v - Jᵀ v)``, v = z - z*); the estimate ``a_t = (z₋ - z₊)/2r`` is read
  every few steps and *hindsight selection* keeps the one whose increment was
  smallest, stopping early once increments grow. The parameter gradient is
  then ``aᵀ ∂F/∂θ`` at the free state.

J is taken at the fixed free state, so it is linearised once per estimate
(``torch.func.linearize`` for J v, ``torch.func.vjp`` for Jᵀ v) and reused at
every nudged step, for both phases, which run side by side as one batch.
Attention is written out explicitly: the fused kernel has no forward-mode AD
on the CPU.
"""

from __future__ import annotations

import logging
import math
import time
import warnings
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

log = logging.getLogger(__name__)
INTERNAL_KINDS = ("transformer", "gradient", "none")


class SpringStack(torch.nn.Module):
    """K transformer blocks coupled by springs.

    ``internal`` selects the blocks' internal force: ``transformer`` (the probe's
    model), ``gradient`` (``N(z) = tanh(z W + b) Wᵀ``, the gradient of an energy,
    so its Jacobian is symmetric — the control where EP must agree with BPTT), or
    ``none`` (springs and leak only).
    """

    def __init__(self, vocab: int, blocks: int = 2, width: int = 128, heads: int = 4,
                 context: int = 64, gamma: float = 1.0, leak: float = 1.0,
                 internal: str = "transformer", generator: torch.Generator | None = None):
        super().__init__()
        if width % heads:
            raise ValueError(f"width {width} is not divisible by heads {heads}")
        if internal not in INTERNAL_KINDS:
            raise ValueError(f"internal must be one of {INTERNAL_KINDS}, got {internal!r}")
        K, C = blocks, width
        self.vocab, self.K, self.C, self.H, self.T = vocab, K, C, heads, context
        self.gamma, self.leak, self.internal = float(gamma), float(leak), internal

        def normal(*shape, std):
            return torch.nn.Parameter(torch.randn(*shape, generator=generator) * std)

        def const(*shape, value):
            return torch.nn.Parameter(torch.full(shape, float(value)))

        # initialisation as the seed: N(0, 0.02²) embeddings, N(0, 1/fan_in) matrices
        self.tok = normal(vocab, C, std=0.02)
        self.pos = normal(context, C, std=0.02)
        self.blocks = torch.nn.ModuleList()
        for _ in range(K):
            block = torch.nn.Module()
            if internal == "transformer":
                block.w_qkv = normal(C, 3 * C, std=1 / math.sqrt(C))  # W_Q | W_K | W_V
                block.w_o = normal(C, C, std=1 / math.sqrt(C))
                block.ln1_g, block.ln1_b = const(C, value=1), const(C, value=0)
                block.ln2_g, block.ln2_b = const(C, value=1), const(C, value=0)
                block.w_fc = normal(C, 4 * C, std=1 / math.sqrt(C))
                block.b_fc = const(4 * C, value=0)
                block.w_proj = normal(4 * C, C, std=1 / math.sqrt(4 * C))
                block.b_proj = const(C, value=0)
            elif internal == "gradient":
                block.w_e = normal(C, C, std=1 / math.sqrt(C))
                block.b_e = normal(C, std=0.1)
            self.blocks.append(block)
        self.head = normal(C, vocab, std=1 / math.sqrt(C))
        self.register_buffer("causal", torch.ones(context, context).tril().bool(),
                             persistent=False)

    # ---- parameter groups -------------------------------------------------------------
    def block_params(self, k: int | None = None) -> list[torch.nn.Parameter]:
        """The parameters of block k (of every block when k is None), in a fixed order."""
        blocks = self.blocks if k is None else [self.blocks[k]]
        return [p for b in blocks for p in b.parameters()]

    def field_params(self) -> list[torch.nn.Parameter]:
        """The parameters of the force field: embeddings and blocks (EP's reach; not the head)."""
        return [self.tok, self.pos, *self.block_params()]

    # ---- the force field --------------------------------------------------------------
    def embed(self, idx: torch.Tensor) -> torch.Tensor:
        return self.tok[idx] + self.pos[: idx.shape[1]]

    def block_force(self, k: int, z: torch.Tensor) -> torch.Tensor:
        """N_k(z) for one block; z is (B, T, C)."""
        b, (B, T, C) = self.blocks[k], z.shape
        z = z.reshape(B * T, C)
        if self.internal == "gradient":  # -∇ of -Σ log cosh(z W + b): a symmetric Jacobian
            return (torch.tanh(torch.addmm(b.b_e, z, b.w_e)) @ b.w_e.t()).view(B, T, C)
        H, dh = self.H, C // self.H
        h = F.layer_norm(z, (C,), b.ln1_g, b.ln1_b)
        q, k_, v = (h @ b.w_qkv).view(B, T, 3, H, dh).permute(2, 0, 3, 1, 4).unbind(0)
        s = (q @ k_.transpose(-2, -1)) * (1 / math.sqrt(dh))
        s = s.masked_fill(~self.causal[:T, :T], float("-inf"))
        attn = (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(B * T, C) @ b.w_o
        h = F.layer_norm(z, (C,), b.ln2_g, b.ln2_b)
        mlp = torch.addmm(b.b_proj, F.gelu(torch.addmm(b.b_fc, h, b.w_fc)), b.w_proj)
        return (attn + mlp).view(B, T, C)

    def internal_force(self, z: torch.Tensor) -> torch.Tensor:
        """N_k(z_k) for every block; z and the result are (K, B, T, C)."""
        if self.internal == "none":
            return torch.zeros_like(z)
        return torch.stack([self.block_force(k, z[k]) for k in range(self.K)])

    def conservative_force(self, z: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """Springs (with their reactions) and the leak: minus the gradient of
        Σ_k γ/2‖z_k - z_{k-1}‖² + c/2‖z_k‖², z_{-1} = x."""
        below = torch.cat([x.unsqueeze(0), z[:-1]], 0)
        up = torch.cat([z[1:] - z[:-1], torch.zeros_like(z[:1])], 0)
        return self.gamma * (up - (z - below)) - self.leak * z

    def force(self, z: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return self.conservative_force(z, x) + self.internal_force(z)

    # ---- the cost ---------------------------------------------------------------------
    def logits(self, z: torch.Tensor) -> torch.Tensor:
        return z[-1] @ self.head

    def loss(self, z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(self.logits(z).reshape(-1, self.vocab), y.reshape(-1))

    def cost_grad(self, z: torch.Tensor, y: torch.Tensor, per: int | None = None) -> torch.Tensor:
        """∂CE/∂z in closed form: only the top block feels the targets. ``per`` is the
        number of targets the mean is over (default ``y.numel()``)."""
        p = torch.softmax(self.logits(z), -1)
        g_top = (p - F.one_hot(y, self.vocab).to(z.dtype)) @ self.head.t()
        g = torch.zeros_like(z)
        g[-1] = g_top / (per or y.numel())
        return g


# ---- the free phase ----------------------------------------------------------------------
def _unroll(stack, z, x, steps, eps, step=None):
    """``steps`` relaxation steps z → z + εF(z) (or ``step(z, x)``, see :func:`make_step`)."""
    if step is None:
        def step(z, x):
            return z + eps * stack.force(z, x)
    for _ in range(steps):
        z = step(z, x)
    return z


@torch.no_grad()
def relax(stack: SpringStack, z: torch.Tensor, x: torch.Tensor, steps: int, eps: float,
          step=None):
    return _unroll(stack, z, x, steps, eps, step)


def initial_state(stack: SpringStack, x: torch.Tensor) -> torch.Tensor:
    return x.unsqueeze(0).repeat(stack.K, 1, 1, 1)


@torch.no_grad()
def free_phase(stack: SpringStack, idx: torch.Tensor, steps: int, eps: float, step=None):
    """Relax from z = x for ``steps``; return (x, z*, relative residual ‖εF(z*)‖/‖z*‖).
    ``step`` replaces the plain float32 step (see :func:`make_step`)."""
    x = stack.embed(idx)
    z = relax(stack, initial_state(stack, x), x, steps, eps, step)
    residual = (eps * stack.force(z, x)).norm().item() / (z.norm().item() + 1e-9)
    return x, z, residual


# ---- BPTT, the reference -----------------------------------------------------------------
def make_step(stack: SpringStack, eps: float, precision: str = "float32",
              compile: bool = False):
    """One relaxation step z → z + εF(z) as a function of (z, x).

    ``precision = "bfloat16"`` runs the force's matmuls in bf16 (CPU autocast; the
    state stays float32). ``compile`` hands the step to ``torch.compile`` (fused
    elementwise work, forward and backward); if compiling fails (no C++ compiler,
    say) the step falls back to eager mode with a warning.
    """
    if precision not in ("float32", "bfloat16"):
        raise ValueError(f"precision must be float32 or bfloat16, got {precision!r}")
    low = precision == "bfloat16"

    def step(z, x):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=low):
            f = stack.force(z, x)
        return z + eps * f

    return compiled(step) if compile else step


def compiled(fn):
    """``torch.compile(fn)`` that falls back to ``fn`` itself, with a warning, the first
    time compiling or running the compiled code fails (no C++ compiler, say)."""
    current = [torch.compile(fn, dynamic=False)]

    def guarded(*args):
        try:
            return current[0](*args)
        except Exception as err:  # noqa: BLE001 — any compiler failure: run eagerly
            if current[0] is fn:
                raise
            log.warning("torch.compile failed (%s: %s); running eagerly",
                        type(err).__name__, str(err).splitlines()[0] if str(err) else "")
            current[0] = fn
            return fn(*args)

    return guarded


def bptt_loss(stack: SpringStack, idx, y, steps: int, eps: float, step=None):
    """CE at the end of ``steps`` differentiable relaxation steps from z = x (one graph)."""
    x = stack.embed(idx)
    return stack.loss(_unroll(stack, initial_state(stack, x), x, steps, eps, step), y)


def bptt_grads(stack: SpringStack, idx, y, steps: int, eps: float, params=None,
               checkpoint_every: int = 0, return_loss: bool = False, step=None):
    """∂CE/∂params by backpropagation through ``steps`` relaxation steps from z = x.

    ``checkpoint_every = 0`` keeps the whole unrolled graph (memory ∝ steps). With
    ``n > 0`` the forward pass runs without a graph and keeps only every n-th state;
    the backward pass then rebuilds one segment of n steps at a time, from its stored
    state, and backpropagates through it (memory ∝ n + steps/n; one extra forward per
    step, which the smaller working set mostly pays back on a CPU). ``step`` replaces
    the plain float32 step (see :func:`make_step`).
    """
    params = list(stack.parameters()) if params is None else list(params)
    if not checkpoint_every or checkpoint_every >= steps:
        with torch.enable_grad():
            loss = bptt_loss(stack, idx, y, steps, eps, step)
            grads = list(torch.autograd.grad(loss, params, allow_unused=True))
        return (grads, loss.detach()) if return_loss else grads
    with torch.no_grad():  # forward: the state at the start of every segment
        x = stack.embed(idx)
        z = initial_state(stack, x)
        segments = []
        for start in range(0, steps, checkpoint_every):
            n = min(checkpoint_every, steps - start)
            segments.append((z, n))
            z = _unroll(stack, z, x, n, eps, step)
    with torch.enable_grad():
        z_end = z.requires_grad_(True)
        loss = stack.loss(z_end, y)
        grads = list(torch.autograd.grad(loss, [z_end, *params], allow_unused=True))
        adj, grads = grads[0], grads[1:]  # adj = ∂CE/∂z at the segment's end
        x_leaf = x.detach().requires_grad_(True)
        adj_x = torch.zeros_like(x)
        for z0, n in reversed(segments):
            z0 = z0.detach().requires_grad_(True)
            zn = _unroll(stack, z0, x_leaf, n, eps, step)
            adj, gx, *gp = torch.autograd.grad(zn, [z0, x_leaf, *params], adj,
                                               allow_unused=True)
            adj_x += gx
            grads = [_add(a, b) for a, b in zip(grads, gp, strict=True)]
        # z_0 = x repeated over the blocks: its adjoint flows into x, and x into the embeddings
        ge = torch.autograd.grad(stack.embed(idx), params, adj_x + adj.sum(0),
                                 allow_unused=True)
    grads = [_add(a, b) for a, b in zip(grads, ge, strict=True)]
    return (grads, loss.detach()) if return_loss else grads


def _add(a, b):
    if a is None:
        return b
    return a if b is None else a + b


# ---- EP: the nudged phases and hindsight selection -------------------------------------
@dataclass
class Hindsight:
    """Keep the estimate whose increment from the previous reading was smallest;
    say stop once an increment exceeds ``exit_mult`` × the smallest (after ``min_t``)."""

    exit_mult: float = 5.0
    min_t: int = 30
    best: torch.Tensor | None = None
    t_best: int = 0
    inc_min: float = math.inf
    previous: torch.Tensor | None = None
    increments: list[tuple[int, float]] = field(default_factory=list)

    def update(self, t: int, a: torch.Tensor) -> bool:
        """Record the reading at step t; return True to stop."""
        if not torch.isfinite(a).all():
            return True
        stop = False
        if self.previous is not None:
            inc = (a - self.previous).norm().item()
            self.increments.append((t, inc))
            if inc < self.inc_min:
                self.inc_min, self.best, self.t_best = inc, a, t
            elif inc > self.exit_mult * self.inc_min and t >= self.min_t:
                stop = True
        self.previous = a
        return stop

    def estimate(self) -> torch.Tensor:
        return self.best if self.best is not None else self.previous


def _nudged_force(stack: SpringStack, z, x, y, sign, per: int):
    """The field plus the nudge ∓r ∂C/∂z (sign = +r on the + phase's rows, -r on the other's)."""
    return stack.force(z, x) - sign * stack.cost_grad(z, y, per=per)


def nudged_phases(stack: SpringStack, z_free, x, y, r: float, steps_max: int, eps: float,
                  check_every: int = 10, exit_mult: float = 5.0, aep: bool = True,
                  compile: bool = False):
    """Run the +r and -r phases from z* side by side; return (a, Hindsight record).
    ``compile`` runs the nudged force (not the linearised J) through ``torch.compile``."""
    K, B = z_free.shape[:2]
    z2, x2, y2 = torch.cat([z_free, z_free], 1), torch.cat([x, x], 0), torch.cat([y, y], 0)
    # +r on the first B rows (pulled down the cost), -r on the last B
    sign = torch.cat([torch.full((B,), r), torch.full((B,), -r)]).to(z_free).view(1, 2 * B, 1, 1)
    if aep:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Attempted to insert a get_attr Node")
            _, jvp = torch.func.linearize(stack.internal_force, z2)
            _, vjp = torch.func.vjp(stack.internal_force, z2)

    def asym(v):  # (J - Jᵀ) v at the free state
        return jvp(v) - vjp(v)[0]

    hind = Hindsight(exit_mult=exit_mult, min_t=3 * check_every)
    drive = compiled(_nudged_force) if compile else _nudged_force
    Z = z2.clone()
    with torch.no_grad():
        for t in range(1, steps_max + 1):
            f = drive(stack, Z, x2, y2, sign, y.numel())
            if aep:
                f = f - asym(Z - z2)
            Z = Z + eps * f
            if t % check_every == 0 or t == steps_max:
                a = (Z[:, B:] - Z[:, :B]) / (2 * r)
                if hind.update(t, a):
                    break
    return hind.estimate(), hind


def ep_grads(stack: SpringStack, idx, y, free_steps: int, eps: float, r: float,
             steps_max: int, check_every: int = 10, exit_mult: float = 5.0, aep: bool = True,
             compile: bool = False):
    """EP's estimate of ∂CE/∂θ for the field parameters; returns (grads, info).
    ``compile``: the free phase's step and the nudged force through ``torch.compile``
    (float32 throughout)."""
    t0 = time.perf_counter()
    step = make_step(stack, eps, compile=True) if compile else None
    x, z_free, residual = free_phase(stack, idx, free_steps, eps, step)
    t1 = time.perf_counter()
    a, hind = nudged_phases(stack, z_free, x, y, r, steps_max, eps, check_every, exit_mult, aep,
                            compile)
    t2 = time.perf_counter()
    params = stack.field_params()
    with torch.enable_grad():
        f = stack.force(z_free, stack.embed(idx))
        grads = torch.autograd.grad((a * f).sum(), params, allow_unused=True)
    seconds = {"free": t1 - t0, "nudged": t2 - t1, "grads": time.perf_counter() - t2}
    return list(grads), {"residual": residual, "t_best": hind.t_best,
                         "increments": hind.increments, "seconds": seconds}


# ---- comparing gradients per parameter group ---------------------------------------------
def param_groups(stack: SpringStack) -> dict[str, list[torch.nn.Parameter]]:
    """Group name → parameters: all (the field's), block<k>, embeddings."""
    groups = {"all": stack.field_params()}
    for k in range(stack.K):
        groups[f"block{k}"] = stack.block_params(k)
    groups["embeddings"] = [stack.tok, stack.pos]
    return groups


def group_cosines(stack: SpringStack, ga: dict, gb: dict) -> dict[str, float | None]:
    """Cosine (float64) between two gradient dicts {param: grad} in each group; None when
    either side has no gradient or a zero vector in the group."""
    out = {}
    for name, members in param_groups(stack).items():
        va, vb = [], []
        for p in members:
            a, b = ga.get(p), gb.get(p)
            if a is None or b is None:
                continue
            va.append(a.reshape(-1).double())
            vb.append(b.reshape(-1).double())
        if not va:
            out[name] = None
            continue
        a, b = torch.cat(va), torch.cat(vb)
        den = a.norm() * b.norm()
        out[name] = (a @ b / den).item() if den > 0 else None
    return out


def as_dict(params, grads) -> dict:
    return {p: g for p, g in zip(params, grads, strict=True) if g is not None}
