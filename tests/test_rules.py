"""Learning rules against autograd and against their known special cases."""

import pytest
import torch
from torch.nn import functional as F

from credit_assign.science.diagnostics import alignment, per_sample_cosine, true_hidden_grads
from credit_assign.science.learning_rules import make_rule, output_error
from credit_assign.science.model import ResidualMLP, branch_penalty


def autograd_grads(model, loss):
    params = dict(model.named_parameters())
    grads = torch.autograd.grad(loss, list(params.values()), allow_unused=True)
    return {n: g if g is not None else torch.zeros_like(p)
            for (n, p), g in zip(params.items(), grads, strict=True)}


@pytest.mark.parametrize("lam", [0.0, 0.01])
def test_bp_updates_equal_autograd(small_model, batch, lam):
    x, y = batch
    rule = make_rule("bp", small_model, lam)
    out = rule.update(small_model, small_model(x), y)
    cache = small_model(x)
    expected = autograd_grads(small_model, F.cross_entropy(cache.logits, y)
                              + lam * branch_penalty(cache.f))
    assert out.grads.keys() == expected.keys()
    for name in expected:
        torch.testing.assert_close(out.grads[name], expected[name], rtol=1e-12, atol=1e-14)


def test_output_error_is_the_logit_gradient(batch, small_model):
    x, y = batch
    logits = small_model(x).logits.detach().requires_grad_()
    (g,) = torch.autograd.grad(F.cross_entropy(logits, y), logits)
    torch.testing.assert_close(output_error(logits, y, "mean"), g)
    torch.testing.assert_close(output_error(logits, y, "sum"), g * len(y))


def linear_readout_model(zero_branches: bool):
    torch.manual_seed(3)
    model = ResidualMLP(12, 8, 3, 4, final_norm=False).double()
    if zero_branches:  # every block is the identity map: ∂h_l/∂h_{l-1} = I
        for block in model.blocks:
            torch.nn.init.zeros_(block.fc2.weight)
            torch.nn.init.zeros_(block.fc2.bias)
    return model


def test_dfa_signal_at_last_state_is_exact_with_transposed_readout(batch):
    x, y = batch
    model = linear_readout_model(zero_branches=False)
    rule = make_rule("dfa", model, 0.0)
    rule.feedback = [model.head.weight.detach().T.clone() for _ in rule.feedback]
    grads, cache, _ = true_hidden_grads(model, x, y)
    signals = rule.teaching_signals(model, cache, y)
    torch.testing.assert_close(signals[-1], grads[-1])
    # deeper states are not exact: the blocks' Jacobians are not the identity
    assert not torch.allclose(signals[0], grads[0])


FA_JACOBIAN = {"backward": "jacobian", "feedback_scale": "unit", "in_block": "exact"}
METHODS = [("dfa", None), ("fa", None), ("fa", FA_JACOBIAN)]
METHOD_IDS = ["dfa", "fa", "fa_jacobian"]
# the rules whose block learns by autograd on its local loss through its true weights
# (standard FA's default, in_block feedback, goes through B2, B1: tests/test_fa.py)
LOCAL_AUTOGRAD = [("dfa", None), ("fa", {"in_block": "exact"}), ("fa", FA_JACOBIAN)]
LOCAL_AUTOGRAD_IDS = ["dfa", "fa_in_block_exact", "fa_jacobian"]


@pytest.mark.parametrize("method, options", METHODS, ids=METHOD_IDS)
def test_signals_equal_true_gradients_with_exact_feedback(batch, method, options):
    x, y = batch
    model = linear_readout_model(zero_branches=True)
    rule = make_rule(method, model, 0.0, options)
    readout = model.head.weight.detach().T.clone()  # d×C, = (∂logits/∂h_L)ᵀ
    if method == "dfa":
        rule.feedback = [readout for _ in rule.feedback]
    elif options == FA_JACOBIAN:  # each block is the identity, so its transposed Jacobian is I
        rule.feedback = [torch.eye(8, dtype=torch.float64)] * 3 + [readout]
    else:  # standard FA: B2 = W2 = 0 makes each branch's backward zero whatever B1 is
        for i, block in enumerate(model.blocks):
            assert not torch.equal(rule.feedback[2 * i], block.fc1.weight)
            rule.feedback[2 * i + 1] = block.fc2.weight.detach().clone()
        rule.feedback[-1] = readout.T.clone()  # C×d, the head's own W
    grads, cache, _ = true_hidden_grads(model, x, y)
    for a, g in zip(rule.teaching_signals(model, cache, y), grads, strict=True):
        torch.testing.assert_close(a, g)
    report = alignment(rule, model, x, y)
    assert report["cosine"] == pytest.approx([1.0] * 4, abs=1e-12)


