"""EP's estimator and its precision (issue #55): how far EP's gradient from a converged
free state lies from the fixed-point (implicit) gradient, against the nudge r, with the
nudged phases in float32 and in float64, and with a higher-order stencil.

EP reads the nudged phases' response a(r) = (z₋ᵣ − z₊ᵣ)/(2r) (dynamics.nudged_phases:
centred, with the asymmetry correction). Its error from the implicit gradient has two
parts: a bias from the dynamics' nonlinearity, O(r²) for the centred stencil, which
shrinks with r; and rounding, about (the float's resolution of z)/(r·|∂C/∂z|), which
grows as r shrinks. :func:`estimate` gives a(r) by the centred stencil (order 2) or by
Richardson's combination of r and 2r, (4a(r) − a(2r))/3 (order 4: its bias falls so
fast that a larger r, whose rounding is small, can be used). The reference is the
implicit gradient at the free state refined in float64 with the adjoint solved there.

Pure computation; the study's job (jobs.ep_precision) runs it on pretrained stacks.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch

from credit_assign.ep_stack import dynamics as eps
from credit_assign.ep_stack.dynamics import SpringStack
from credit_assign.ep_stack.implicit import implicit_grads, relax_to_convergence

STENCILS = {"central": 2, "richardson": 4}  # name → the order of its bias in r
FLOAT32_RESOLUTION = 2.0 ** -23  # the spacing of float32 numbers, relative (ulp / |z|)


def response(stack: SpringStack, z_free, x, y, r: float, steps: int, eps_: float,
             stencil: str = "central", check_every: int = 10,
             exit_mult: float = 5.0) -> torch.Tensor:
    """EP's response a at ``z_free`` (the nudged phases run in ``z_free``'s dtype, as the
    stack's): the centred difference at ±r, or Richardson's (4a(r) − a(2r))/3."""
    def a(rr):
        out, _ = eps.nudged_phases(stack, z_free, x, y, rr, steps, eps_, check_every,
                                   exit_mult, aep=True)
        return out

    if stencil == "central":
        return a(r)
    if stencil == "richardson":
        return (4 * a(r) - a(2 * r)) / 3
    raise ValueError(f"stencil {stencil!r}: one of {sorted(STENCILS)}")


def grads_from(stack: SpringStack, idx, z_free, a) -> dict[str, torch.Tensor]:
    """EP's gradient for the field parameters from a response ``a``, keyed by name."""
    names = {id(p): n for n, p in stack.named_parameters()}
    params = stack.field_params()
    with torch.enable_grad():
        f = stack.force(z_free, stack.embed(idx))
        g = torch.autograd.grad((a * f).sum(), params, allow_unused=True)
    return {names[id(p)]: t for p, t in zip(params, g, strict=True) if t is not None}


def named(stack: SpringStack, grads) -> dict[str, torch.Tensor]:
    names = {id(p): n for n, p in stack.named_parameters()}
    return {names[id(p)]: g for p, g in zip(stack.field_params(), grads, strict=True)
            if g is not None}


def cosines(stack: SpringStack, ga: dict, gb: dict) -> dict[str, float | None]:
    """Cosine (float64) of two name-keyed gradients in each parameter group (all,
    block<k>, embeddings); None where a group has no gradient or a zero one."""
    names = {id(p): n for n, p in stack.named_parameters()}
    out = {}
    for group, members in eps.param_groups(stack).items():
        keys = [names[id(p)] for p in members if names[id(p)] in ga and names[id(p)] in gb]
        if not keys:
            out[group] = None
            continue
        a = torch.cat([ga[k].reshape(-1).double() for k in keys])
        b = torch.cat([gb[k].reshape(-1).double() for k in keys])
        den = a.norm() * b.norm()
        out[group] = (a @ b / den).item() if den > 0 else None
    return out


@dataclass
class Reference:
    """The float64 fixed point and the implicit gradient there."""

    stack: SpringStack  # the float64 copy
    z: torch.Tensor
    residual: float
    converged: bool
    steps: int
    grads: dict[str, torch.Tensor]
    adjoint_residual: float
    adjoint_iterations: int


def reference(stack: SpringStack, idx, y, z32, eps_: float, tol: float = 1e-12,
              cap: int = 200_000, adjoint_tol: float = 1e-10) -> Reference:
    """The free state ``z32`` refined in float64 (relaxed on from it until the residual is
    below ``tol``) and the implicit gradient there, its adjoint solved to ``adjoint_tol``."""
    s64 = copy.deepcopy(stack).double()
    x = s64.embed(idx).detach()
    relaxed = relax_to_convergence(s64, x, eps_, tol=tol, cap=cap, check_every=100,
                                   z=z32.detach().double())
    grads, adj = implicit_grads(s64, idx, y, relaxed.z, tol=adjoint_tol, maxiter=2000)
    return Reference(s64, relaxed.z, relaxed.residual, relaxed.converged, relaxed.steps,
                     named(s64, grads), adj.residual, adj.iterations)


def nudge_in_ulps(a: torch.Tensor, z: torch.Tensor, r: float, block: int = 0) -> float:
    """How far the ±r phases move block ``block``'s state, in float32's resolution of it:
    the median over its elements of r·|a| / (2⁻²³·|z|) (a few: rounding dominates)."""
    za, aa = z[block].double().abs(), a[block].double().abs()
    keep = za > 0
    return float((r * aa[keep] / (FLOAT32_RESOLUTION * za[keep])).median())


def precision_batch(stack: SpringStack, idx, y, z32, s: dict, rs, steps: int,
                    stencils=("central", "richardson"),
                    precisions=("float32", "float64")) -> dict:
    """One probe batch: the float64 reference at the refined state, then EP's estimate at
    every r, stencil and precision (float32: the float32 stack from its converged state;
    float64: the float64 copy from the refined state), each compared per parameter group
    with the reference, and block 0's nudge in float32 units. Plain data."""
    ref = reference(stack, idx, y, z32, s["eps"], **s.get("reference", {}))
    out = {"reference": {"residual": ref.residual, "converged": ref.converged,
                         "steps": ref.steps, "adjoint_residual": ref.adjoint_residual,
                         "adjoint_iterations": ref.adjoint_iterations}, "estimates": []}
    for precision in precisions:
        st, z = (stack, z32) if precision == "float32" else (ref.stack, ref.z)
        x = st.embed(idx).detach()
        for stencil in stencils:
            for r in rs:
                a = response(st, z, x, y, r, steps, s["eps"], stencil)
                g = grads_from(st, idx, z, a)
                cos = cosines(ref.stack, {k: v.double() for k, v in g.items()}, ref.grads)
                out["estimates"].append({
                    "precision": precision, "stencil": stencil, "r": r,
                    "cosine": cos, "nudge_ulps_block0": nudge_in_ulps(a, z, r)})
    return out
