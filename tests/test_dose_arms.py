"""The dose-response study's arms (rules dfa_cap and dfa_redraw) against DFA, their known
special case, and against what each says it does."""

import copy

import pytest
import torch
from torch.nn import functional as F

from credit_assign.science.learning_rules import make_rule


def _gen(seed=5):
    return torch.Generator().manual_seed(seed)


def test_a_cap_above_every_branch_is_dfa(small_model, batch):
    x, y = batch
    dfa = make_rule("dfa", copy.deepcopy(small_model), 0.0, generator=_gen())
    cap = make_rule("dfa_cap", small_model, 0.0, {"cap": 1e9}, generator=_gen())
    a = dfa.update(small_model, small_model(x, local=True), y)
    b = cap.update(small_model, small_model(x, local=True), y)
    for name in a.grads:
        torch.testing.assert_close(a.grads[name], b.grads[name], rtol=0, atol=0)


def test_the_cap_holds_each_branch_and_steps_from_the_scaled_weights(small_model, batch):
    x, y = batch
    with torch.no_grad():  # branches well above the cap
        for block in small_model.blocks:
            block.fc2.weight.mul_(300.0)
    cap = 0.05
    rule = make_rule("dfa_cap", small_model, 0.0, {"cap": cap}, generator=_gen())
    out = rule.update(small_model, small_model(x, local=True), y)
    cache = small_model(x, local=True)
    for f_l in cache.f:  # the step's batch: every median at the cap (they were above it)
        assert float(f_l.detach().norm(dim=1).median()) == pytest.approx(cap, rel=1e-9)
    # the gradient is DFA's at the scaled weights, on the same batch and feedback
    dfa = make_rule("dfa", small_model, 0.0, generator=_gen())
    expected = dfa.update(small_model, cache, y)
    for name in expected.grads:
        torch.testing.assert_close(out.grads[name], expected.grads[name], rtol=1e-12,
                                   atol=1e-14)


def test_the_cap_replaces_the_penalty(small_model):
    with pytest.raises(ValueError, match="dfa_cap runs at λ = 0"):
        make_rule("dfa_cap", small_model, 1e-2)


def test_redrawing_more_rarely_than_the_steps_is_dfa(small_model, batch):
    x, y = batch
    dfa = make_rule("dfa", small_model, 1e-2, generator=_gen())
    redraw = make_rule("dfa_redraw", small_model, 1e-2, {"redraw_every": 100},
                       generator=_gen())
    for _ in range(3):
        a = dfa.update(small_model, small_model(x, local=True), y)
        b = redraw.update(small_model, small_model(x, local=True), y)
        for name in a.grads:
            torch.testing.assert_close(a.grads[name], b.grads[name], rtol=0, atol=0)


def test_the_feedback_is_redrawn_every_k_steps_reproducibly_and_on_resume(small_model,
                                                                          batch):
    x, y = batch

    def feedback_per_step(rule, steps):
        seen = []
        for _ in range(steps):
            rule.update(small_model, small_model(x, local=True), y)
            seen.append([b.clone() for b in rule.feedback])
        return seen

    rule = make_rule("dfa_redraw", small_model, 1e-2, {"redraw_every": 2}, generator=_gen())
    first = [b.clone() for b in rule.feedback]
    seen = feedback_per_step(rule, 6)
    same = [all(torch.equal(p, q) for p, q in zip(u, v, strict=True))
            for u, v in zip([first, *seen[:-1]], seen, strict=True)]
    # steps 0 and 1 use the first B, 2 and 3 a new one, 4 and 5 another
    assert same == [True, True, False, True, False, True]
    again = make_rule("dfa_redraw", small_model, 1e-2, {"redraw_every": 2}, generator=_gen())
    for u, v in zip(seen, feedback_per_step(again, 6), strict=True):
        assert all(torch.equal(p, q) for p, q in zip(u, v, strict=True))
    # a rule rebuilt from a checkpoint after step 3 draws what the run through drew
    rule = make_rule("dfa_redraw", small_model, 1e-2, {"redraw_every": 2}, generator=_gen())
    feedback_per_step(rule, 3)
    resumed = make_rule("dfa_redraw", small_model, 1e-2, {"redraw_every": 2},
                        generator=_gen(99))
    resumed.load_state_dict(copy.deepcopy(rule.state_dict()))
    for u, v in zip(seen[3:], feedback_per_step(resumed, 3), strict=True):
        assert all(torch.equal(p, q) for p, q in zip(u, v, strict=True))


def test_redrawn_feedback_keeps_its_scale(small_model, batch):
    x, y = batch
    rule = make_rule("dfa_redraw", small_model, 0.0, {"redraw_every": 1}, generator=_gen())
    for _ in range(2):
        rule.update(small_model, small_model(x, local=True), y)
    assert rule.feedback[0].dtype == torch.float64
    assert [tuple(b.shape) for b in rule.feedback] == [(8, 4)] * 4
    e = F.one_hot(y, 4).double()
    assert torch.isfinite(e @ rule.feedback[1].T).all()
