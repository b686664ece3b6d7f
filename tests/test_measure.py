"""The measurement variants' cosines and sets (credit_assign.science.measurement), on small
tensors."""

import math

import pytest
import torch
from torch.nn import functional as F

from credit_assign.science.diagnostics import (
    eps_clamp_cosine,
    eps_denominator_cosine,
    flattened_cosine,
    per_sample_cosine,
)
from credit_assign.science.inputs import diagnostic_indices, mixed_indices


def pair(n=64, d=16, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, d, generator=g), torch.randn(n, d, generator=g)


def test_the_eps_cosine_is_torchs_cosine_similarity_where_the_clamp_bites_and_not():
    a, b = pair()
    a[:24] *= 1e-10  # a's rows below eps
    b[16:40] *= 1e-10  # both tiny in 16:24, b alone in 24:40, ordinary in 40:
    expected = F.cosine_similarity(a, b, dim=1, eps=1e-8).mean().item()
    assert eps_clamp_cosine(a, b) == pytest.approx(expected, rel=1e-6, abs=1e-9)
    # float64 input is measured in float32, as a float32 model's probe would
    assert eps_clamp_cosine(a.double(), b.double()) == pytest.approx(expected, rel=1e-6)
    ordinary = F.cosine_similarity(a[40:], b[40:], dim=1, eps=1e-8).mean().item()
    assert eps_clamp_cosine(a[40:], b[40:]) == pytest.approx(ordinary, rel=1e-6)


def test_the_eps_cosine_agrees_at_ordinary_scales_and_shrinks_below_eps():
    a, b = pair()
    b = b + 0.8 * a  # aligned, so the cosine is far from 0
    exact = per_sample_cosine(a, b)
    assert eps_clamp_cosine(a, b) == pytest.approx(exact, abs=1e-6)
    assert eps_denominator_cosine(a, b) == pytest.approx(exact, abs=1e-6)
    # the exact cosine is scale-free; the epsilon ones collapse when norms are < 1e-8
    tiny_a, tiny_b = a * 1e-10, b * 1e-10
    assert per_sample_cosine(tiny_a, tiny_b) == pytest.approx(exact, abs=1e-6)  # f32 scaling
    assert abs(eps_clamp_cosine(tiny_a, tiny_b)) < 0.05 * abs(exact)
    assert abs(eps_denominator_cosine(tiny_a, tiny_b)) < 1e-6
    # only one side tiny: the clamp scales the cosine by that side's ‖·‖/eps
    only_a = eps_clamp_cosine(a * 1e-10, b)
    assert abs(only_a) < 0.1 * abs(exact) and only_a * exact > 0


def test_the_eps_denominator_and_flattened_cosines_by_hand():
    a = torch.tensor([[3.0, 4.0], [1.0, 0.0], [0.0, 0.0]])
    b = torch.tensor([[4.0, 3.0], [2.0, 0.0], [1.0, 1.0]])
    # rows: 24/(5·5 + 1e-8), 2/(1·2 + 1e-8), 0/(0 + 1e-8)
    rows = [24 / (25 + 1e-8), 2 / (2 + 1e-8), 0.0]
    assert eps_denominator_cosine(a, b) == pytest.approx(sum(rows) / 3, rel=1e-6)
    # flattened: (12 + 12 + 2 + 0) / (‖a‖_F ‖b‖_F) = 26 / (√26 · √31)
    assert flattened_cosine(a, b) == pytest.approx(26 / math.sqrt(26 * 31), rel=1e-12)
    # the per-sample mean leaves the zero row out; the flattened cosine weights by norm
    assert per_sample_cosine(a, b) == pytest.approx((24 / 25 + 1) / 2)
    assert math.isnan(flattened_cosine(torch.zeros(2, 2), b[:2]))
    # the flattened cosine is dominated by large rows: scale row 0 up, it tends to row 0's
    big_a, big_b = a.clone(), b.clone()
    big_a[0] *= 1e6
    big_b[0] *= 1e6
    assert flattened_cosine(big_a, big_b) == pytest.approx(24 / 25, rel=1e-6)
    assert per_sample_cosine(big_a, big_b) == pytest.approx(per_sample_cosine(a, b))


