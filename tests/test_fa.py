"""Feedback Alignment's two backward forms (rules/fa.py): standard FA is BP when its
feedback matrices equal the forward weights; the feedback scales draw what they say."""

import pytest
import torch

from credit_assign.science.diagnostics import alignment, fresh_b_null_cosines, true_hidden_grads
from credit_assign.science.learning_rules import feedback_generator, make_rule, options_of
from credit_assign.science.learning_rules.fa import FAOptions
from credit_assign.science.model import ResidualMLP

JACOBIAN = {"backward": "jacobian", "feedback_scale": "unit", "in_block": "exact"}


def rough_model(residual=True, final_norm=True, seed=5):
    """Non-zero branches, random biases, LayerNorm affine parameters away from 1 and 0:
    every factor of the backward pass matters."""
    torch.manual_seed(seed)
    model = ResidualMLP(12, 8, 3, 4, final_norm=final_norm, branch_init_std=0.5,
                        residual=residual).double()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.copy_(0.3 * torch.randn_like(p))
            elif "norm" in name:  # LayerNorm gains
                p.copy_(1 + 0.5 * torch.randn_like(p))
    return model


def exact_feedback(model):
    """The standard form's feedback set equal to the current forward weights."""
    fb = []
    for block in model.blocks:
        fb += [block.fc1.weight.detach().clone(), block.fc2.weight.detach().clone()]
    return fb + [model.head.weight.detach().clone()]


@pytest.mark.parametrize("residual, final_norm", [(True, True), (False, True), (True, False)])
def test_standard_fa_with_the_forward_weights_is_bp(batch, residual, final_norm):
    x, y = batch
    model = rough_model(residual, final_norm)
    rule = make_rule("fa", model, 0.0)
    assert [b.shape for b in rule.feedback] == [b.shape for b in exact_feedback(model)]
    rule.feedback = exact_feedback(model)
    grads, _, _ = true_hidden_grads(model, x, y)
    assert all(g.abs().max() > 1e-6 for g in grads)
    # the rule runs on what a local (graph-cut) forward leaves, as in training
    signals = rule.teaching_signals(model, model(x, local=True), y)
    for a, g in zip(signals, grads, strict=True):
        torch.testing.assert_close(a, g, rtol=1e-10, atol=1e-14)
    report = alignment(rule, model, x, y)
    assert report["cosine"] == pytest.approx([1.0] * 4, abs=1e-12)


def test_standard_signals_do_not_need_grad_mode(batch):
    x, y = batch
    model = rough_model()
    rule = make_rule("fa", model, 0.0, generator=torch.Generator().manual_seed(0))
    cache = model(x, local=True)
    with_grad = rule.teaching_signals(model, cache, y)
    with torch.no_grad():
        without = rule.teaching_signals(model, cache, y)
    for a, b in zip(with_grad, without, strict=True):
        assert not a.requires_grad
        torch.testing.assert_close(a, b, rtol=0, atol=0)


@pytest.mark.parametrize("in_block", ["feedback", "exact"])
def test_standard_fa_updates_with_the_forward_weights_are_bp(batch, in_block):
    """With B = W (λ = 0) the signals are g_l, and each block's local loss ⟨f_l, g_l⟩ has
    BP's gradient for that block's parameters (through B = W, or through W), the
    embedding's ⟨h_0, g_0⟩ BP's for the embedding; LN_out and the head get the true CE
    gradient."""
    x, y = batch
    model = rough_model()
    rule = make_rule("fa", model, 0.0, {"in_block": in_block})
    rule.feedback = exact_feedback(model)
    out = rule.update(model, model(x, local=True), y)
    bp = make_rule("bp", model, 0.0).update(model, model(x), y)
    assert out.grads.keys() == bp.grads.keys()
    assert any(n.startswith("blocks.") for n in bp.grads)
    for name, g in bp.grads.items():
        assert g.abs().max() > 1e-8, name
        torch.testing.assert_close(out.grads[name], g, rtol=1e-10, atol=1e-14)
    torch.testing.assert_close(out.loss, bp.loss, rtol=0, atol=0)


