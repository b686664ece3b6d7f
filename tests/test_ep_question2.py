"""EP's second question (issue #55): its job computes the precision study's estimate in
the judged cell (the same computation, proved here, not run twice), its plan is checked,
and its judge names every seed's outcome and decides by the plan's rule."""

import copy

import pytest
import torch
import yaml
from conftest import SPRING_EPS

from credit_assign.ep_stack import dynamics, estimator, question2
from credit_assign.studies.ep_question2 import judge, plan

EPS = SPRING_EPS
S = {"eps": EPS, "fixed_point": {"tol": 1e-6, "cap": 5000, "check_every": 50,
                                 "eigenvalues": 2, "batches": 3}}
EST = {"judged": {"precision": "float64", "r": 0.02, "nudged_steps_max": 300},
       "beside": [{"precision": "float32", "r": 0.02, "nudged_steps_max": 300}],
       "reference": {"tol": 1e-12, "cap": 200000, "adjoint_tol": 1e-10}}


def _small():
    g = torch.Generator().manual_seed(0)
    stack = dynamics.SpringStack(vocab=7, blocks=2, width=8, heads=2, context=4,
                                 generator=g)
    return (stack, torch.randint(0, 7, (2, 4), generator=g),
            torch.randint(0, 7, (2, 4), generator=g))


def test_the_judged_cell_is_the_precision_studys_float64_estimate():
    """The same stack and batch: the second question's judged cell (float64, r) equals
    the precision study's float64 centred estimate at r, to the last digit, and the
    float32 cell beside it the study's float32 one."""
    stack, idx, y = _small()
    q2 = question2.batch(stack, idx, y, S, EST)
    study = {"r": [0.02], "nudged_steps_max": 300, "stencils": ["central"],
             "precisions": ["float32", "float64"], "reference": EST["reference"]}
    pe = estimator.batch_estimates(stack, idx, y, S, study)
    assert q2["free"] == pe["free"] and q2["reference"] == pe["reference"]
    by = {e["precision"]: e["cosine"] for e in pe["estimates"]}
    assert q2["estimates"][0]["cosine"] == by["float64"]
    assert q2["estimates"][1]["cosine"] == by["float32"]
    assert q2["estimates"][0]["cosine"]["block0"] > 0.999999
    assert q2["eigenvalues"][0]["real"] < 0  # a stable fixed point of this small stack


def test_a_batch_that_does_not_converge_is_named_with_its_spectrum_not_estimated():
    stack, idx, y = _small()
    capped = question2.batch(stack, idx, y, {**S, "fixed_point": {
        **S["fixed_point"], "cap": 5, "check_every": 5}}, EST)
    assert not capped["free"]["converged"] and "estimates" not in capped
    assert len(capped["eigenvalues"]) == 2


def _plan():
    return yaml.safe_load((plan.ROOT / plan.PLAN).read_text())


def test_the_plan_refuses_a_fresh_seed_used_before_and_a_wrong_key(tmp_path):
    good = _plan()
    p = tmp_path / "p.yaml"
    p.write_text(yaml.safe_dump(good))
    assert plan.load(p)["claim"]["threshold"] == 0.9
    bad = copy.deepcopy(good)
    bad["seeds"]["fresh"][0] = 7
    p.write_text(yaml.safe_dump(bad))
    with pytest.raises(plan.PlanError, match=r"fresh seeds \[7\] were used before"):
        plan.load(p)
    bad = copy.deepcopy(good)
    bad["decision"]["confidnce"] = 0.95
    p.write_text(yaml.safe_dump(bad))
    with pytest.raises(plan.PlanError, match="decision"):
        plan.load(p)
    bad = copy.deepcopy(good)
    bad["seeds"]["fresh"] = [10, 11, 12]
    p.write_text(yaml.safe_dump(bad))
    with pytest.raises(plan.PlanError, match="seeds.fresh"):
        plan.load(p)


