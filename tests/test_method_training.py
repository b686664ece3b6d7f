"""Recipe keys: per-method overrides, the lr schedules, which parameters AdamW decays.
Each changes only what it should; a config that does not use them keeps its bytes."""

import itertools
import math

import pytest
import torch

from credit_assign.planning.method_training import method_training
from credit_assign.science import schedule
from credit_assign.science.model import ResidualMLP

TRAINING = {"epochs": 3, "batch_size": 128, "lr": 1e-3, "weight_decay": 0.01,
            "schedule": "cosine", "schedule_step": "batch", "decay": "all",
            "augmentation": "crop_flip", "crop_padding": 4, "nonfinite_policy": "continue",
            "device": "auto", "per_method": {"fa": {"epochs": 100}, "dfa": {"lr": 3e-3}}}


def test_per_method_overrides_apply_to_their_method_only():
    fa, bp = method_training(TRAINING, "fa"), method_training(TRAINING, "bp")
    assert fa["epochs"] == 100 and bp["epochs"] == 3
    assert method_training(TRAINING, "dfa")["lr"] == 3e-3 and bp["lr"] == 1e-3
    assert "per_method" not in bp
    # keys added after the first results are recorded only when not at their default
    assert "schedule" not in bp and "decay" not in bp
    slip = method_training({**TRAINING, "schedule": "constant", "decay": "weights"}, "bp")
    assert slip["schedule"] == "constant" and slip["decay"] == "weights"


def lrs(training, batches_per_epoch=5):
    """The lr of every batch of the run, as the training loop steps the scheduler."""
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=1.0)
    fn, per_batch = schedule.lr_schedule(training, batches_per_epoch)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, fn)
    out = []
    for _ in range(training["epochs"]):
        for _ in range(batches_per_epoch):
            out.append(opt.param_groups[0]["lr"])
            opt.step()
            if per_batch:
                sched.step()
        if not per_batch:
            sched.step()
    return out


def test_constant_schedule_gives_the_same_lr_at_every_step():
    assert set(lrs({**TRAINING, "schedule": "constant"})) == {1.0}


def test_per_batch_cosine_falls_every_batch_to_near_zero():
    out = lrs(TRAINING)
    assert all(a > b for a, b in itertools.pairwise(out))
    assert out[0] == 1.0 and out[-1] < 0.02


def test_epoch_slip_changes_the_lr_only_at_epoch_boundaries_and_barely():
    out = lrs({**TRAINING, "schedule_step": "epoch_slip"}, batches_per_epoch=5)
    epochs = [out[i:i + 5] for i in range(0, 15, 5)]
    assert all(len(set(e)) == 1 for e in epochs)  # constant within an epoch
    assert epochs[1][0] < epochs[0][0]
    # period = 15 batches, stepped twice: the last epoch's lr is cos-schedule(2/15)
    assert epochs[2][0] == pytest.approx(0.5 * (1 + math.cos(math.pi * 2 / 15)))
    proper = lrs({**TRAINING, "schedule_step": "epoch"}, batches_per_epoch=5)
    assert proper[-1] == pytest.approx(0.25) and epochs[2][0] > 0.9


def _decay_only_step(decay):
    model = ResidualMLP(12, 8, 2, 3, branch_init_std=0.01)
    with torch.no_grad():  # LayerNorm gains 1 and biases 0 by default: make decay visible
        for p in model.parameters():
            p.add_(0.5)
    params = dict(model.named_parameters())
    before = {n: p.detach().clone() for n, p in params.items()}
    opt = torch.optim.AdamW(schedule.param_groups(params, {"decay": decay}), lr=0.1,
                            weight_decay=0.5)
    for p in params.values():
        p.grad = torch.zeros_like(p)  # no gradient: only the decay moves a parameter
    opt.step()
    return {n: not torch.equal(p, before[n]) for n, p in params.items()}


def test_decay_weights_leaves_norms_and_biases_untouched_by_decay():
    moved = _decay_only_step("weights")
    assert moved["embed.weight"] and moved["blocks.0.fc1.weight"] and moved["head.weight"]
    for name in ("blocks.0.norm.weight", "blocks.0.norm.bias", "blocks.0.fc1.bias",
                 "norm_out.weight", "norm_out.bias", "embed.bias", "head.bias"):
        assert not moved[name], name
    assert all(_decay_only_step("all").values())  # torch's default: every parameter decays
