"""The EP stack probe: the force field, EP against BPTT, hindsight selection, the corpora,
and the probe job (determinism, resume)."""

import json
import sys
from pathlib import Path

import pandas as pd
import pytest
import torch

from credit_assign.analysis import ep_stack_tables as ep_summary
from credit_assign.ep_stack import dynamics as eps
from credit_assign.ep_stack.corpus import CharCorpus, DataMissingError, encode, read_corpus
from credit_assign.studies.ep_probe import page as ep_stack_page

ROOT = Path(__file__).resolve().parents[1]
V, K, C, H, T, B = 11, 2, 16, 2, 8, 4


def stack(internal="transformer", seed=0, **kw):
    return eps.SpringStack(V, K, C, H, T, internal=internal,
                           generator=torch.Generator().manual_seed(seed), **kw)


@pytest.fixture
def data():
    g = torch.Generator().manual_seed(3)
    return torch.randint(V, (B, T), generator=g), torch.randint(V, (B, T), generator=g)


def cosines(st, idx, y, aep=True, free=600, nudged=300, r=0.01):
    params = st.field_params()
    ref = eps.as_dict(params, eps.bptt_grads(st, idx, y, free, 0.1, params))
    grads, info = eps.ep_grads(st, idx, y, free, 0.1, r, nudged, aep=aep, exit_mult=1e9)
    return eps.group_cosines(st, eps.as_dict(params, grads), ref), info


# ---- the force field ------------------------------------------------------------------
def test_springs_and_leak_are_minus_the_gradient_of_their_energy():
    st = stack("none")
    g = torch.Generator().manual_seed(1)
    z = torch.randn(K, B, T, C, generator=g, requires_grad=True)
    x = torch.randn(B, T, C, generator=g)
    below = torch.cat([x[None], z[:-1]])
    energy = st.gamma / 2 * ((z - below) ** 2).sum() + st.leak / 2 * (z ** 2).sum()
    (grad,) = torch.autograd.grad(energy, z)
    torch.testing.assert_close(st.force(z, x), -grad)


def test_gradient_internal_force_has_a_symmetric_jacobian():
    st = stack("gradient")
    z = torch.randn(K, 2, T, C, generator=torch.Generator().manual_seed(2))
    v = torch.randn_like(z)
    _, jv = torch.func.jvp(st.internal_force, (z,), (v,))
    _, vjp = torch.func.vjp(st.internal_force, z)
    torch.testing.assert_close(jv, vjp(v)[0], rtol=1e-4, atol=1e-5)


def test_cost_gradient_in_closed_form_equals_autograd(data):
    idx, y = data
    st = stack()
    z = torch.randn(K, B, T, C, generator=torch.Generator().manual_seed(4), requires_grad=True)
    (auto,) = torch.autograd.grad(st.loss(z, y), z)
    torch.testing.assert_close(st.cost_grad(z.detach(), y), auto)


def test_checkpointed_bptt_equals_plain_bptt(data):
    idx, y = data
    st = stack()
    plain = eps.bptt_grads(st, idx, y, 37, 0.1)
    ckpt = eps.bptt_grads(st, idx, y, 37, 0.1, checkpoint_every=10)
    for a, b in zip(plain, ckpt, strict=True):
        torch.testing.assert_close(a, b)


# ---- EP against BPTT --------------------------------------------------------------------
@pytest.mark.parametrize("internal", ["gradient", "none"])
def test_ep_agrees_with_bptt_when_the_field_is_conservative(internal, data):
    cos, info = cosines(stack(internal), *data)
    assert info["residual"] < 1e-5
    for group, value in cos.items():
        if internal == "none" and group.startswith("block"):
            assert value is None  # nothing to learn in the blocks
        else:
            assert value > 0.99, (group, value)


def test_aep_correction_is_what_makes_ep_work_on_the_transformer_stack(data):
    with_aep, _ = cosines(stack(), *data, aep=True)
    without, _ = cosines(stack(), *data, aep=False)
    assert with_aep["all"] > 0.99
    assert all(with_aep[g] - without[g] > 0.3 for g in with_aep), (with_aep, without)