def _result(seed, cosines=(0.99, 0.98, 0.995), converged=True, lead=-0.05, diverged=None,
            adjoint=1e-11):
    def batch(b, c):
        out = {"batch": b, "free": {"converged": converged, "steps": 100, "residual": 1e-8},
               "eigenvalues": [{"real": lead, "imag": 0.0}]}
        if converged:
            out["reference"] = {"residual": 1e-13, "converged": True, "steps": 10,
                                "adjoint_residual": adjoint}
            out["estimates"] = [
                {**EST_PLAN["judged"], "cosine": {"block0": c, "all": c},
                 "nudge_ulps_block0": 2.0},
                {**EST_PLAN["beside"][0], "cosine": {"block0": c - 0.1, "all": c},
                 "nudge_ulps_block0": 2.0}]
        return out

    return {"seed": seed, "settings": {"fixed_point": {"batches": 3}},
            "pretrain": {"val_loss": 3.0}, "diverged": diverged,
            "batches": [] if diverged else [batch(b, c) for b, c in enumerate(cosines)]}


EST_PLAN = {"judged": {"precision": "float64", "r": 0.005, "nudged_steps_max": 500},
            "beside": [{"precision": "float32", "r": 0.005, "nudged_steps_max": 500}]}


def test_every_seed_is_named_with_its_outcome_and_the_rule_decides():
    p = _plan()
    p["estimator"] = {**p["estimator"], **EST_PLAN}
    fresh = p["seeds"]["fresh"]
    results = [_result(fresh[0]), _result(fresh[1], (0.97, 0.99, 0.985)),
               _result(fresh[2], (0.999, 0.99, 0.98)),
               _result(fresh[3], converged=False),
               _result(fresh[4], lead=0.01),
               _result(fresh[5], diverged="not finite")]
    found = judge.findings(p, results)
    reasons = {r["seed"]: r["reason"] for r in found["seeds"]}
    assert reasons == {fresh[0]: None, fresh[1]: None, fresh[2]: None,
                       fresh[3]: "not_converged", fresh[4]: "unstable",
                       fresh[5]: "diverged"}
    v = found["verdict"]
    assert v["n_judged"] == 3 and v["verdict"] == "holds" and v["low"] > 0.9
    assert [c["judged"] for c in found["cells"]] == [True, False]
    assert found["cells"][1]["mean"] == pytest.approx(v["mean"] - 0.1)
    # a run still to be made: undecided, and why
    assert judge.findings(p, results[:5])["verdict"]["reason"] == "runs_waiting"
    # a reference short of the plan's tolerance: not judged, named
    short = _result(fresh[0], adjoint=1e-6)
    row = judge.seed_row(p, short)
    assert row["effect"] is None and row["reason"] == "no_reference"
    # too few judged: undecided because of it
    few = [results[0], results[1], *results[3:], _result(fresh[2], converged=False)]
    assert judge.findings(p, few)["verdict"]["reason"] == "no_stable_fixed_point"


def test_an_interval_straddling_the_threshold_is_undecided_and_one_below_contradicted():
    p = _plan()
    p["estimator"] = {**p["estimator"], **EST_PLAN}
    fresh = p["seeds"]["fresh"]
    wide = [_result(s, (c, c, c)) for s, c in zip(fresh, (0.99, 0.6, 0.95, 0.8, 0.99, 0.7),
                                                   strict=True)]
    assert judge.findings(p, wide)["verdict"]["verdict"] == "undecided"
    low = [_result(s, (c, c, c)) for s, c in zip(fresh, (0.5, 0.52, 0.49, 0.51, 0.5, 0.5),
                                                  strict=True)]
    assert judge.findings(p, low)["verdict"]["verdict"] == "contradicted"


