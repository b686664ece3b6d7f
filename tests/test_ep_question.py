"""The EP question's judge (credit_assign.analysis.ep_question, config/claims_ep.yaml):
a seed without a stable fixed point is named and never judged, the seen seeds never
enter the verdict, and the verdict is the file's t-interval against its threshold."""

import copy
import json
import math
import os

import numpy as np
import pytest
from scipy import stats

from credit_assign.analysis import ep_question as q
from credit_assign.planning.claims import ClaimsError, load_ep

SPEC = load_ep("config/claims_ep.yaml")
CELL = SPEC["claim"]["effect"]


def _batch(b: int, cos: float, converged=True, lead=-0.5, residual=1e-8, other=0.2):
    """A probe batch as fixed_point_batch writes it: the claim's cell at block 0 has
    ``cos``; every other cell and group ``other``."""
    ep = []
    for t1 in (150, "converged"):
        for t2 in (120, 500):
            for r in (0.005, 0.02):
                mine = (t1 == CELL["free_steps"] and t2 == CELL["nudged_steps_max"]
                        and r == CELL["r"])
                refs = {"bptt400": {"block0": other, "block1": other}}
                if converged:
                    refs["implicit"] = {"block0": cos if mine else other, "block1": other}
                ep.append({"free_steps": t1, "nudged_steps_max": t2, "r": r,
                           "residual": residual if t1 == "converged" else 1e-4,
                           "t_best": 50.0, "cosine": refs})
    out = {"batch": b, "converged": converged, "steps": 900 if converged else 20000,
           "residual": residual if converged else 1e-4, "residual_log": [],
           "eigenvalues": [{"real": lead, "imag": 0.0}],
           "growth": [{"power": 1, "norm": 1.0}, {"power": 10, "norm": 3.0}], "ep": ep}
    if converged:
        out["adjoint"] = {"residual": 1e-9, "iterations": 40, "converged": True}
    return out


def _result(seed: int, cosines, **kw) -> dict:
    return {"seed": seed, "batches": [_batch(b, c, **kw) for b, c in enumerate(cosines)]}


def _all(fresh, seen=None, **kw):
    seen = seen or {}
    out = [_result(s, v, **kw) for s, v in fresh.items()]
    return out + [_result(s, v) for s, v in seen.items()]


FRESH = {6: [0.95, 0.97, 0.96], 7: [0.93, 0.94, 0.95], 8: [0.97, 0.98, 0.99],
         9: [0.92, 0.96, 0.94]}
SEEN = {0: [0.1, 0.1, 0.1], 3: [0.2, 0.2, 0.2], 4: [0.3, 0.3, 0.3], 5: [0.0, 0.0, 0.0]}


def test_the_verdict_is_the_t_interval_of_the_fresh_seeds_effects():
    f = q.findings(SPEC, _all(FRESH, SEEN))
    v = f["verdict"]
    effects = [np.mean(c) for c in FRESH.values()]
    half = stats.t.ppf(0.975, 3) * np.std(effects, ddof=1) / math.sqrt(4)
    assert v["low"] == pytest.approx(np.mean(effects) - half, abs=1e-12)
    assert v["high"] == pytest.approx(np.mean(effects) + half, abs=1e-12)
    assert v["verdict"] == "holds" and v["n_judged"] == 4
    json.loads(json.dumps(f, allow_nan=False))  # plain data for findings.json
    judged = next(c for c in f["cells"] if c["reference"] == "implicit"
                  and c["free_steps"] == "converged" and c["nudged_steps_max"] == 500
                  and c["r"] == 0.005)
    assert judged["mean"] == pytest.approx(v["mean"]) and judged["n"] == 4
    # the seen seeds (effects near 0) never enter it, but are shown
    seen = [r for r in f["seeds"] if r["set"] == "seen"]
    assert [r["seed"] for r in seen] == SPEC["seeds"]["seen"]
    assert seen[0]["effect"] == pytest.approx(0.1)
    assert [b["batch"] for b in seen[0]["per_batch"]] == [0, 1, 2]


def test_a_low_interval_contradicts_and_a_straddling_one_is_undecided():
    low = {s: [c - 0.5 for c in v] for s, v in FRESH.items()}
    assert q.findings(SPEC, _all(low, SEEN))["verdict"]["verdict"] == "contradicted"
    mixed = {6: [0.99] * 3, 7: [0.80] * 3, 8: [0.95] * 3, 9: [0.88] * 3}
    v = q.findings(SPEC, _all(mixed, SEEN))["verdict"]
    assert (v["verdict"], v["reason"]) == ("undecided", "straddles")