def test_ep_equals_the_seed_loop_on_the_same_weights(data):
    """Our EP (Jacobian linearised once, both phases in one batch) against a port of
    the seed's loop (jvp and vjp rebuilt at every step, phases one after the other)."""
    sys.path.insert(0, str(ROOT / "bench"))
    import ep_stack_seed_port as sp

    idx, y = data
    ours = stack()
    port = sp.EQStack(V, K, C, H, T)
    sp.load_ours(port, ours.state_dict())
    theirs, res_port, tb_port = sp.ep_grads(port, idx, y, 50, 0.1, 0.02, 60)
    mine, info = eps.ep_grads(ours, idx, y, 50, 0.1, 0.02, 60)
    assert info["t_best"] == tb_port
    assert info["residual"] == pytest.approx(res_port, rel=1e-3)
    w_qkv = torch.cat([theirs[id(port.blocks[0][n])] for n in ("WQ", "WK", "WV")], 1)
    for a, b in ((mine[0], theirs[id(port.tok)]), (mine[2], w_qkv)):
        a, b = a.reshape(-1).double(), b.reshape(-1).double()
        # equal up to float32 rounding divided by 2r
        assert (a @ b / (a.norm() * b.norm())).item() > 0.9999


# ---- hindsight selection ----------------------------------------------------------------
def test_hindsight_keeps_the_estimate_with_the_smallest_increment():
    h = eps.Hindsight(exit_mult=5.0, min_t=0)
    values = [0.0, 1.0, 1.5, 1.6, 1.65, 2.0]  # increments 1, .5, .1, .05, .35
    stops = [h.update(t, torch.tensor([v])) for t, v in enumerate(values, 1)]
    assert h.t_best == 5 and h.estimate().item() == pytest.approx(1.65)
    assert [t for t, _ in h.increments] == [2, 3, 4, 5, 6]
    assert stops == [False] * 5 + [True]  # .35 > 5 × .05: stop


def test_hindsight_waits_min_t_and_stops_on_nonfinite():
    h = eps.Hindsight(exit_mult=2.0, min_t=10)
    assert not h.update(1, torch.tensor([0.0]))
    assert not h.update(2, torch.tensor([1.0]))
    assert not h.update(3, torch.tensor([1.1]))
    assert not h.update(4, torch.tensor([5.0]))  # jump, but before min_t
    assert h.update(11, torch.tensor([float("nan")]))
    assert h.t_best == 3


def test_ep_run_returns_the_reading_with_the_smallest_increment(data):
    _, info = cosines(stack(), *data, free=100, nudged=80)
    ts, incs = zip(*info["increments"], strict=True)
    assert info["t_best"] == ts[min(range(len(incs)), key=incs.__getitem__)]


# ---- corpora ------------------------------------------------------------------------------
def test_pydoc_corpus_is_offline_and_batches_are_next_character_windows():
    corpus = CharCorpus({"name": "pydoc", **encode(read_corpus("pydoc"))})
    n = sum(len(s) for s in corpus.splits.values())
    assert len(corpus.splits["train"]) == int(0.9 * n)
    x, y = corpus.get_batch("train", 5, 12, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (5, 12)
    torch.testing.assert_close(x[:, 1:], y[:, :-1])
    x2, _ = corpus.get_batch("train", 5, 12, torch.Generator().manual_seed(0))
    assert torch.equal(x, x2)
    assert int(x.max()) < len(corpus.vocab)


def test_tiny_shakespeare_copy_is_checked(tmp_path):
    wrong = tmp_path / "input.txt"
    wrong.write_text("First Citizen:\nnot the whole play\n")
    with pytest.raises(DataMissingError, match="sha256"):
        read_corpus("tinyshakespeare", str(wrong))
    with pytest.raises(DataMissingError, match="not a file"):
        read_corpus("tinyshakespeare", str(tmp_path / "missing.txt"))


def test_failed_download_names_the_url_and_the_file(tmp_path, monkeypatch):
    import pooch

    def offline(*args, **kwargs):
        raise ConnectionError("network unreachable")

    monkeypatch.setattr(pooch, "retrieve", offline)
    with pytest.raises(DataMissingError, match="tinyshakespeare.txt") as err:
        read_corpus("tinyshakespeare", "download", tmp_path)
    assert "raw.githubusercontent.com" in str(err.value)


# ---- the probe job ---------------------------------------------------------------------
SETTINGS = {
    "model": {"blocks": 2, "width": 16, "heads": 2, "context": 16, "gamma": 1.0, "leak": 1.0},
    "batch_size": 4, "eps": 0.1, "resume_every": 2,
    "pretrain": {"steps": 4, "relax_steps": 20, "lr": 1e-3, "weight_decay": 1e-4,
                 "grad_clip": 5.0, "precision": "bfloat16", "compile": False,
                 "checkpoint_every": 0},
    "probe": {"batches": 2, "reference_steps": 40, "free_steps": [20, 40], "r": 0.02,
              "nudged_steps_max": 30, "check_every": 5, "exit_mult": 5.0, "aep": True,
              "checkpoint_every": 15, "compile": False},
}


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory):
    from credit_assign.ep_stack.corpus import prepare_corpus

    path = tmp_path_factory.mktemp("corpus") / "pydoc.pt"
    prepare_corpus("pydoc", "", Path("data"), path)
    return path


