"""The gradient equilibrium propagation estimates, and whether its fixed point exists
(issue #44).

EP linearises around a fixed point z* of the free phase, F(z*, θ) = 0, and estimates
the gradient of the cost at that fixed point as the parameters move it. That gradient
is the implicit one (Almeida–Pineda; recurrent backpropagation): with J = ∂F/∂z at z*
and g = ∂C/∂z*,

    dC/dθ = λᵀ ∂F/∂θ,   where   (−J)ᵀ λ = g,

since J dz*/dθ + ∂F/∂θ = 0. BPTT through a fixed number of relaxation steps from z = x
is that gradient only where the relaxation has converged; on a state still moving it
differentiates a transient. Here:

* :func:`relax_to_convergence` runs the free phase until its residual ‖εF(z)‖/‖z‖ falls
  below a bound or a generous cap of steps is spent, logging the residual on the way;
* :func:`implicit_grads` solves the adjoint system with a Krylov method (GMRES on a
  ``scipy.sparse.linalg.LinearOperator`` whose products are vector–Jacobian products),
  to a stated tolerance, and reports the solver's own residual ‖(−J)ᵀλ − g‖/‖g‖ — the
  plain iteration λ ← λ + ε(Jᵀλ + g) grows without bound where I + εJ has transient or
  real growth;
* :func:`leading_eigenvalues` (Arnoldi on J v by forward-mode products:
  ``scipy.sparse.linalg.eigs``, largest real part first) says whether z* is a stable
  fixed point of the continuous flow (every real part < 0), and :func:`transient_growth`
  how non-normal J is: ‖(I + εJ)ⁿ‖₂, which a normal stable J keeps ≤ 1.

Each works on the field parameters, as :func:`credit_assign.ep_stack.dynamics.ep_grads`.
"""

from __future__ import annotations

import math
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import torch

from credit_assign.ep_stack.dynamics import SpringStack, initial_state


@contextmanager
def _quiet():
    """torch.func.linearize's tracing warns about what it does by design (as in
    dynamics.nudged_phases)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Attempted to insert a get_attr Node")
        warnings.filterwarnings("ignore", message=".*torch.jit.script.*deprecated")
        yield


@dataclass
class Relaxation:
    """A free phase run to convergence: its end state, whether the residual fell below
    the bound, the steps taken and the residual every ``check_every`` steps."""

    z: torch.Tensor
    converged: bool
    steps: int
    residual: float
    log: list[tuple[int, float]] = field(default_factory=list)


def residual_of(stack: SpringStack, z: torch.Tensor, x: torch.Tensor, eps: float) -> float:
    """The free phase's relative residual ‖εF(z)‖/‖z‖ (as dynamics.free_phase)."""
    return (eps * stack.force(z, x)).norm().item() / (z.norm().item() + 1e-9)


@torch.no_grad()
def relax_to_convergence(stack: SpringStack, x: torch.Tensor, eps: float, tol: float = 1e-7,
                         cap: int = 20_000, check_every: int = 50,
                         z: torch.Tensor | None = None) -> Relaxation:
    """Relax z ← z + εF(z) from ``z`` (default: z = x) until the residual is below ``tol``
    or ``cap`` steps are spent; "not converged" is an outcome, not an error."""
    z = initial_state(stack, x) if z is None else z.clone()
    log = [(0, residual_of(stack, z, x, eps))]
    steps = 0
    while steps < cap and log[-1][1] >= tol and math.isfinite(log[-1][1]):
        n = min(check_every, cap - steps)
        for _ in range(n):
            z = z + eps * stack.force(z, x)
        steps += n
        log.append((steps, residual_of(stack, z, x, eps)))
    r = log[-1][1]
    return Relaxation(z=z, converged=bool(r < tol), steps=steps, residual=r, log=log)


def _flat(t: torch.Tensor) -> np.ndarray:
    return t.detach().reshape(-1).cpu().numpy().astype(np.float64)


@dataclass
class Adjoint:
    """The adjoint solve: λ (shaped as z), the solver's relative residual
    ‖(−J)ᵀλ − g‖/‖g‖ computed afresh, its iterations and whether GMRES converged."""

    lam: torch.Tensor
    residual: float
    iterations: int
    converged: bool