def test_a_seed_without_a_stable_fixed_point_is_named_not_judged():
    results = _all(FRESH, SEEN)
    results[0]["batches"][1] = _batch(1, 0.0, converged=False)  # seed 6: cap reached
    results[1]["batches"][2]["eigenvalues"][0]["real"] = 1e-3  # seed 7: unstable
    f = q.findings(SPEC, results)
    rows = {r["seed"]: r for r in f["seeds"]}
    assert (rows[6]["stable"], rows[6]["reason"], rows[6]["effect"]) == (
        False, "not_converged", None)
    assert (rows[7]["stable"], rows[7]["reason"], rows[7]["effect"]) == (
        False, "unstable", None)
    v = f["verdict"]
    assert v["not_judged"] == [6, 7] and v["n_judged"] == 2
    assert (v["verdict"], v["reason"]) == ("undecided", "no_stable_fixed_point")
    assert v["low"] is None
    # the mixed case is plain data: a stable seed's reason is None, not NaN
    assert rows[8]["reason"] is None
    json.dumps(f, allow_nan=False)
    # the unconverged batch has no implicit gradient: counted, not an effect
    assert rows[6]["not_converged"] == 1 and rows[6]["per_batch"][1]["batch"] == 2


def test_a_diverged_residual_is_counted_not_hidden():
    results = _all(FRESH, SEEN)
    results[0]["batches"][1] = _batch(1, 0.0, converged=False)
    results[0]["batches"][1]["residual"] = None  # the writer's non-finite number
    row = q.findings(SPEC, results)["seeds"][0]
    assert row["nonfinite"] == 1 and row["reason"] == "not_converged"


def test_a_file_it_cannot_apply_as_written_is_named():
    """A stable seed whose judged cell lacks a cosine on a batch, a seed with fewer
    batches than its settings say, two results for one seed: named, never dropped."""
    results = _all(FRESH, SEEN)
    for r in results:
        r["settings"] = {"fixed_point": {"batches": 3}}
    results[1]["batches"][0]["ep"] = [
        {**e, "cosine": {**e["cosine"], "implicit": {**e["cosine"]["implicit"],
                                                     "block0": None}}}
        for e in results[1]["batches"][0]["ep"]]
    with pytest.raises(ClaimsError, match="seed 7 has a stable fixed point but no finite"):
        q.findings(SPEC, results)
    results = _all(FRESH, SEEN)
    for r in results:
        r["settings"] = {"fixed_point": {"batches": 3}}
    results[2]["batches"].pop()
    with pytest.raises(ClaimsError, match=r"seed 8 has batches \[0, 1\], not 3"):
        q.findings(SPEC, results)
    with pytest.raises(ClaimsError, match=r"more than one result for seeds \[6\]"):
        q.findings(SPEC, _all(FRESH, SEEN) + [_result(6, [0.9] * 3)])


def test_three_stable_fresh_seeds_are_enough():
    results = _all(FRESH, SEEN)
    results[3]["batches"][0] = _batch(0, 0.0, converged=False)
    v = q.findings(SPEC, results)["verdict"]
    assert v["n_judged"] == 3 and v["verdict"] == "holds"


def test_a_missing_seed_is_named():
    with pytest.raises(ClaimsError, match="fresh seed 9"):
        q.findings(SPEC, _all({s: v for s, v in FRESH.items() if s != 9}, SEEN))


def test_the_cell_is_the_files():
    """Only the claim's (T1, T2max, r, reference, group) is judged: changing another
    cell's cosine changes no effect."""
    results = _all(FRESH, SEEN)
    before = q.findings(SPEC, results)["seeds"]
    other = copy.deepcopy(results)
    for res in other:
        for b in res["batches"]:
            for e in b["ep"]:
                if e["nudged_steps_max"] != CELL["nudged_steps_max"]:
                    e["cosine"]["implicit"]["block0"] = -1.0
    assert q.findings(SPEC, other)["seeds"] == before


def test_a_wrong_key_and_a_seed_in_both_sets_are_named(tmp_path):
    import yaml

    spec = yaml.safe_load(open("config/claims_ep.yaml"))
    spec["seeds"]["seen"].append(6)
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump(spec))
    with pytest.raises(ClaimsError, match=r"\[6\] are both fresh and seen"):
        load_ep(p)
    spec["seeds"]["seen"].pop()
    spec["decision"]["methd"] = "t"
    p.write_text(yaml.safe_dump(spec))
    with pytest.raises(ClaimsError, match="decision.*methd"):
        load_ep(p)


def test_the_figure_is_drawn_at_print_size_from_the_findings(tmp_path):
    """fig_ep_fixed_point from the judge's tables: every text at 7 pt or more when
    printed at the paper's text width, and one that names a seed without a fixed point."""
    from credit_assign.figures import style
    from credit_assign.studies.ep_question import fig_ep_fixed_point as ep_fixed_point

    results = _all(FRESH, SEEN)
    results[0]["batches"][1] = _batch(1, 0.0, converged=False)
    found = q.findings(SPEC, results)
    fig = ep_fixed_point.plot(q.cosine_table(results), found)
    assert min(style.printed_font_sizes(fig, (style.TEXT_WIDTH_IN, 9.0))) >= style.MIN_FONT_PT
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert ep_fixed_point.TEXT["no_fixed_point"] in texts
    style.save(fig, [tmp_path / "f.png"], about={})
    if os.environ.get("FIG_OUT"):
        style.save(ep_fixed_point.plot(q.cosine_table(results), found),
                   [os.environ["FIG_OUT"]], about={})