def probe(corpus_file, out_dir, resume=None):
    from credit_assign.jobs import ep_stack_probe as ep_probe_job

    out = out_dir / "seed0.json"
    ep_probe_job(corpus_file, "pydoc", 0, SETTINGS, out, out_dir / "seed0.timings.json",
                 resume=resume, threads=1)
    return out


@pytest.mark.job
def test_probe_job_writes_a_valid_deterministic_result(corpus_file, tmp_path):
    from credit_assign.infra.results import read_result

    first = probe(corpus_file, tmp_path / "a")
    again = probe(corpus_file, tmp_path / "b")
    assert first.read_bytes() == again.read_bytes()
    result = read_result(first, "ep_stack")
    assert len(result["pretrain"]["loss"]) == 4
    assert [p["batch"] for p in result["probes"]] == [0, 1]
    for p in result["probes"]:
        assert [e["free_steps"] for e in p["ep"]] == [20, 40]
        assert set(p["ep"][0]["cosine"]) == {"all", "block0", "block1", "embeddings"}
    timings = json.loads((tmp_path / "a" / "seed0.timings.json").read_text())
    assert timings["peak_rss_mb"] > 0 and len(timings["probes"]) == 2


@pytest.mark.job
def test_killed_probe_resumes_to_the_same_result(corpus_file, tmp_path, monkeypatch):
    from credit_assign.ep_stack import probe as ep_probe

    whole = probe(corpus_file, tmp_path / "whole")
    resume = tmp_path / "part" / "seed0.resume.pt"
    real = ep_probe.probe_batch
    calls = []

    def killed_after_one_batch(*args, **kwargs):
        if calls:
            raise KeyboardInterrupt("killed")
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(ep_probe, "probe_batch", killed_after_one_batch)
    with pytest.raises(KeyboardInterrupt):
        probe(corpus_file, tmp_path / "part", resume=resume)
    saved = torch.load(resume, weights_only=True)
    assert saved["state"]["step"] == 4 and len(saved["state"]["probes"]) == 1
    monkeypatch.setattr(ep_probe, "probe_batch", real)
    part = probe(corpus_file, tmp_path / "part", resume=resume)
    assert part.read_bytes() == whole.read_bytes()
    assert not resume.exists()