@pytest.mark.parametrize("n", [128, 2048])
def test_the_mixed_draw_covers_every_class_of_a_class_sorted_set(n):
    labels = torch.arange(10).repeat_interleave(1000)  # a class-sorted image folder
    idx = mixed_indices(labels, n, seed=0)
    assert len(idx) == n and len(set(idx.tolist())) == n
    assert set(labels[idx].tolist()) == set(range(10))
    assert torch.equal(idx, mixed_indices(labels, n, seed=0))  # deterministic
    assert not torch.equal(idx, mixed_indices(labels, n, seed=1))
    assert not torch.equal(idx.sort().values, torch.arange(n))  # not the first n
    assert len(labels[:n].unique()) <= 3  # which would be one to three classes
    assert torch.equal(mixed_indices(labels, 64, seed=0), idx[:64])  # one_batch: its start
    # the stratified set is another draw, class-balanced
    strat = diagnostic_indices(labels, n, seed=0)
    assert torch.bincount(labels[strat], minlength=10).min() >= n // 10 - 1


def test_the_mixed_draw_refuses_one_class_and_takes_all_of_a_small_set():
    assert torch.equal(mixed_indices(torch.tensor([0, 1, 1]), 10, 0).sort().values,
                       torch.arange(3))
    labels = torch.tensor([0] * 999 + [1])
    with pytest.raises(ValueError, match="one class"):
        mixed_indices(labels, 2, seed=0)  # (999·998)/(1000·999): almost surely one class


def test_measure_on_a_small_model_scales_the_epsilon_cosines_with_the_batch():
    """A DFA model whose signals and gradients are tiny: the exact cosine does not move
    with the batch size, the clamped one does (its gradient is 1/batch per image)."""
    from credit_assign.science import measurement as measure
    from credit_assign.science.learning_rules import feedback_generator, make_rule
    from credit_assign.science.model import ResidualMLP

    torch.manual_seed(0)
    model = ResidualMLP(in_features=12, width=8, depth=3, n_classes=4)
    rule = make_rule("dfa", model, 0.0, None, feedback_generator(0, 0))
    g = torch.Generator().manual_seed(3)
    x, y = torch.randn(64, 12, generator=g), torch.randint(0, 4, (64,), generator=g)
    s64, g64, h, used = measure.signals_and_grads(rule, model, x, y, 64)
    s8, g8, _, used8 = measure.signals_and_grads(rule, model, x, y, 8)
    assert used == [64] and used8 == [8] and h.shape == (64, 8)
    for a, b in zip(g8, g64, strict=True):  # per-image gradient of a batch-mean CE: 1/batch
        assert torch.allclose(a, 8 * b, rtol=1e-4, atol=1e-7)
    exact64 = measure.cosines("exact", s64, g64)
    exact8 = measure.cosines("exact", s8, g8)
    assert exact8["cosine"] == pytest.approx(exact64["cosine"], abs=1e-5)
    assert len(exact64["cosine"]) == 4 and exact64["deep_cosine"] == pytest.approx(
        sum(exact64["cosine"][1:]) / 3)
    # scaled far below eps (as at a large batch), the clamped cosine collapses toward 0
    tiny = ([a * 1e-9 for a in s64], [b * 1e-9 for b in g64])
    assert abs(measure.cosines("eps_cos", *tiny)["deep_cosine"]) < abs(
        exact64["deep_cosine"])


def test_the_gain_weighted_cosine_is_what_w1s_update_sees():
    """``gain``: signal and gradient at h_l as W1's update sees them, (v W2_l) ⊙
    GELU′(pre_l), by hand on every block; the embedding's unchanged; a signal equal to
    the gradient gives cosine 1, and a layer without a signal stays None."""
    from credit_assign.science.measurement import gain_weighted
    from credit_assign.science.model import ResidualMLP

    torch.manual_seed(0)
    model = ResidualMLP(12, 8, 3, 4, branch_init_std=0.5).double()
    x = torch.randn(10, 12, dtype=torch.float64)
    grads = [torch.randn(10, 8, dtype=torch.float64) for _ in range(4)]
    signals = [torch.randn(10, 8, dtype=torch.float64) for _ in range(3)] + [None]
    u, v = gain_weighted(model, x, signals, grads)
    assert u[0] is signals[0] and v[0] is grads[0] and u[3] is None
    h = model(x).h
    for l in (1, 2, 3):
        block = model.blocks[l - 1]
        pre = block.fc1(block.norm(h[l - 1])).detach()
        cdf = 0.5 * (1 + torch.erf(pre / math.sqrt(2)))
        gelu_prime = cdf + pre * torch.exp(-pre**2 / 2) / math.sqrt(2 * math.pi)
        torch.testing.assert_close(v[l], (grads[l] @ block.fc2.weight.detach()) * gelu_prime)
        if signals[l] is not None:
            torch.testing.assert_close(u[l], (signals[l] @ block.fc2.weight.detach())
                                       * gelu_prime)
    same_u, same_v = gain_weighted(model, x, grads, grads)
    assert all(per_sample_cosine(a, b) == pytest.approx(1.0) for a, b in
               zip(same_u, same_v, strict=True))