def solve_adjoint(stack: SpringStack, z: torch.Tensor, x: torch.Tensor, g: torch.Tensor,
                  tol: float = 1e-8, restart: int = 50, maxiter: int = 200) -> Adjoint:
    """Solve (−J)ᵀ λ = g at z with GMRES, J = ∂F/∂z (the force at the clamped input x)."""
    from scipy.sparse.linalg import LinearOperator, gmres

    shape, dtype = z.shape, z.dtype
    with torch.enable_grad():
        _, vjp = torch.func.vjp(lambda s: stack.force(s, x.detach()), z.detach())

    def matvec(v):
        t = torch.as_tensor(np.asarray(v).reshape(shape), dtype=dtype)
        return -_flat(vjp(t)[0])

    n = z.numel()
    op = LinearOperator((n, n), matvec=matvec, rmatvec=None, dtype=np.float64)
    b = _flat(g)
    iterations = [0]

    def count(_):
        iterations[0] += 1

    sol, info = gmres(op, b, rtol=tol, atol=0.0, restart=restart, maxiter=maxiter,
                      callback=count, callback_type="pr_norm")
    resid = float(np.linalg.norm(op.matvec(sol) - b) / (np.linalg.norm(b) or 1.0))
    return Adjoint(lam=torch.as_tensor(sol.reshape(shape), dtype=dtype), residual=resid,
                   iterations=iterations[0], converged=info == 0)


def implicit_grads(stack: SpringStack, idx: torch.Tensor, y: torch.Tensor, z: torch.Tensor,
                   tol: float = 1e-8, params=None, **gmres) -> tuple[list, Adjoint]:
    """dC/dθ at the fixed point ``z`` for ``params`` (default: the field's, as EP's):
    λᵀ ∂F/∂θ with λ from :func:`solve_adjoint`, the input embedding's dependence on θ
    included (F reads x = embed(idx)); plus the cost's own direct dependence on θ where a
    parameter is read by the cost (the head)."""
    params = stack.field_params() if params is None else list(params)
    x = stack.embed(idx).detach()
    g = stack.cost_grad(z, y)
    adj = solve_adjoint(stack, z, x, g, tol=tol, **gmres)
    with torch.enable_grad():
        f = stack.force(z.detach(), stack.embed(idx))
        loss = stack.loss(z.detach(), y)
        through_f = torch.autograd.grad((adj.lam * f).sum(), params, allow_unused=True)
        direct = torch.autograd.grad(loss, params, allow_unused=True)
    grads = [a if b is None else (b if a is None else a + b)
             for a, b in zip(through_f, direct, strict=True)]
    return grads, adj


def _jvp_operator(stack: SpringStack, z: torch.Tensor, x: torch.Tensor):
    """v ↦ J v at z, as a LinearOperator on flat float64 vectors (forward mode)."""
    from scipy.sparse.linalg import LinearOperator

    shape, dtype = z.shape, z.dtype
    with torch.no_grad(), _quiet():
        _, jvp = torch.func.linearize(lambda s: stack.force(s, x), z.detach())

    def matvec(v):
        t = torch.as_tensor(np.asarray(v).reshape(shape), dtype=dtype)
        return _flat(jvp(t))

    n = z.numel()
    return LinearOperator((n, n), matvec=matvec, dtype=np.float64)


def leading_eigenvalues(stack: SpringStack, z: torch.Tensor, x: torch.Tensor, k: int = 6,
                        tol: float = 1e-6, seed: int = 0) -> np.ndarray:
    """The ``k`` eigenvalues of J = ∂F/∂z at z with the largest real parts (Arnoldi,
    ``scipy.sparse.linalg.eigs``), largest real part first. z* is a stable fixed point of
    the flow ż = F(z) when the first real part is below 0 (and of the step z + εF(z) when,
    besides, every |1 + ελ| < 1)."""
    from scipy.sparse.linalg import eigs

    op = _jvp_operator(stack, z, x)
    v0 = np.random.default_rng(seed).standard_normal(op.shape[0])
    vals = eigs(op, k=k, which="LR", tol=tol, v0=v0, return_eigenvectors=False)
    return vals[np.argsort(-vals.real)]