@pytest.mark.parametrize("precision, autocast", [("float32", False), ("bfloat16", True)])
def test_configured_precision_reaches_pretraining_and_the_record(corpus_file, tmp_path,
                                                                  monkeypatch, precision,
                                                                  autocast):
    """The config's pretraining precision is what the force runs under during
    pretraining (float32: no autocast at all), the probe always runs without autocast,
    and the result's provenance and timings name the precision."""
    from credit_assign import jobs
    from credit_assign.ep_stack import probe as ep_probe
    from credit_assign.infra.results import read_result

    seen = {"pretrain": set(), "probe": set(), "other": set()}
    phase = ["other"]
    real_force, real_batch = eps.SpringStack.force, ep_probe.probe_batch
    real_step = ep_probe.pretrain_step

    def pretrain_step(*args, **kwargs):
        phase[0] = "pretrain"
        try:
            return real_step(*args, **kwargs)
        finally:
            phase[0] = "other"  # the validation loss after pretraining: float32

    def force(self, z, x):
        seen[phase[0]].add((torch.is_autocast_enabled("cpu"),
                            torch.get_autocast_dtype("cpu") if torch.is_autocast_enabled("cpu")
                            else None))
        return real_force(self, z, x)

    def probe_batch(*args, **kwargs):
        phase[0] = "probe"
        return real_batch(*args, **kwargs)

    monkeypatch.setattr(eps.SpringStack, "force", force)
    monkeypatch.setattr(ep_probe, "probe_batch", probe_batch)
    monkeypatch.setattr(ep_probe, "pretrain_step", pretrain_step)
    settings = {**SETTINGS, "pretrain": {**SETTINGS["pretrain"], "steps": 2,
                                         "precision": precision},
                "probe": {**SETTINGS["probe"], "batches": 1}}
    out = tmp_path / "seed0.json"
    jobs.ep_stack_probe(corpus_file, "pydoc", 0, settings, out, tmp_path / "t.json",
                        threads=1)
    expected = {(True, torch.bfloat16)} if autocast else {(False, None)}
    assert seen["pretrain"] == expected
    assert seen["probe"] == seen["other"] == {(False, None)}
    result = read_result(out, "ep_stack")
    assert result["provenance"]["precision"] == {"pretrain": precision, "probe": "float32"}
    assert json.loads((tmp_path / "t.json").read_text())["precision"] == precision


@pytest.mark.compile
def test_bf16_and_compiled_steps_approximate_the_float32_gradient(data, monkeypatch):
    idx, y = data
    st = stack()
    exact = eps.bptt_grads(st, idx, y, 30, 0.1)
    low = eps.bptt_grads(st, idx, y, 30, 0.1, step=eps.make_step(st, 0.1, "bfloat16"))
    a = torch.cat([g.reshape(-1) for g in exact]).double()
    b = torch.cat([g.reshape(-1) for g in low]).double()
    assert (a @ b / (a.norm() * b.norm())).item() > 0.95

    def broken(fn, **kwargs):  # a machine without a C++ compiler
        def call(*args):
            raise RuntimeError("no C++ compiler")
        return call

    monkeypatch.setattr(torch, "compile", broken)
    fallback = eps.bptt_grads(st, idx, y, 30, 0.1,
                              step=eps.make_step(st, 0.1, "float32", compile=True))
    for g, h in zip(exact, fallback, strict=True):
        torch.testing.assert_close(g, h)


@pytest.mark.compile
def test_compiled_probe_phases_match_eager(data, monkeypatch):
    """``compile=True`` (free-phase step and nudged force through torch.compile) computes
    the same EP estimate; where compiling fails it falls back to eager mode exactly."""
    idx, y = data
    st = stack()
    eager, info = eps.ep_grads(st, idx, y, 40, 0.1, 0.02, 40)
    fast, info_c = eps.ep_grads(st, idx, y, 40, 0.1, 0.02, 40, compile=True)
    a = torch.cat([g.reshape(-1) for g in eager]).double()
    b = torch.cat([g.reshape(-1) for g in fast]).double()
    assert (a @ b / (a.norm() * b.norm())).item() > 0.999
    assert info_c["t_best"] == info["t_best"]

    monkeypatch.setattr(torch, "compile", lambda fn, **kw: lambda *a: 1 / 0)
    fallback, _ = eps.ep_grads(st, idx, y, 40, 0.1, 0.02, 40, compile=True)
    for g, h in zip(eager, fallback, strict=True):
        torch.testing.assert_close(g, h, rtol=0, atol=0)


# ---- the settling criterion, the summary, the figure and the paper (pure) -------------
PROBE = {"nudged_steps_max": 100, "check_every": 10}  # bound 1e-4 at max_drift 0.01


def test_settle_thresholds_come_from_the_probe_settings():
    from credit_assign.analysis import ep_stack_settle as settle

    assert settle.thresholds(PROBE) == {"max_residual": pytest.approx(1e-4), "t_best_after": 20}
    own = settle.thresholds(PROBE, {"max_drift": 0.1, "t_best_after": 50})
    assert own == {"max_residual": pytest.approx(1e-3), "t_best_after": 50}


