"""Recipe variants that are a λ rescale in disguise (docs/method.md, "Equivalent
recipes"), checked through the project's own training step: ``train.new_state``
(model, rule, the project's AdamW, the lr schedule) and ``train.train_epoch`` (the rule's
``RuleOutput.grads`` put into ``p.grad``, one optimizer step per batch).

DFA trains each block on ⟨f_l, a_l⟩ + λ‖f‖² (input detached), the embedding on
⟨h_0, a_0⟩, LN_out and head on CE. Every parameter tensor gets its gradient from one of
these terms only, so a constant factor on a tensor's whole gradient sequence is all that
differs when

* ``error_reduction: sum`` at λ vs ``mean`` at λ/B: e, hence a_l, is B× larger, and
  ⟨f, B·a⟩ + λ‖f‖² = B·(⟨f, a⟩ + (λ/B)‖f‖²) (head and LN_out: the same CE);
* ``feedback_scale: fan_in`` at λ vs ``unit`` at λ·√C: fan_in draws the same matrices
  divided by √C (C classes), so a_l is 1/√C as large, and
  ⟨f, a/√C⟩ + λ‖f‖² = (1/√C)·(⟨f, a⟩ + λ√C‖f‖²).

Adam's step m̂/(√v̂ + ε) does not change when a tensor's gradients are all multiplied by
the same constant — except through ε — and AdamW's weight decay is decoupled (θ ← θ −
lr·wd·θ, no gradient in it), so the two runs take the same steps up to ε. With B and C
powers of two every rescaling is exact in floating point, so with ε = 0 the runs are
bit-identical; with the project's ε = 1e-8 they differ by about ε/√v̂ per step.
"""

import pytest
import torch

from credit_assign.science import training as train

B, C, D, STEPS = 16, 16, 12, 40  # powers of two: the rescalings are exact in float32
LAM = 1e-2

# With ε = 1e-8 each step's update differs between the two runs by a relative ≈ ε/√v̂.
# Here √v̂ (the gradient's RMS per element, mean-reduced) is ≳ 2e-3 on every tensor, so
# ≲ 5e-6 per step; over 40 steps, fed back through the dynamics, we measure ≈ 1e-4
# (and 1e-7 with ε = 1e-12, 0 with ε = 0). A λ off by the factor differs by > 1e-2.
EPS_TOL = 1e-3
DIFFERENT = 1e-2


def run_dfa(lam, monkeypatch=None, eps=None, batch=B, **rule):
    """Train DFA (ResidualMLP d = 16, L = 2) for STEPS AdamW steps on random data through
    ``train.new_state`` and ``train.train_epoch``; returns the final parameters.
    ``eps`` replaces AdamW's ε in the optimizer the project built."""
    if eps is not None:
        built = train.adamw

        def adamw(params, lr, weight_decay):
            opt = built(params, lr, weight_decay)
            for group in opt.param_groups:
                group["eps"] = eps
            return opt

        monkeypatch.setattr(train, "adamw", adamw)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(STEPS * batch, D, generator=g), torch.randint(C, (STEPS * batch,),
                                                                    generator=g)
    run = {"seed": 3, "method": "dfa", "lam": lam, "options": rule,
           "model": {"width": 16, "depth": 2, "final_norm": True, "branch_init_std": 0.01},
           "training": {"epochs": 1, "batch_size": batch, "lr": 1e-2, "weight_decay": 1e-2,
                        "schedule_step": "batch", "nonfinite_policy": "continue"}}
    info = {"shape": [D], "classes": [str(k) for k in range(C)]}
    state, params, per_batch = train.new_state(run, info, "cpu", STEPS)
    batches = train.Batches(x, y, batch, lambda v: v, "none", 0,
                            torch.Generator().manual_seed(1))
    train.train_epoch(state, params, batches, per_batch, "cpu")
    if eps is not None:
        monkeypatch.undo()
    return {k: v.detach().clone() for k, v in state.model.state_dict().items()}


def rel_diff(a, b) -> float:
    """The largest relative difference ‖a − b‖/‖b‖ over the parameter tensors."""
    return max(((a[k] - b[k]).norm() / b[k].norm()).item() for k in b if b[k].norm() > 0)


@pytest.mark.parametrize("lam", [LAM, 0.0])
def test_summed_error_at_lam_is_mean_error_at_lam_over_batch(lam, monkeypatch):
    summed = run_dfa(lam, error_reduction="sum")
    mean = run_dfa(lam / B, error_reduction="mean")
    assert rel_diff(summed, mean) < EPS_TOL
    # ε is the only difference: without it the runs are the same bits
    assert rel_diff(run_dfa(lam, monkeypatch, 0.0, error_reduction="sum"),
                    run_dfa(lam / B, monkeypatch, 0.0, error_reduction="mean")) == 0.0
    if lam:  # the test can fail: mean at λ itself is another recipe
        assert rel_diff(summed, run_dfa(lam, error_reduction="mean")) > DIFFERENT


def test_summed_error_equivalence_holds_for_a_batch_not_a_power_of_two():
    """B = 10: the rescaling now rounds too, still far inside the ε tolerance."""
    assert rel_diff(run_dfa(LAM, batch=10, error_reduction="sum"),
                    run_dfa(LAM / 10, batch=10, error_reduction="mean")) < EPS_TOL


def test_fan_in_feedback_at_lam_is_unit_feedback_at_lam_times_sqrt_classes(monkeypatch):
    fan_in = run_dfa(LAM, feedback_scale="fan_in")
    unit = run_dfa(LAM * C**0.5, feedback_scale="unit")
    assert rel_diff(fan_in, unit) < EPS_TOL
    assert rel_diff(run_dfa(LAM, monkeypatch, 0.0, feedback_scale="fan_in"),
                    run_dfa(LAM * C**0.5, monkeypatch, 0.0, feedback_scale="unit")) == 0.0
    assert rel_diff(fan_in, run_dfa(LAM, feedback_scale="unit")) > DIFFERENT
