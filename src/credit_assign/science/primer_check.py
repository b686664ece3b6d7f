"""The layered energy of the primer schematic, and a numerical check of what it claims.

    E(z) = Σ_{l=0..L} ½‖z_l − f_l(z_{l−1})‖²,   f_0(z_{−1}) = embed(x)
    F_β(z) = E(z) + β · CE(readout(z_L), y)

Free phase: argmin E is the forward pass, with E = 0.
Nudged phase: z^β = argmin F_β (settled from the free state).
EP estimate: ĝ(β) = [∂θF_β(z^β) − ∂θF_0(z^0)] / β → ∂CE/∂θ as β → 0, with an
O(β) error; the symmetric [∂θF_β(z^β) − ∂θF_{−β}(z^{−β})] / 2β errs by O(β²).
(For the layers inside E, ∂θF = ∂θE: the formula of the schematic. The readout
enters only through β·CE.)
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor
from torch.nn import functional as F

from credit_assign.science.model import ResidualMLP


def energy(model: ResidualMLP, x: Tensor, z: list[Tensor]) -> Tensor:
    """E(z), summed over the batch."""
    e = 0.5 * (z[0] - model.embed(x)).pow(2).sum()
    for l in range(1, len(z)):
        e = e + 0.5 * (z[l] - model.layer_map(l, z[l - 1])).pow(2).sum()
    return e


def total_energy(model, x, y, z, beta: float) -> Tensor:
    """F_β(z) = E(z) + β · CE(readout(z_L), y), CE averaged over the batch."""
    return energy(model, x, z) + beta * F.cross_entropy(model.readout(z[-1]), y)


def free_phase(model, x) -> list[Tensor]:
    """The minimiser of E: one bottom-up pass."""
    with torch.no_grad():
        return [h.clone() for h in model(x).h]


def settle(model, x, y, beta: float, z0: list[Tensor], tol: float = 1e-13,
           max_steps: int = 50) -> tuple[list[Tensor], float]:
    """Minimise F_β by Newton's method on the stacked states (small nets only:
    the Hessian is dense). Returns the states and the final gradient norm."""
    shapes = [t.shape for t in z0]
    sizes = [t.numel() for t in z0]

    def unflat(v):
        return [c.view(s) for c, s in zip(torch.split(v, sizes), shapes, strict=True)]

    def objective(v):
        return total_energy(model, x, y, unflat(v), beta)

    v = torch.cat([t.reshape(-1) for t in z0]).detach()
    grad_norm = math.inf
    for _ in range(max_steps):
        g = torch.func.grad(objective)(v)
        grad_norm = g.norm().item()
        if grad_norm < tol:
            break
        hess = torch.func.hessian(objective)(v)
        v = v - torch.linalg.solve(hess, g)
    return unflat(v.detach()), grad_norm


def param_grads(model, x, y, z, beta) -> dict[str, Tensor]:
    params = dict(model.named_parameters())
    out = torch.autograd.grad(total_energy(model, x, y, z, beta), list(params.values()),
                              allow_unused=True)
    return {n: g if g is not None else torch.zeros_like(p)
            for (n, p), g in zip(params.items(), out, strict=True)}


def groups(model: ResidualMLP) -> dict[str, list[str]]:
    names = [n for n, _ in model.named_parameters()]
    out = {"embed": [n for n in names if n.startswith("embed.")]}
    for i in range(model.depth):
        out[f"block{i + 1}"] = [n for n in names if n.startswith(f"blocks.{i}.")]
    out["readout"] = [n for n in names if n.startswith(("head.", "norm_out."))]
    out["all"] = names
    return out


def _flat(grads: dict[str, Tensor], names: list[str]) -> Tensor:
    return torch.cat([grads[n].reshape(-1) for n in names])


def check(model: ResidualMLP, x: Tensor, y: Tensor, betas) -> dict:
    """EP estimates against the BP gradient over a β grid, both estimators (float64)."""
    model = model.double()
    x = x.double()
    z0 = free_phase(model, x)
    free_energy = energy(model, x, z0).item()
    settled0, res0 = settle(model, x, y, 0.0, z0)
    free_gap = max((a - b).abs().max().item() for a, b in zip(settled0, z0, strict=True))
    ce = F.cross_entropy(model(x).logits, y)
    bp = dict(zip([n for n, _ in model.named_parameters()],
                  torch.autograd.grad(ce, list(model.parameters())), strict=True))
    base = param_grads(model, x, y, z0, 0.0)
    grp = groups(model)
    out = {name: {"one_sided": {"cosine": [], "rel_error": []},
                  "symmetric": {"cosine": [], "rel_error": []}} for name in grp}
    residuals = []
    for beta in betas:
        zp, rp = settle(model, x, y, beta, z0)
        zm, rm = settle(model, x, y, -beta, z0)
        residuals.append(max(rp, rm))
        gp, gm = param_grads(model, x, y, zp, beta), param_grads(model, x, y, zm, -beta)
        for name, names in grp.items():
            truth = _flat(bp, names)
            one = (_flat(gp, names) - _flat(base, names)) / beta
            sym = (_flat(gp, names) - _flat(gm, names)) / (2 * beta)
            for key, est in (("one_sided", one), ("symmetric", sym)):
                out[name][key]["cosine"].append(F.cosine_similarity(est, truth, dim=0).item())
                out[name][key]["rel_error"].append(((est - truth).norm() / truth.norm()).item())
    slopes = {name: {key: loglog_slope(betas, out[name][key]["rel_error"])
                     for key in ("one_sided", "symmetric")} for name in grp}
    return {"beta": list(map(float, betas)), "groups": out, "slopes": slopes,
            "free_energy": free_energy, "free_state_gap": free_gap,
            "free_phase_residual": res0, "settle_residual": residuals}


def loglog_slope(x, y) -> float:
    """Least-squares slope of log y against log x."""
    lx, ly = np.log10(np.asarray(x, float)), np.log10(np.asarray(y, float))
    return float(np.polyfit(lx, ly, 1)[0])


def check_primer(width: int, depth: int, batch: int, n_in: int, n_classes: int, betas,
                 seed: int) -> dict:
    """The check for a residual MLP and a plain MLP on seeded random data."""
    out = {}
    for kind in ("residual", "plain"):
        torch.manual_seed(seed)
        model = ResidualMLP(n_in, width, depth, n_classes, residual=kind == "residual",
                            branch_init_std=0.3)
        g = torch.Generator().manual_seed(seed)
        x = torch.randn(batch, n_in, generator=g)
        y = torch.randint(0, n_classes, (batch,), generator=g)
        out[kind] = check(model, x, y, betas)
    return out