@pytest.mark.parametrize("residual, t_best, settled, why", [
    (0.99e-4, 30, True, []),              # just below the bound, t_best past the first check
    (1.01e-4, 30, False, ["residual"]),   # just above
    (1e-6, 20, False, ["t_best"]),        # kept at the first comparison point
    (1e-6, 0, False, ["t_best"]),         # no comparison at all
    (1e-3, 20, False, ["residual", "t_best"]),
])
def test_settle_flags_an_estimate(residual, t_best, settled, why):
    from credit_assign.analysis import ep_stack_settle as settle

    f = settle.flags(residual, t_best, settle.thresholds(PROBE))
    assert f["settled"] is settled and settle.failed(f) == why


def fake_result(seed, estimates, precision="float32"):
    """A probe result with ``estimates[(batch, T1)] = (residual, t_best, block0 cosine)``."""
    settings = {"model": {"blocks": 2, "width": 16, "heads": 2, "context": 16, "gamma": 1.0,
                          "leak": 1.0}, "batch_size": 4, "eps": 0.1,
                "pretrain": {"steps": 2, "relax_steps": 20, "lr": 1e-3, "weight_decay": 1e-4,
                             "grad_clip": 5.0, "precision": precision},
                "probe": {**PROBE, "batches": 2, "reference_steps": 40, "free_steps": [50, 100],
                          "r": 0.02, "aep": True}}
    probes = {}
    for (batch, t1), (res, tb, c0) in sorted(estimates.items()):
        probes.setdefault(batch, []).append({
            "free_steps": t1, "residual": res, "t_best": tb,
            "cosine": {"all": c0, "block0": c0, "block1": 0.99, "embeddings": c0},
            "increments": [{"t": 20, "increment": 1.0}, {"t": tb, "increment": 0.5}]})
    result = {"corpus": "pydoc", "seed": seed, "settings": settings,
              "provenance": {"code": {"git_commit": "abcdef0123"}},
              "pretrain": {"loss": [3.0, 2.9], "val_loss": 2.95},
              "probes": [{"batch": b, "ep": ep} for b, ep in sorted(probes.items())]}
    timings = {"corpus": "pydoc", "precision": precision, "seed": seed, "peak_rss_mb": 100.0,
               "pretrain": 1.0, "probes": [
                   {"batch": b, "reference": 0.5,
                    "ep": [{"free_steps": e["free_steps"], "free": 0.1, "nudged": 0.2,
                            "grads": 0.1} for e in ep]} for b, ep in sorted(probes.items())]}
    return result, timings


def fake_summary():
    """Seed 0 settles everywhere (block 0 high); seed 1 settles at T1 = 100 on one batch
    only (the other batch's t_best at the first comparison), block 0 low; seed 2 never
    settles (residual), block 0 low."""
    runs = [fake_result(0, {(0, 50): (1e-5, 60, 0.97), (1, 50): (2e-5, 80, 0.95),
                            (0, 100): (1e-7, 90, 0.98), (1, 100): (1e-7, 100, 0.96)}),
            fake_result(1, {(0, 50): (1e-5, 20, 0.30), (1, 50): (1e-5, 40, 0.50),
                            (0, 100): (1e-6, 20, 0.10), (1, 100): (1e-6, 60, 0.40)}),
            fake_result(2, {(0, 50): (3e-3, 20, 0.20), (1, 50): (2e-3, 30, 0.25),
                            (0, 100): (2e-4, 40, 0.60), (1, 100): (1.5e-4, 50, 0.70)})]
    results, timings = zip(*runs, strict=True)
    cos, inc, pre, tim = ep_summary.summary_tables(list(results), list(timings))
    seeds = ep_summary.by_seed(cos)
    return results, cos, pre, tim, seeds


