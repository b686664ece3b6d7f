"""EP's estimator against the fixed-point gradient it estimates (issue #55): in float64
it converges to the implicit gradient as the nudge shrinks, and each stencil's bias
falls with the order it states."""

import math

import pytest
import torch
from conftest import SPRING_EPS

from credit_assign.ep_stack import dynamics
from credit_assign.ep_stack import precision as prec
from credit_assign.ep_stack.implicit import implicit_grads, relax_to_convergence

EPS = SPRING_EPS


@pytest.fixture(scope="module")
def small(small_spring_stack):
    """The shared small stack at its fixed point, with its implicit gradient by name."""
    stack, idx, y, x, relaxed = small_spring_stack
    grads, adj = implicit_grads(stack, idx, y, relaxed.z, tol=1e-13)
    assert adj.converged
    return stack, idx, y, x, relaxed, prec.named(stack, grads)


def _error(stack, idx, y, x, z, ref, r, stencil, steps):
    a = prec.response(stack, z, x, y, r, steps, EPS, stencil, exit_mult=1e9)
    g = prec.grads_from(stack, idx, z, a)
    num = sum(((g[k] - ref[k]) ** 2).sum() for k in ref)
    den = sum((ref[k] ** 2).sum() for k in ref)
    return math.sqrt(float(num / den))


def test_float64_ep_converges_to_the_implicit_gradient_as_r_shrinks(small):
    stack, idx, y, x, relaxed, ref = small
    errors = [_error(stack, idx, y, x, relaxed.z, ref, r, "central", relaxed.steps)
              for r in (0.4, 0.04, 0.004)]
    assert errors == sorted(errors, reverse=True), errors
    assert errors[-1] < 1e-7, errors  # the bias r² falls to about 1e-8 here


@pytest.mark.parametrize("stencil", sorted(prec.STENCILS))
def test_a_stencils_measured_order_is_its_stated_order(small, stencil):
    stack, idx, y, x, relaxed, ref = small
    # large nudges, where the bias is far above the float64 floor (about 2e-8 here)
    r = 0.8
    e1 = _error(stack, idx, y, x, relaxed.z, ref, r, stencil, relaxed.steps)
    e2 = _error(stack, idx, y, x, relaxed.z, ref, r / 2, stencil, relaxed.steps)
    order = math.log2(e1 / e2)
    assert abs(order - prec.STENCILS[stencil]) < 0.35, (e1, e2, order)


def test_the_reference_refines_a_float32_state_in_float64(small):
    stack, idx, y, x, relaxed, ref = small
    s32 = dynamics.SpringStack(vocab=7, blocks=2, width=8, heads=2, context=4,
                               generator=torch.Generator().manual_seed(0))
    z32 = relax_to_convergence(s32, s32.embed(idx).detach(), EPS, tol=1e-6).z
    out = prec.reference(s32, idx, y, z32, EPS, tol=1e-13)
    assert out.converged and out.residual < 1e-13 and out.adjoint_residual < 1e-9
    assert out.z.dtype == torch.float64 and s32.tok.dtype == torch.float32  # a copy
    cos = prec.cosines(out.stack, out.grads, ref)
    assert cos["all"] == pytest.approx(1.0, abs=1e-9)  # the same stack, made in float32


def test_a_batch_reports_every_cell(small):
    stack, idx, y, x, relaxed, ref = small
    s32 = dynamics.SpringStack(vocab=7, blocks=2, width=8, heads=2, context=4,
                               generator=torch.Generator().manual_seed(0))
    z32 = relax_to_convergence(s32, s32.embed(idx).detach(), EPS, tol=1e-6).z
    out = prec.precision_batch(s32, idx, y, z32, {"eps": EPS}, rs=(0.02,), steps=300,
                               stencils=("central",))
    assert len(out["estimates"]) == 2  # float32, float64
    cell = out["estimates"][0]
    assert set(cell["cosine"]) == {"all", "block0", "block1", "embeddings"}
    assert cell["nudge_ulps_block0"] > 0


def test_the_estimator_steps_batch_holds_every_cell_and_richardson_from_the_grid():
    """The precision study's batch (ep_stack.estimator): the float32 free phase run to
    convergence, then every (precision, r) centred estimate and Richardson's where 2r is
    on the grid; a batch whose free phase does not converge is named, not estimated."""
    from credit_assign.ep_stack import estimator

    g = torch.Generator().manual_seed(0)
    s32 = dynamics.SpringStack(vocab=7, blocks=2, width=8, heads=2, context=4, generator=g)
    idx = torch.randint(0, 7, (2, 4), generator=g)
    y = torch.randint(0, 7, (2, 4), generator=g)
    s = {"eps": EPS, "fixed_point": {"tol": 1e-6, "cap": 5000, "check_every": 50}}
    study = {"r": [0.01, 0.02, 0.04], "nudged_steps_max": 300,
             "stencils": ["central", "richardson"], "precisions": ["float32", "float64"],
             "reference": {"tol": 1e-12}}
    out = estimator.batch_estimates(s32, idx, y, s, study)
    assert out["free"]["converged"] and out["reference"]["residual"] < 1e-12
    cells = {(e["precision"], e["stencil"], e["r"]) for e in out["estimates"]}
    assert cells == {(p, "central", r) for p in ("float32", "float64")
                     for r in (0.01, 0.02, 0.04)} | {
        (p, "richardson", r) for p in ("float32", "float64") for r in (0.01, 0.02)}
    f64 = {(e["stencil"], e["r"]): e["cosine"]["all"] for e in out["estimates"]
           if e["precision"] == "float64"}
    assert f64[("central", 0.01)] > 0.999999
    capped = estimator.batch_estimates(s32, idx, y, {**s, "fixed_point": {
        "tol": 1e-6, "cap": 5, "check_every": 5}}, study)
    assert not capped["free"]["converged"] and "estimates" not in capped