def transient_growth(stack: SpringStack, z: torch.Tensor, x: torch.Tensor, eps: float,
                     powers: tuple[int, ...] = (1, 10, 100), tol: float = 1e-8,
                     seed: int = 0) -> dict[int, float]:
    """‖(I + εJ)ⁿ‖₂ for each n in ``powers``: the largest singular value of M = (I + εJ)ⁿ
    (Lanczos, ``scipy.sparse.linalg.svds``, on forward- and reverse-mode products): how far
    the linearised step can grow a perturbation before it decays. ≤ 1 for every n where J
    is normal and the step contracts; a non-normal J can grow one many-fold on the way."""
    from scipy.sparse.linalg import LinearOperator, svds

    shape, dtype = z.shape, z.dtype
    with torch.no_grad(), _quiet():
        _, jvp = torch.func.linearize(lambda s: stack.force(s, x), z.detach())
    with torch.enable_grad():
        _, vjp = torch.func.vjp(lambda s: stack.force(s, x), z.detach())

    def power(v, n, product):
        w = torch.as_tensor(np.asarray(v).reshape(shape), dtype=dtype)
        for _ in range(n):
            w = w + eps * product(w)
        return _flat(w)

    out, size = {}, z.numel()
    v0 = np.random.default_rng(seed).standard_normal(size)
    for n in powers:
        op = LinearOperator((size, size), dtype=np.float64,
                            matvec=lambda v, n=n: power(v, n, jvp),
                            rmatvec=lambda v, n=n: power(v, n, lambda w: vjp(w)[0]))
        out[n] = float(svds(op, k=1, tol=tol, v0=v0, return_singular_vectors=False)[0])
    return out


# ---- one probe batch against both references ---------------------------------------------
def fixed_point_batch(stack: SpringStack, idx: torch.Tensor, y: torch.Tensor, s: dict
                      ) -> dict:
    """What issue #44 asks of one probe batch, with the probe's settings ``s`` (``eps``,
    and ``fixed_point``: ``tol``, ``cap``, ``check_every``, ``adjoint_tol``,
    ``eigenvalues``, ``powers``, ``free_steps``, ``nudged_steps_max``, ``r``,
    ``reference_steps``; the probe's ``check_every`` and ``exit_mult``):

    * the free phase run to convergence: converged or not, steps, residual log;
    * at its end state, the Jacobian's leading eigenvalues and ‖(I + εJ)ⁿ‖₂;
    * the implicit gradient there (where converged), with the adjoint's residual;
    * BPTT through each of ``reference_steps`` relaxation steps;
    * EP at every (T1, T2max, r): T1 in ``free_steps`` and "converged" (the end state
      above), each compared per parameter group with the implicit gradient and with
      every BPTT reference.

    Plain data (floats, lists, dicts), for a result file."""
    from credit_assign.ep_stack import dynamics as eps

    fp = s["fixed_point"]
    x = stack.embed(idx).detach()
    relaxed = relax_to_convergence(stack, x, s["eps"], fp["tol"], fp["cap"], fp["check_every"])
    out: dict = {"converged": relaxed.converged, "steps": relaxed.steps,
                 "residual": relaxed.residual,
                 "residual_log": [{"step": t, "residual": r} for t, r in relaxed.log]}
    vals = leading_eigenvalues(stack, relaxed.z, x, k=fp["eigenvalues"])
    out["eigenvalues"] = [{"real": float(v.real), "imag": float(v.imag)} for v in vals]
    out["growth"] = [{"power": n, "norm": g} for n, g in
                     transient_growth(stack, relaxed.z, x, s["eps"], tuple(fp["powers"])).items()]
    params = stack.field_params()
    references = {}
    if relaxed.converged:
        grads, adj = implicit_grads(stack, idx, y, relaxed.z, tol=fp["adjoint_tol"])
        references["implicit"] = eps.as_dict(params, grads)
        out["adjoint"] = {"residual": adj.residual, "iterations": adj.iterations,
                          "converged": adj.converged}
    for steps in fp["reference_steps"]:
        grads = eps.bptt_grads(stack, idx, y, steps, s["eps"], params,
                               s["probe"]["checkpoint_every"])
        references[f"bptt{steps}"] = eps.as_dict(params, grads)
    out["ep"] = []
    for t1 in [*fp["free_steps"], "converged"]:
        if t1 == "converged":
            z_free, residual = relaxed.z, relaxed.residual
        else:  # once per T1: every (T2max, r) nudges from the same free state
            _, z_free, residual = eps.free_phase(stack, idx, t1, s["eps"])
        for t2 in fp["nudged_steps_max"]:
            for r in fp["r"]:
                a, hind = eps.nudged_phases(stack, z_free, x, y, r, t2, s["eps"],
                                            s["probe"]["check_every"],
                                            s["probe"]["exit_mult"], aep=True)
                with torch.enable_grad():
                    f = stack.force(z_free, stack.embed(idx))
                    g = torch.autograd.grad((a * f).sum(), params, allow_unused=True)
                ep = eps.as_dict(params, g)
                out["ep"].append({
                    "free_steps": t1, "nudged_steps_max": t2, "r": r, "residual": residual,
                    "t_best": hind.t_best,
                    "cosine": {name: eps.group_cosines(stack, ep, ref)
                               for name, ref in references.items()}})
    return out