def test_by_seed_flags_a_seed_settled_only_when_every_batch_is():
    _, cos, _, _, seeds = fake_summary()
    assert cos["settled"].sum() == (4 + 2) * 4  # seed 0: all four estimates; seed 1: two
    one = seeds[seeds.group == "block0"].set_index(["seed", "free_steps"])
    assert one.settled.to_dict() == {(0, 50): True, (0, 100): True, (1, 50): False,
                                     (1, 100): False, (2, 50): False, (2, 100): False}
    assert one.loc[(1, 100), "batches_settled"] == 1 and one.loc[(1, 100), "batches"] == 2
    assert one.loc[(1, 100), "residual_ok"] and not one.loc[(1, 100), "t_best_ok"]
    assert not one.loc[(2, 100), "residual_ok"] and one.loc[(2, 100), "t_best_ok"]
    assert one.loc[(2, 100), "residual_max"] == pytest.approx(2e-4)
    assert one.loc[(1, 100), "t_best_min"] == 20
    assert one.loc[(0, 100), "max_residual"] == pytest.approx(1e-4)


def test_report_spreads_over_settled_seeds_and_counts_the_rest():

    results, cos, pre, tim, seeds = fake_summary()
    text = ep_stack_page.report(list(results), seeds, pre, tim, cos)
    row = next(line for line in text.splitlines() if line.startswith("| float32 | 100 |"))
    # block 0 over the one settled seed (0.97 = mean of 0.98 and 0.96), not all three
    assert "| 1 of 3 |" in row and "**0.970 (n = 1)**" in row
    assert "seed 1 (fails on t_best;" in row and "seed 2 (fails on residual;" in row
    assert "over settled seeds" in text.lower() or "settled seeds only" in text
    assert "median" not in text  # no unlabelled median left
    assert "**no** (t_best), 1 of 2" in text  # seed 1 at T1 = 100 in the every-seed table


def b0_estimates(residuals, cosines):
    """Block 0 estimates of one precision, a seed each, all settled."""
    n = len(cosines)
    return pd.DataFrame({"group": "block0", "precision": "float32", "seed": range(n),
                         "residual": residuals, "cosine": cosines, "settled": True})


def block0_section(b0) -> str:
    """The report's block 0 section on ``b0``'s estimates (fake_summary's page else)."""
    from credit_assign.reporting import render

    results, cos, pre, tim, seeds = fake_summary()
    found = ep_summary.page_findings(list(results), seeds, pre, tim, cos)
    found["residual"] = ep_summary.block0_beside_residual(b0)
    text = render.render("ep_stack.md.j2", **found)
    return text[text.index("## Block 0's cosine"):text.index("## Every seed")]


@pytest.mark.parametrize("cosines, says, direction, rho", [
    ([0.9, 0.7, 0.5, 0.1], "block 0's cosine falls as the free-phase residual rises", "falls",
     "-1.00"),
    ([0.1, 0.5, 0.7, 0.9], "block 0's cosine rises as the free-phase residual rises", "rises",
     "+1.00"),
    ([0.5, 0.9, 0.1, 0.7], "shows no clear monotone relation to the free-phase residual",
     "none", "+0.00")])
def test_block0_sentence_follows_the_sign_of_rho(cosines, says, direction, rho):
    b0 = b0_estimates([1e-6, 1e-5, 1e-4, 1e-3], cosines)
    assert ep_summary.block0_beside_residual(b0)["direction"] == direction
    text = block0_section(b0)
    assert "## Block 0's cosine beside the free-phase residual" in text
    assert says in text and f"Spearman ρ = {rho}" in text
    assert "rank correlation over the estimates" in text and "not whether" in text
    assert "What sets" not in text


def test_block0_sentence_names_an_undefined_rho():
    b0 = b0_estimates([1e-5] * 3, [0.9, 0.5, 0.1])
    found = ep_summary.block0_beside_residual(b0)
    assert found["direction"] == "undefined" and found["rho"] is None
    text = block0_section(b0)
    assert "no clear monotone relation" in text and "undefined" in text and "nan" not in text


def test_block0_section_needs_three_estimates_and_the_page_every_finding():
    from jinja2 import UndefinedError

    from credit_assign.reporting import render

    assert ep_summary.block0_beside_residual(b0_estimates([1e-5, 1e-4], [0.9, 0.5])) is None
    results, cos, pre, tim, seeds = fake_summary()
    assert "## Block 0's cosine" not in ep_stack_page.report(list(results), seeds, pre, tim)
    found = ep_summary.page_findings(list(results), seeds, pre, tim, cos)
    del found["every_seed"][0]["val_loss"]
    with pytest.raises(UndefinedError, match="val_loss"):
        render.render("ep_stack.md.j2", **found)