def test_the_papers_macros_name_every_seed_and_a_sentence_without_words_stops():
    """ep2.tex carries each fresh seed's effect or why it is not judged ('per seed,
    always'); a page sentence written for one outcome stops, named, on another."""
    from credit_assign.studies.ep_question2 import facts, page, tex

    p = _plan()
    p["estimator"] = {**p["estimator"], **EST_PLAN}
    fresh = p["seeds"]["fresh"]
    results = [_result(s, (0.99, 0.98, 0.97)) for s in fresh[:5]]
    results.append(_result(fresh[5], converged=False))
    q2 = facts.question2({**judge.findings(p, results), "estimator": p["estimator"]})
    assert [r["seed"] for r in q2["per_seed"]] == fresh
    pf = {"outcomes": {"float64_flat": "yes"}, "seeds": [7], "n": 1, "r_min": 0.00125,
          "r_max": 0.16, "float64_per_seed": [{"seed": 7, "cos": 0.99298, "err_min": 0.00702,
                                               "err_max": 0.00702, "err_abs": 0.00702,
                                               "spread": 1.9e-7}],
          "float64_err_min": 0.007, "float64_spread": 1e-7, "richardson32": 0.8,
          "ulps_0.005": 1.5, "remade": [],
          "richardson32_seeds": (0.8, 0.8),
          **{f"{k}_{r}": 0.9 for k in ("float32", "float64") for r in facts.GRID},
          **{f"{k}_{r}_seeds": (0.9, 0.9) for k in ("float32", "float64") for r in facts.GRID}}
    text = tex.macros(pf, q2)
    assert (r"\csname eptwo@q2@perseed\endcsname{" + "; ".join(
        [f"{s}: 0.9800" for s in fresh[:5]] + [f"{fresh[5]}: not converged"]) + "}") in text
    with pytest.raises(page.GuardError, match="the findings say holds"):
        page.guard(q2["outcomes"], "question2", "undecided_runs_waiting", "No verdict yet.")


def test_the_precision_studys_outcomes_are_judged_seed_by_seed():
    """A mean over seeds can hide a seed that does not show what the sentence says: each
    outcome is 'yes' where every seed shows it, 'mixed' where some do; the pages quote
    each mean beside the range of the seeds' means."""
    import pandas as pd

    from credit_assign.studies.ep_question2 import facts, page

    rows = []
    # seed 1: float32's error falls as r grows (rounding); seed 2: it rises
    f32 = {1: {0.00125: 0.5, 0.005: 0.85, 0.02: 0.97}, 2: {0.00125: 0.97, 0.005: 0.9, 0.02: 0.8}}
    for seed in (1, 2):
        for r in facts.GRID:
            for p, cos in (("float32", f32[seed][r]), ("float64", 0.99)):
                for stencil, c in (("central", cos), ("richardson", cos - 0.05)):
                    rows.append({"group": "block0", "precision": p, "stencil": stencil,
                                 "r": r, "seed": seed, "batch": 0, "cosine": c,
                                 "nudge_ulps_block0": 1.5})
    pf = facts.precision(pd.DataFrame(rows), pd.DataFrame())
    assert pf["outcomes"]["float32_rounding"] == "mixed"
    assert pf["outcomes"]["float64_flat"] == "yes"
    assert pf["outcomes"]["richardson_worse"] == "yes"
    assert pf["float32_0.005"] == pytest.approx(0.875)
    assert pf["float32_0.005_seeds"] == (0.85, 0.9)
    assert page.seed_range(pf, "float32_0.005") == " (seed means 0.850 to 0.900)"
    with pytest.raises(page.GuardError, match="float32_rounding"):
        page.guard(pf["outcomes"], "float32_rounding", "yes", "Rounding limits every seed.")


def test_a_seed_with_no_float64_error_left_is_named_and_one_that_moves_stops():
    """float64's 1 − cos per seed: a remainder flat in r, or none left (the relative
    rule cannot hold at zero: the outcome is mixed and the words say why); a seed whose
    error moves with r has no words and stops the page."""
    from credit_assign.studies.ep_question2 import page

    pf = {"float64_per_seed": [
        {"seed": 7, "cos": 0.99298, "err_min": 0.00702, "err_max": 0.00702,
         "err_abs": 0.00702, "spread": 1.9e-7},
        {"seed": 9, "cos": 1.0, "err_min": -1.6e-15, "err_max": 2.7e-15,
         "err_abs": 2.7e-15, "spread": None}]}
    words = page.float64_per_seed(pf)
    assert words == ("seed 7: 0.9930 at every r (1 − cos varies by a fraction 1.9e-07 of "
                     "itself); seed 9: 1 at every r, to within 3e-15 (no error left)")
    pf["float64_per_seed"].append({"seed": 6, "cos": 0.9, "err_min": 0.05, "err_max": 0.2,
                                   "err_abs": 0.2, "spread": 3.0})
    with pytest.raises(page.GuardError, match="seed 6"):
        page.float64_per_seed(pf)