def _page_findings(results):
    """The findings write_question adds beside the judge's: settings, cost, order, paths."""
    found = q.findings(SPEC, results)
    found.update({
        "settings": {"pretrain": {"steps": 200}, "fixed_point": {
            "adjoint_tol": 1e-8, "reference_steps": [400], "batches": 3, "tol": 1e-7,
            "cap": 20000, "check_every": 100, "eigenvalues": 6, "powers": [1, 10],
            "free_steps": [150], "nudged_steps_max": [120, 500], "r": [0.005, 0.02]}},
        "cost": [{"seed": 6, "total": 3000.0, "pretrain": 1000.0, "probes": 2000.0,
                  "batches": 3, "peak_rss_mb": 900.0, "threads": 1}],
        "order": {"spec": {"short": "98ee6dd", "time": "t0", "alone": True, "files": []},
                  "amended": [], "reader": {"short": "c12a267", "time": "t1"},
                  "reader_after_first_result": False, "results": 8,
                  "result_commits": ["c12a267"], "first_result": "t2", "last_result": "t3",
                  "dirty": 0, "dirty_unknown": 0, "all_after": True, "working_differs": False,
                  "first_start": "t1", "reader_changed": [], "reader_differs": False,
                  "shown": True},
        "spec_path": "config/claims_ep.yaml", "reader_path": "x.py",
        "paths": {"page": "p", "findings": "f", "tables": "t", "figure": "g"}})
    return found


def test_the_page_states_the_verdict_every_seed_and_the_order():
    import jinja2

    from credit_assign.studies.ep_question.page import question_page

    results = _all(FRESH, SEEN)
    results[0]["batches"][1] = _batch(1, 0.0, converged=False)
    found = _page_findings(results)
    page = question_page(found)
    v = found["verdict"]
    assert f"## The verdict: **{v['verdict']}**" in page
    assert f"[{v['low']:.3f}, {v['high']:.3f}]" in page
    one_line = " ".join(page.split())
    assert "Fresh seed 6 has no stable fixed point and is not judged." in one_line
    for seed in [*FRESH, *SEEN]:
        assert f"\n| {seed} | " in page
    assert "**no** (not converged)" in page and "the order is shown" in page
    assert "not judged; b0 0.950, b2 0.960" in page  # seed 6's batches, labelled
    # a file changed after the runs: the order is not shown
    found["order"] = {**found["order"], "amended": [{"short": "abc1234"}], "shown": False}
    assert "cannot be shown" in question_page(found) and "abc1234" in question_page(found)
    found["verdict"]["reason"] = "a_new_reason"
    found["verdict"]["low"] = None
    assert ("Undecided (a new reason). Fresh seed 6 has no stable fixed point and is not "
            "judged.") in " ".join(question_page(found).split())  # another verdict: facts
    del found["order"]
    with pytest.raises(jinja2.UndefinedError, match="order"):
        question_page(found)


def test_the_runs_settings_are_those_committed_with_the_file():
    """config/claims_ep.yaml judges the runs of config/config.yaml's ep_stack "as committed
    with this file": the probe's settings in config.yaml and the fixed_point block (then
    the schema's defaults, stated in config.yaml later) are the same today."""
    import subprocess
    from pathlib import Path

    import yaml

    from credit_assign.analysis import history

    root = Path(__file__).resolve().parents[1]
    first = history.first_commit(root, "config/claims_ep.yaml")
    if first is None:
        pytest.skip("not a git checkout with history")

    def at(path):
        return yaml.safe_load(subprocess.run(
            ["git", "-C", str(root), "show", f"{first['commit']}:{path}"],
            capture_output=True, text=True, check=True).stdout)

    then, now = at("config/config.yaml"), yaml.safe_load(
        (root / "config/config.yaml").read_text())
    assert {k: v for k, v in then["ep_stack"].items() if k != "fixed_point"} == {
        k: v for k, v in now["ep_stack"].items() if k != "fixed_point"}
    schema = at("workflow/schemas/config.schema.yaml")
    defaults = {k: v["default"] for k, v in schema["properties"]["ep_stack"]["properties"]
                ["fixed_point"]["properties"].items()}
    fixed = then["ep_stack"].get("fixed_point", {})
    assert {**defaults, **fixed} == now["ep_stack"]["fixed_point"] | {"seeds": []}