def test_figure_draws_unsettled_seeds_hollow():
    import matplotlib

    matplotlib.use("Agg")
    from credit_assign.studies.ep_probe import fig_ep_stack_cosines as ep_stack_cosines

    _, cos, pre, _, _ = fake_summary()
    inc = pd.DataFrame({"corpus": "pydoc", "precision": "float32", "seed": 0, "batch": 0,
                        "free_steps": 50, "t": [20, 30], "increment": [1.0, 0.5],
                        "is_best": [False, True]})
    fig = ep_stack_cosines.plot(cos, inc, pre)
    hollow = [c for ax in fig.axes for c in ax.collections
              if len(c.get_offsets()) and len(c.get_facecolors()) == 0]
    assert hollow, "no hollow markers for the unsettled seeds"
    assert "settled" in fig._suptitle.get_text()
    with pytest.raises(ValueError, match="settled"):
        ep_stack_cosines.plot(cos.drop(columns="settled"), inc, pre)


def test_ep_numbers_label_their_statistics():
    from paper_words import words

    from credit_assign.reporting.paper_ep import ep_numbers

    _, _, _, _, seeds = fake_summary()
    n = ep_numbers(seeds, "float32")
    assert n["epBlockZeroLong"] == "$+0.970$"  # over the settled seeds, counted beside it
    assert n["epUnsettledLong"] == "$2$ of $3$"
    assert "\\epseedresidualunsettled{1}{" in n["epResidualLong"]
    assert "(seed 1, unsettled)" in words("epResidualLong", n, {})
    assert n["epSettleTBest"] == "$20$"


def test_ep_numbers_list_each_seeds_block0_cosine_with_its_flag():
    """The mean over settled seeds may hide a bimodal outcome: the paper also gets block
    0's cosine seed by seed, each named with its settled flag and, when unsettled, the
    value that failed the criterion; every number from the by-seed table, each seed an
    entry of numbers.tex's list whose words are ms.tex's (\\epseedcosine …)."""
    from paper_words import words

    from credit_assign.reporting.paper import numbers_tex
    from credit_assign.reporting.paper_ep import ep_numbers

    _, _, _, _, seeds = fake_summary()
    n = ep_numbers(seeds, "float32")
    assert n["epBlockZeroSeedsLong"] == (
        "\\epseedcosine{0}{$+0.970$}; \\epseedunsettled{1}{$+0.250$}{\\epwhytbest{$20$}}; "
        "\\epseedunsettled{2}{$+0.650$}{\\epwhyresidual{$2.00 \\times 10^{-4}$}}")
    assert words("epBlockZeroSeedsLong", n, {}) == (
        "seed 0: $+0.970$ (settled); "
        "seed 1: $+0.250$ (unsettled: earliest hindsight step $20$); "
        "seed 2: $+0.650$ (unsettled: largest residual $2.00 \\times 10^{-4}$)")
    short = words("epBlockZeroSeedsShort", n, {})
    for seed in (0, 1, 2):
        assert f"seed {seed}: " in short
    assert short.count("(settled)") == 1 and short.count("unsettled") == 2
    assert ("(unsettled: largest residual $0.003$, earliest hindsight step $20$)"
            in short)
    assert "\\newcommand{\\epBlockZeroSeedsLong}{\\epseedcosine{0}" in numbers_tex(
        n, {}, "test")
    assert ep_numbers(None, "float32")["epBlockZeroSeedsLong"] == "not run"
    # no seed settled: the mean over settled seeds is not defined, ms.tex says why
    none = seeds.assign(settled=False, residual_ok=False)
    assert ep_numbers(none, "float32")["epBlockZeroLong"] == "\\epnonesettled{$3$}"
    assert words("epBlockZeroLong", ep_numbers(none, "float32"), {}) == (
        "not defined (no seed of $3$ settled)")
    # a seed marked unsettled whose criteria both pass: the table contradicts itself
    odd = seeds.assign(settled=False, residual_ok=True, t_best_ok=True)
    with pytest.raises(ValueError, match="settled column disagrees"):
        ep_numbers(odd, "float32")