def test_random_feedback_is_neither_bp_nor_the_jacobian_form(batch):
    x, y = batch
    model = rough_model()
    standard = make_rule("fa", model, 0.0, {"feedback_scale": "unit"},
                         feedback_generator(42))
    jacobian = make_rule("fa", model, 0.0, JACOBIAN, feedback_generator(42))
    cache = model(x, local=True)
    a_std = standard.teaching_signals(model, cache, y)
    a_jac = jacobian.teaching_signals(model, cache, y)
    grads, _, _ = true_hidden_grads(model, x, y)
    for s, j, g in zip(a_std, a_jac, grads, strict=True):
        assert s.shape == j.shape == g.shape
        assert not torch.allclose(s, j)
        assert not torch.allclose(s, g)
    assert max(alignment(standard, model, x, y)["cosine"]) < 0.99


@pytest.mark.parametrize("options", [{}, JACOBIAN], ids=["standard", "jacobian"])
def test_feedback_is_drawn_once_per_seed_and_saved(small_model, options):
    def draw(*key):
        return make_rule("fa", small_model, 0.0, options, feedback_generator(*key)).feedback

    same, again, fresh = draw(42), draw(42), draw(42, 0)
    assert all(torch.equal(a, b) for a, b in zip(same, again, strict=True))
    assert not any(torch.equal(a, b) for a, b in zip(same, fresh, strict=True))
    rule = make_rule("fa", small_model, 0.0, options, feedback_generator(7))
    rule.load_state_dict(make_rule("fa", small_model, 0.0, options,
                                   feedback_generator(42)).state_dict())
    assert all(torch.equal(a, b) for a, b in zip(rule.feedback, same, strict=True))
    assert all(b.dtype == torch.float64 for b in rule.feedback)


def test_a_jacobian_checkpoint_is_refused_by_the_standard_form(small_model):
    old = make_rule("fa", small_model, 0.0, JACOBIAN).state_dict()
    with pytest.raises(ValueError, match="before methods.fa.backward existed"):
        make_rule("fa", small_model, 0.0).load_state_dict(old)


def test_init_scale_draws_each_b_like_its_forward_weight():
    d = 256
    model = ResidualMLP(12, d, 2, 10, branch_init_std=0.05)
    rule = make_rule("fa", model, 0.0, generator=torch.Generator().manual_seed(0))
    bound = d**-0.5  # nn.Linear's default: U(±1/√fan_in), std bound/√3
    fc1 = torch.stack([rule.feedback[0], rule.feedback[2]])
    fc2 = torch.stack([rule.feedback[1], rule.feedback[3]])
    head = rule.feedback[4]
    assert head.shape == model.head.weight.shape
    for b in (fc1, head):
        assert b.abs().max() <= bound and b.abs().max() > 0.95 * bound
        assert b.std().item() == pytest.approx(bound / 3**0.5, rel=0.05)
    assert fc2.std().item() == pytest.approx(0.05, rel=0.02)
    assert fc2.mean().abs().item() < 0.002
    # the forward weights at init have the same spread
    assert model.blocks[0].fc2.weight.std().item() == pytest.approx(0.05, rel=0.02)
    assert model.head.weight.abs().max().item() <= bound


@pytest.mark.parametrize("backward", ["standard", "jacobian"])
def test_unit_and_fan_in_scales(backward):
    model = ResidualMLP(12, 256, 2, 10)
    for scale, std in [("unit", 1.0), ("fan_in", None)]:
        in_block = "exact" if backward == "jacobian" else "feedback"
        rule = make_rule("fa", model, 0.0, {"backward": backward, "feedback_scale": scale,
                                             "in_block": in_block},
                         torch.Generator().manual_seed(1))
        for b in rule.feedback:
            expected = std if std is not None else b.shape[1] ** -0.5
            assert b.std().item() == pytest.approx(expected, rel=0.1)


def test_options_default_to_standard_init_and_refuse_init_for_the_jacobian_form():
    assert FAOptions().to_config() == {"backward": "standard", "feedback_scale": "init",
                                       "in_block": "feedback", "error_reduction": "mean",
                                       "train_embedding": True}
    with pytest.raises(ValueError, match="methods.fa.feedback_scale `init` .* backward `jacobian`"):
        options_of("fa", {"backward": "jacobian"})
    with pytest.raises(ValueError, match="methods.fa.backward must be one of"):
        options_of("fa", {"backward": "transpose"})
    with pytest.raises(ValueError, match="^feedback_scale"):
        FAOptions(backward="jacobian")
    assert options_of("fa", JACOBIAN).feedback_scale == "unit"
    # DFA's options are untouched: no `init`, no backward
    with pytest.raises(ValueError, match="methods.dfa.feedback_scale must be one of"):
        options_of("dfa", {"feedback_scale": "init"})
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['backward'\]"):
        options_of("dfa", {"backward": "standard"})