@pytest.mark.parametrize("method, options", LOCAL_AUTOGRAD, ids=LOCAL_AUTOGRAD_IDS)
@pytest.mark.parametrize("lam", [0.0, 0.3])
def test_local_updates_match_per_module_autograd(small_model, batch, method, options, lam):
    """Each block's update is the gradient of its own local loss alone: no gradient
    crosses blocks, the penalty enters only its own branch, the head sees true CE."""
    x, y = batch
    rule = make_rule(method, small_model, lam, options, torch.Generator().manual_seed(0))
    out = rule.update(small_model, small_model(x, local=True), y)
    cache = small_model(x)
    a = [s.detach() for s in rule.teaching_signals(small_model, cache, y)]
    for i, block in enumerate(small_model.blocks, start=1):
        f_l = block(cache.h[i - 1].detach())
        local = (f_l * a[i]).sum() + lam * f_l.pow(2).sum(1).mean()
        for (name, _p), g in zip(block.named_parameters(),
                                torch.autograd.grad(local, list(block.parameters())), strict=True):
            torch.testing.assert_close(out.grads[f"blocks.{i - 1}.{name}"], g)
    embed_loss = (small_model.embed(x) * a[0]).sum()
    embed_grads = torch.autograd.grad(embed_loss, list(small_model.embed.parameters()))
    for (name, _p), g in zip(small_model.embed.named_parameters(), embed_grads, strict=True):
        torch.testing.assert_close(out.grads[f"embed.{name}"], g)
    head_loss = F.cross_entropy(small_model.head(small_model.norm_out(cache.h[-1].detach())), y)
    readout = small_model.readout_parameters()
    names = [n for n, p in small_model.named_parameters() if any(p is q for q in readout)]
    for name, g in zip(names, torch.autograd.grad(head_loss, readout), strict=True):
        torch.testing.assert_close(out.grads[name], g)


def test_penalty_gradient_matches_autograd(small_model, batch):
    x, y = batch
    f = [t.detach().requires_grad_() for t in small_model(x).f]
    grads = torch.autograd.grad(branch_penalty(f), f)
    for fl, g in zip(f, grads, strict=True):  # d/df of mean_n ‖f_n‖² = 2 f / N
        torch.testing.assert_close(g, 2 * fl.detach() / len(fl))


def test_dfa_embedding_can_be_frozen(small_model, batch):
    x, y = batch
    rule = make_rule("dfa", small_model, 0.0, {"train_embedding": False})
    assert not any(n.startswith("embed.") for n in rule.trainable(small_model))
    out = rule.update(small_model, small_model(x, local=True), y)
    assert not any(n.startswith("embed.") for n in out.grads)


@pytest.mark.parametrize("embedding_signal", ["bp", "dfa"])
def test_frozen_trains_only_embedding_and_readout(small_model, batch, embedding_signal):
    x, y = batch
    rule = make_rule("frozen", small_model, 0.0,
                     {"embedding_signal": embedding_signal})
    trainable = rule.trainable(small_model)
    assert trainable and not any(n.startswith("blocks.") for n in trainable)
    out = rule.update(small_model, small_model(x, local=rule.local), y)
    assert set(out.grads) == set(trainable)
    if embedding_signal == "bp":  # BP through the frozen blocks: the true embedding gradient
        cache = small_model(x)
        expected = autograd_grads(small_model, F.cross_entropy(cache.logits, y))
        torch.testing.assert_close(out.grads["embed.weight"], expected["embed.weight"])


@pytest.mark.parametrize("embedding_signal", ["bp", "dfa"])
def test_frozen_blocks_alignment_is_not_applicable(small_model, batch, embedding_signal):
    """The frozen blocks receive no teaching signal: their cosines and the deep cosine are
    None (drawn and tabulated as "—"), not the trivial cos(g, g) = 1."""
    x, y = batch
    rule = make_rule("frozen", small_model, 0.0,
                     {"embedding_signal": embedding_signal})
    report = alignment(rule, small_model, x, y)
    assert report["cosine"][0] is not None and report["cosine"][1:] == [None] * 3
    assert report["deep_cosine"] is None
    if embedding_signal == "bp":  # the embedding's signal is its true gradient
        assert report["cosine"][0] == pytest.approx(1.0, abs=1e-12)


def test_bp_alignment_is_computed_and_one(small_model, batch):
    x, y = batch
    report = alignment(make_rule("bp", small_model, 0.0), small_model, x, y)
    assert report["cosine"] == pytest.approx([1.0] * 4, abs=1e-12)
    assert report["deep_cosine"] == pytest.approx(1.0, abs=1e-12)


def test_cosine_of_a_vector_with_itself_is_one():
    g = torch.randn(32, 7, dtype=torch.float64)
    assert per_sample_cosine(g, g) == pytest.approx(1.0, abs=1e-15)


def test_cosine_excludes_zero_rows_and_has_no_epsilon():
    u = torch.tensor([[1.0, 0.0], [0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    v = torch.tensor([[1.0, 0.0], [3.0, 1.0], [1.0, -1.0]], dtype=torch.float64)
    # row 1 has a zero vector: left out, so the mean is over rows 0 and 2 only
    assert per_sample_cosine(u, v) == pytest.approx(0.5)
    # magnitude-free: tiny gradients (DFA's reach 1e-10 and below) give the same cosine
    assert per_sample_cosine(u * 1e-30, v * 1e-12) == pytest.approx(0.5)
    assert per_sample_cosine(u.float() * 1e-30, v.float()) == pytest.approx(0.5)
    assert torch.isnan(torch.tensor(per_sample_cosine(torch.zeros(3, 2), v)))


def test_unknown_rule_and_negative_lambda_are_refused(small_model):
    with pytest.raises(ValueError, match="unknown learning rule 'sdil'"):
        make_rule("sdil", small_model, 0.0)
    with pytest.raises(ValueError, match="λ must be >= 0"):
        make_rule("dfa", small_model, -1.0)