@pytest.mark.parametrize("options", [{}, JACOBIAN], ids=["standard", "jacobian"])
def test_fresh_b_null_runs_on_an_fa_model(batch, options):
    """The null redraws FA's feedback with make_rule and feedback_generator(seed, k): each
    draw is another set of the same shapes, and the trained-with set gives its own cosine."""
    x, y = batch
    model = rough_model()
    rule = make_rule("fa", model, 0.0, options, feedback_generator(42))
    null = fresh_b_null_cosines(rule, model, x, y, draws=3, seed=42, method="fa")
    assert null["trained"]["deep_cosine"] == alignment(rule, model, x, y)["deep_cosine"]
    assert len(set(null["fresh"]["deep_cosine"])) == 3
    assert null["trained"]["deep_cosine"] not in null["fresh"]["deep_cosine"]


def test_standard_fa_updates_a_block_through_its_random_matrices(batch):
    """B ≠ W: standard FA (in_block feedback) gives W1 the gradient Lillicrap et al.'s FA
    gives it — ((a_l B2) ⊙ GELU′(pre))ᵀ LN(h) — W2 and b2 the exact local ones, LN_out
    its gradient through e B_head; in_block exact gives W1 the in-block BP gradient
    ((a_l W2) ⊙ GELU′(pre))ᵀ LN(h). Checked by hand on every block."""
    import torch.nn.functional as F

    x, y = batch
    model = rough_model()
    fa = make_rule("fa", model, 0.0, {"feedback_scale": "unit"}, feedback_generator(3))
    exact = make_rule("fa", model, 0.0, {"feedback_scale": "unit", "in_block": "exact"},
                      feedback_generator(3))
    cache = model(x, local=True)
    out, out_exact = fa.update(model, cache, y), exact.update(model, model(x, local=True), y)
    signals = out.signals
    for l, block in enumerate(model.blocks):
        b2 = fa.feedback[2 * l + 1]
        h = cache.h[l].detach().requires_grad_()
        z = block.norm(h).detach()
        pre = block.fc1(z).detach().requires_grad_()
        (gelu_grad,) = torch.autograd.grad(F.gelu(pre).sum(), pre)
        a = signals[l + 1]
        by_b = ((a @ b2) * gelu_grad).T @ z
        by_w = ((a @ block.fc2.weight.detach()) * gelu_grad).T @ z
        assert not torch.allclose(by_b, by_w)
        torch.testing.assert_close(out.grads[f"blocks.{l}.fc1.weight"], by_b)
        torch.testing.assert_close(out_exact.grads[f"blocks.{l}.fc1.weight"], by_w)
        torch.testing.assert_close(out.grads[f"blocks.{l}.fc2.weight"],
                                   a.T @ F.gelu(pre.detach()))
        torch.testing.assert_close(out.grads[f"blocks.{l}.fc2.bias"], a.sum(0))
    # LN_out: its gain's gradient is Σ (e B_head) ⊙ the normalised h_L
    top = cache.h[-1].detach()
    e = torch.softmax(model.head(model.norm_out(top)), 1)
    e[torch.arange(len(y)), y] -= 1
    e = e / len(y)
    normed = torch.nn.functional.layer_norm(top, top.shape[1:], eps=model.norm_out.eps)
    torch.testing.assert_close(out.grads["norm_out.weight"],
                               ((e @ fa.feedback[-1]) * normed).sum(0))
    torch.testing.assert_close(out.grads["head.weight"],
                               e.T @ model.norm_out(top).detach())
    # the signals themselves do not depend on in_block
    for s, t in zip(out.signals, out_exact.signals, strict=True):
        torch.testing.assert_close(s, t, rtol=0, atol=0)


def test_in_block_feedback_needs_the_standard_form():
    with pytest.raises(ValueError, match="set in_block to `exact`"):
        options_of("fa", {"backward": "jacobian", "feedback_scale": "unit"})
