"""The claims (credit_assign.analysis.claims): effects per seed, paired by seed; the
bootstrap interval; the decision rule's three outcomes; no verdict from a diverged run;
the page from its findings; the order of the claims file and the results in git."""

import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import needs_tex

from credit_assign.analysis import claims, history
from credit_assign.planning.claims import ClaimsError, load, runs_needed
from credit_assign.reporting import render
from credit_assign.studies.claims import page as claims_page

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "config" / "claims.yaml"
QUICK_COVERAGE = {**claims.COVERAGE, "replicates": 20, "n_resamples": 200}
DECISION = {"confidence": 0.95, "method": "BCa", "fallback": "percentile",
            "n_resamples": 2000, "random_state": 0, "min_seeds": 3}


def _claim(side="greater", threshold=0.0, margin=None, kind="diff", **effect):
    c = {"side": side, **({"margin": margin} if side == "within" else {"threshold": threshold})}
    e = {"kind": kind, "metric": "test_acc", "a": {"method": "dfa", "lam": 0.01},
         "b": {"method": "dfa", "lam": 0.0}} | effect
    return {"id": "c", "text": "a claim", "effect": e, "claim": c, "paper": None}


def _tables(seeds, acc_a, acc_b, nonfinite=()):
    rows = []
    for s, a, b in zip(seeds, acc_a, acc_b, strict=True):
        for lam, acc in ((0.01, a), (0.0, b)):
            rows.append({"dataset": "d", "method": "dfa", "lam": lam, "seed": s,
                         "test_acc": acc, "h_L_norm_median": 10.0,
                         "n_nonfinite": int(s in nonfinite and lam == 0.0)})
    return {"runs": pd.DataFrame(rows)}


# ---- the spec -------------------------------------------------------------------------
def test_the_committed_claims_file_reads_and_names_every_run_it_judges():
    spec = load(SPEC)
    assert not set(spec["seeds"]["fresh"]) & set(spec["seeds"]["study"])
    needed = runs_needed(spec)
    # every run of the spec on both seed sets, and FA on the study's seeds only
    assert ("fa", 0.0, 42) in needed and ("fa", 0.0, 1001) not in needed
    assert ("dfa", 0.01, 1008) in needed and ("frozen", 0.0, 456) in needed
    # two spellings of one λ under its one equality (planning.matrix.same_lam) are one run
    twice = {**spec, "runs": {**spec["runs"], "dfa": [1 / 3, 0.333333, 0.01]}}
    thirds = [s for m, lam, s in runs_needed(twice) if m == "dfa" and abs(lam - 1 / 3) < 1e-5]
    assert sorted(thirds) == sorted(spec["seeds"]["fresh"] + spec["seeds"]["study"])


def test_a_wrong_key_in_a_claims_file_is_named(tmp_path):
    bad = tmp_path / "claims.yaml"
    bad.write_text(SPEC.read_text().replace("min_seeds: 3", "min_seed: 3"))
    with pytest.raises(ClaimsError, match="decision.*min_seed"):
        load(bad)


# ---- effects, paired by seed ------------------------------------------------------------
def test_a_paired_effect_takes_both_runs_of_the_same_seed():
    # the seeds differ a lot (0.2 … 0.5); each seed's penalised run is its own +0.05:
    # paired, every seed's effect is exactly 0.05 (unpaired, they would span ±0.3)
    seeds, base = [5, 6, 7, 8], [0.2, 0.5, 0.3, 0.45]
    tables = _tables(seeds, [b + 0.05 for b in base], base)
    rows = claims.seed_effects(_claim(), seeds, tables)
    assert [r["seed"] for r in rows] == seeds
    assert np.allclose([r["effect"] for r in rows], 0.05)
    # the runs are looked up by seed, not by position: shuffle the table's rows
    tables["runs"] = tables["runs"].sample(frac=1, random_state=1)
    assert np.allclose([r["effect"] for r in claims.seed_effects(_claim(), seeds, tables)],
                       0.05)


def test_a_missing_run_is_named_not_skipped():
    tables = _tables([1, 2, 3], [0.5] * 3, [0.4] * 3)
    with pytest.raises(ClaimsError, match="seed 9"):
        claims.seed_effects(_claim(), [1, 9], tables)


# ---- the interval ------------------------------------------------------------------------
def test_the_bootstrap_interval_on_a_known_sample():
    # 400 draws from N(1, 1): the mean's 95 % interval is 1 ± 1.96/20 up to sampling
    x = np.random.default_rng(3).normal(1.0, 1.0, 400)
    low, high, method = claims.interval(x, DECISION)
    half = 1.96 * x.std(ddof=1) / math.sqrt(len(x))
    assert method == "BCa"
    assert low == pytest.approx(x.mean() - half, abs=0.02)
    assert high == pytest.approx(x.mean() + half, abs=0.02)
    # the same call, the same interval (seeded)
    assert claims.interval(x, DECISION) == (low, high, method)


def test_identical_seeds_give_the_value_itself():
    assert claims.interval([0.05] * 5, DECISION) == (0.05, 0.05, "degenerate")


# ---- the decision rule -------------------------------------------------------------------
@pytest.mark.parametrize(("side", "low", "high", "verdict"), [
    ("greater", 0.01, 0.05, "holds"), ("greater", -0.05, -0.01, "contradicted"),
    ("greater", -0.01, 0.05, "undecided"), ("less", -0.05, -0.01, "holds"),
    ("less", 0.01, 0.05, "contradicted"), ("less", -0.01, 0.01, "undecided")])
def test_a_directional_claim_has_three_outcomes(side, low, high, verdict):
    got, reason = claims.decide(low, high, _claim(side, 0.0))
    assert got == verdict and (reason == "straddles") == (verdict == "undecided")


@pytest.mark.parametrize(("low", "high", "verdict"), [
    (-0.01, 0.015, "holds"), (0.03, 0.05, "contradicted"), (-0.05, -0.03, "contradicted"),
    (0.0, 0.03, "undecided"), (-0.05, 0.05, "undecided")])
def test_a_claim_of_no_effect_has_three_outcomes(low, high, verdict):
    assert claims.decide(low, high, _claim("within", margin=0.02))[0] == verdict


def test_a_diverged_run_is_never_judged():
    seeds = [1, 2, 3, 4]
    tables = _tables(seeds, [0.5, 0.6, 0.55, 0.5], [0.3, 0.3, 0.31, 0.29], nonfinite=(3,))
    rows = claims.seed_effects(_claim(), seeds, tables)
    assert [r["status"] for r in rows] == ["ok", "ok", "diverged", "ok"]
    v = claims.judge(_claim(), rows, DECISION)
    assert (v["verdict"], v["reason"], v["diverged"]) == ("undecided", "diverged", [3])
    # a NaN effect (here a NaN accuracy) is a diverged seed too, never a False
    tables = _tables(seeds, [0.5, math.nan, 0.55, 0.5], [0.3] * 4)
    v = claims.judge(_claim(), claims.seed_effects(_claim(), seeds, tables), DECISION)
    assert (v["verdict"], v["diverged"]) == ("undecided", [2])


def test_fewer_seeds_than_the_rule_asks_is_undecided():
    tables = _tables([1, 2], [0.5, 0.6], [0.3, 0.3])
    v = claims.judge(_claim(), claims.seed_effects(_claim(), [1, 2], tables), DECISION)
    assert (v["verdict"], v["reason"], v["n"]) == ("undecided", "too_few", 2)


# ---- the findings and the page ---------------------------------------------------------
def _synthetic(spec):
    """Tables for every run, null and EP probe ``spec`` reads, with known effects."""
    rng = np.random.default_rng(0)
    runs, epochs, nulls, ep = [], [], [], []
    acc = {("bp", 0.0): 0.58, ("bp", 0.01): 0.53, ("dfa", 0.0): 0.30, ("dfa", 0.0001): 0.42,
           ("dfa", 0.01): 0.40, ("frozen", 0.0): 0.35, ("fa", 0.0): 0.51}
    norm = {"dfa": {0.0: 1e6, 0.0001: 1e4, 0.01: 1e3}, "bp": {0.0: 30.0, 0.01: 20.0}}
    for m, lam, s in runs_needed(spec):
        h = norm.get(m, {}).get(lam, 50.0)
        runs.append({"dataset": "cifar10", "method": m, "lam": lam, "seed": s,
                     "test_acc": acc[(m, lam)] + rng.normal(0, 0.005), "h_L_norm_median": h,
                     "n_nonfinite": 0})
        epochs += [{"dataset": "cifar10", "method": m, "lam": lam, "seed": s, "epoch": e,
                    "h_L_norm_median": h ** (e / 3)} for e in (1, 2, 3)]
        if m == "dfa":
            for fb, draws in (("trained", [None]), ("fresh", range(3))):
                for d in draws:
                    for layer in ["0", "1", "2", "3", "4", "deep"]:
                        gain = 0.15 if (fb == "trained" and lam == 0.01) else 0.0
                        nulls.append({"dataset": "cifar10", "method": m, "lam": lam, "seed": s,
                                      "feedback": fb, "draw": d, "layer": layer,
                                      "cosine": gain + rng.normal(0, 0.002)})
    for s in spec["seeds"]["ep_fresh"]:
        for t1 in (150, 400):
            ep.append({"seed": s, "free_steps": t1, "group": "block0",
                       "cosine": 0.97 + rng.normal(0, 0.005), "settled": s != 4})
    return {"runs": pd.DataFrame(runs), "epochs": pd.DataFrame(epochs),
            "nulls": pd.DataFrame(nulls), "ep": pd.DataFrame(ep)}


@pytest.mark.process  # the page's history reads git
def test_the_findings_judge_every_claim_and_the_page_renders_them():
    spec = load(SPEC)
    found = claims.findings(spec, _synthetic(spec))
    v = {(r["claim"], r["part"], r["seed_set"]): r for r in found["verdicts"]}
    assert v[("rescue", "", "fresh")]["verdict"] == "holds"
    assert v[("bp_cost", "", "fresh")]["verdict"] == "holds"
    assert v[("penalty_bounds_norm", "", "fresh")]["mean"] == pytest.approx(-3)
    assert v[("learned_alignment", "l3", "fresh")]["verdict"] == "holds"
    assert v[("no_information_unpenalised", "l1", "fresh")]["verdict"] == "holds"
    # FA is judged on the study's seeds only; EP on its settled seeds (2 of 3: too few)
    assert v[("fa_over_dfa", "", "study")]["verdict_set"]
    assert ("fa_over_dfa", "", "fresh") not in v
    ep = v[("ep_reaches_block0", "T1=400", "ep_fresh")]
    assert (ep["verdict"], ep["reason"], ep["unsettled"]) == ("undecided", "too_few", [4])
    assert found["counts"]["verdict"]["effects"] == sum(r["verdict_set"]
                                                       for r in found["verdicts"])
    record = _page_record(spec, found, "config/claims.yaml")
    text = claims_page.page(record)
    assert "the rescue" not in text and "penalty rescues DFA's accuracy" in text
    assert "**undecided** (2 usable seeds of 3, fewer than 3; seed 4 unsettled)" in text
    assert "no git history" in text
    assert "## How this study was made" in text
    for event in record["history"]:  # each event: its commit, or the page says it lacks it
        assert (event["commit"] or event["time"] or "not in this checkout's history") in text


def _page_record(spec, found, spec_path, order=None):
    """What claims_verdicts renders the page from: the findings, a small coverage
    simulation, the order (none by default) and the history."""
    return claims_page._clean({"spec_path": spec_path, "seeds": spec["seeds"],
                               "decision": spec["decision"], "draws": 20,
                               "claims": spec["claims"], **found,
                               "coverage": claims_page.coverage(spec, QUICK_COVERAGE),
                               "order": order or {"spec": None, "shown": False},
                               "history": history.events(ROOT, _history())})


def _history():
    import yaml

    return yaml.safe_load((ROOT / "config" / "history.yaml").read_text())["events"]


def test_the_history_says_after_only_where_the_times_say_so():
    events = [{"id": e["id"], "found": True, "commit": "abc1234", "time": None}
              for e in _history()]
    by_id = {e["id"]: e for e in events}

    def text(goal, first):
        by_id["study_goal"]["time"], by_id["study_first_result"]["time"] = goal, first
        for e in events:
            e["time"] = e["time"] or "2026-12-01 10:00 UTC"
        return render.render("history.j2", history=events, fmt="md")

    late = text("2026-12-01 17:51 UTC", "2026-12-01 17:31 UTC")
    early = text("2026-12-01 17:01 UTC", "2026-12-01 17:31 UTC")
    assert "goal was set during its build, not before the runs" in late
    assert "17:51 UTC, after it." in late
    assert "during its build" not in early and "after it" not in early


def test_a_template_fails_loudly_on_a_missing_finding():
    import jinja2

    with pytest.raises(jinja2.UndefinedError, match="'counts' is undefined"):
        render.render("claims.md.j2", spec_path="x")


def test_the_claims_figure_draws_every_judged_effect():
    spec = load(SPEC)
    found = claims_page._clean({"claims": spec["claims"], "decision": spec["decision"],
                                **claims.findings(spec, _synthetic(spec))})
    from credit_assign.studies.claims import fig_claims

    fig = fig_claims.draw(found)
    labels = [t.get_text() for ax in fig.axes for t in ax.get_yticklabels()]
    assert len(labels) == sum(v["verdict_set"] for v in found["verdicts"])
    sizes = [t.get_fontsize() for t in fig.findobj(lambda a: hasattr(a, "get_fontsize"))
             if getattr(t, "get_text", lambda: "")()]
    assert min(sizes) >= 7  # drawn at the printed width: no text under 7 pt


# ---- the order, from git -----------------------------------------------------------------
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}


def _commit(root, name, text, message):
    """Write ``name``, commit it alone; the new commit's hash."""
    (root / name).write_text(text)
    for args in (["add", name], ["commit", "-qm", message]):
        subprocess.run(["git", "-C", str(root), *args], check=True, env=GIT_ENV)
    return subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.mark.process
def test_the_order_of_the_claims_file_and_the_results_is_read_from_git(tmp_path):
    """The facts the page states: the claims file's commit, its reader's (the claims
    target), each result's commit and dirty flag; 'committed before' only where every
    result's commit holds both and every result records a clean tree."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    before = _commit(tmp_path, "code.py", "x = 1\n", "code")
    spec = _commit(tmp_path, "claims.yaml", "claims: []\n", "claims, alone")
    (tmp_path / "workflow/rules").mkdir(parents=True)
    reader = _commit(tmp_path, history.READER, "rule claims:\n", "the target")
    after = _commit(tmp_path, "code.py", "x = 2\n", "more code")
    results = pd.DataFrame({"kind": ["train", "fresh_b_null"], "git_commit": [reader, after],
                            "git_dirty": [False, False],
                            "finished_at": ["2026-12-02T05:00:00+0100",
                                            "2026-12-02T04:30:00+0000"]})
    got = history.order(tmp_path, "claims.yaml", results)
    assert got["spec"]["commit"] == spec and got["spec"]["alone"] and got["all_after"]
    assert got["reader"]["commit"] == reader and got["by_kind"]["fresh_b_null"]["results"] == 1
    # in UTC, ordered by time (not by the string as written)
    assert (got["first_result"], got["last_result"]) == ("2026-12-02 04:00 UTC",
                                                         "2026-12-02 04:30 UTC")
    assert not got["working_differs"]
    (tmp_path / "claims.yaml").write_text("claims: [edited]\n")  # an edit not committed
    assert history.order(tmp_path, "claims.yaml", results)["working_differs"]
    # a result made by code from before the claims file: the order cannot be shown
    early = results.assign(git_commit=[before, after])
    got = history.order(tmp_path, "claims.yaml", early)
    assert not got["all_after"] and got["not_after"] == [before[:7]]
    # made after the claims file but before the code that reads it
    got = history.order(tmp_path, "claims.yaml", results.assign(git_commit=[spec, after]))
    assert not got["all_after"] and got["reader_not_held"] == [spec[:7]]
    # made from a tree with uncommitted changes, or without the flag recorded
    got = history.order(tmp_path, "claims.yaml", results.assign(git_dirty=[True, None]))
    assert not got["all_after"] and (got["dirty"], got["dirty_unknown"]) == (1, 1)
    assert got["by_kind"]["train"]["dirty"] == 1
    # outside a checkout: no facts, no crash
    assert history.order(tmp_path / "nowhere", "claims.yaml", results)["spec"] is None


@pytest.mark.parametrize("where", ["one findings file", "the claims' own file (legacy)"])
def test_a_rerun_says_which_numbers_were_first_published_and_which_come_back(tmp_path,
                                                                             where):
    """The claims' findings first published from earlier runs: today's order names that
    publication, whether its first run came before the code that reads the claims, and
    how many of its per-seed effects today's effects give back exactly (a diverged
    effect, None in JSON and NaN before it, is the same as itself). The publication is
    found in the one findings file (its first version with a claims section: an older
    file of that name without sections is passed over) or, before it, in the claims' own
    file."""
    from credit_assign.infra import findings_file as one_file
    from credit_assign.infra import paths
    from credit_assign.migrations.claims_findings import LEGACY

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "docs").mkdir()
    code = _commit(tmp_path, "code.py", "x = 1\n", "the code the first runs ran")
    row = {"claim": "rescue", "part": "", "seed_set": "fresh"}
    old = {"order": {"results": 2, "first_result": "2026-12-02 04:58 UTC",
                     "last_result": "2026-12-02 07:04 UTC", "result_commits": [code[:7]]},
           "by_seed": [{**row, "seed": 1, "effect": 0.25}, {**row, "seed": 2, "effect": None},
                       {**row, "seed": 3, "effect": 1.0}]}
    if where == "one findings file":
        _commit(tmp_path, paths.PUBLISHED_FINDINGS, json.dumps({"claims": []}), "no sections")
        _commit(tmp_path, paths.PUBLISHED_FINDINGS, one_file.text({"study": {}}), "study")
        published = _commit(tmp_path, paths.PUBLISHED_FINDINGS,
                            one_file.text({"study": {}, "claims": old}), "published")
        _commit(tmp_path, paths.PUBLISHED_FINDINGS,
                one_file.text({"study": {}, "claims": {}}), "published again")
    else:
        published = _commit(tmp_path, LEGACY["claims"], json.dumps(old), "published")
    (tmp_path / "workflow/rules").mkdir(parents=True)
    reader = _commit(tmp_path, history.READER, "rule claims:\n", "the target")
    now = {"first_result": "2026-12-03 17:07 UTC",
           "reader": {"commit": reader, "time": "2026-12-02T05:02:46Z"}}
    today = [{**row, "seed": 1, "effect": 0.25}, {**row, "seed": 2, "effect": float("nan")},
             {**row, "seed": 3, "effect": 1.0 + 1e-12}, {**row, "seed": 4, "effect": 2.0}]
    got = history.earlier_runs(tmp_path, today, now)
    assert got["published"]["short"] == published[:7] and got["reader_after_first_result"]
    assert (got["effects"], got["compared"], got["equal"]) == (3, 3, 2)
    assert got["by_set"] == {"fresh": {"equal": 2, "compared": 3}} and not got["all_equal"]
    assert got["differ"] == ["rescue seed 3 (fresh)"]
    # the first runs' recorded commit is older than the reader's: it lacks it
    assert got["reader_not_held"] == [code[:7]]
    # today's runs are the first: nothing earlier to name
    first = {**now, "first_result": "2026-12-01 00:00 UTC"}
    assert history.earlier_runs(tmp_path, today, first) is None
    assert history.earlier_runs(tmp_path / "nowhere", today, now) is None


@pytest.mark.process
def test_the_claims_file_was_committed_alone():
    """config/claims.yaml entered the history in a commit that touched nothing else; the
    published order states facts git agrees with, and says 'before every result' only
    where every result's code holds the claims file and its reader from a clean tree."""
    spec = history.first_commit(ROOT, "config/claims.yaml")
    if spec is None:
        pytest.skip("not a git checkout with history (an sdist, a shallow clone)")
    assert spec["alone"], spec["files"]
    from credit_assign.infra import findings_file

    claims = findings_file.section("claims", ROOT / findings_file.FILE)
    if claims is not None:
        order = claims["order"]
        assert order["spec"]["commit"] == spec["commit"]
        if order["all_after"]:
            assert order.get("dirty", 1) == 0 and order.get("dirty_unknown", 1) == 0
            reader = history.first_commit(ROOT, history.READER)
            for c in order["result_commits"]:
                assert history.is_ancestor(ROOT, spec["commit"], c)
                assert history.is_ancestor(ROOT, reader["commit"], c)


def test_the_markdown_cell_filter_keeps_a_table_whole():
    assert render.cell("a | b\nc") == "a \\| b c"
    assert render.signed(-0.05) == "−0.050" and render.signed(float("nan")) == "—"
    assert render.lam(1e-4) == "1e-4" and render.lam(0) == "0" and render.lam(0.003) == "3e-3"


@needs_tex
def test_the_papers_claims_table_and_history_compile(tmp_path):
    """claims.tex from the findings: its table and the history set in TeX, compiled."""
    import json

    from credit_assign.reporting import tex_build

    spec = load(SPEC)
    record = claims_page._clean({"spec_path": "config/claims.yaml", "seeds": spec["seeds"],
                                 "decision": spec["decision"], "draws": 20,
                                 "claims": spec["claims"],
                                 **claims.findings(spec, _synthetic(spec)),
                                 "coverage": claims_page.coverage(spec, QUICK_COVERAGE),
                                 "order": history.order(ROOT, "config/claims.yaml",
                                                        pd.DataFrame({"git_commit": [],
                                                                      "finished_at": []}))})
    (tmp_path / "findings.json").write_text(json.dumps(record))
    claims_page.write_tex(tmp_path / "findings.json", ROOT / "config" / "history.yaml",
                          tmp_path / "claims.tex", ROOT)
    # ms.tex's own preamble (its fonts, microtype), with claims.tex
    import re

    tex = (ROOT / "paper" / "ms.tex").read_text()
    preamble = re.sub(r"\\input\{(numbers|findings)\.tex\}", "",
                      tex[:tex.index("\\begin{document}")])
    (tmp_path / "doc.tex").write_text(
        preamble + "\\begin{document}\\ifhasclaims\\claimstable"
        " Contradicted: \\claimsContradictedList.\\fi"
        " Rescue: \\claimverdict{rescue}. Alignment: \\claimverdict{learned_alignment}."
        "\\studyhistory\\end{document}\n")
    tex_build.build_pdf(tmp_path / "doc.tex", tmp_path / "doc.pdf")
    text = " ".join(subprocess.run(["pdftotext", str(tmp_path / "doc.pdf"), "-"],
                                   capture_output=True, text=True).stdout.split())
    assert "the penalty rescues DFA's accuracy" in text and "holds" in text
    assert "undecided: n < 3" in text
    assert "The claims and their decision rule" in text
    # a claim cited by id: its verdict, rolled up from its parts, on each seed set
    rolled = {(c["claim"], c["seed_set"]): c for c in record["claim_verdicts"]}
    for cid in ("rescue", "learned_alignment"):
        fresh, study = rolled[(cid, "fresh")], rolled[(cid, "study")]
        assert (f"({cid}: {fresh['verdict']} on the fresh seeds ({fresh['n']}); "
                f"{study['verdict']} on the study seeds ({study['n']}))") in text
    (tmp_path / "bad.tex").write_text(
        preamble + "\\begin{document}\\claimverdict{no_such_claim}\\end{document}\n")
    with pytest.raises(Exception, match="no_such_claim"):
        tex_build.build_pdf(tmp_path / "bad.tex", tmp_path / "bad.pdf")
    against = [v for v in record["verdicts"] if v["verdict_set"]
               and v["verdict"] == "contradicted"]
    assert not against  # the synthetic claims: none contradicted, the list empty
    assert "\\newcommand{\\claimsContradictedList}{}" in (tmp_path / "claims.tex").read_text()
    found = {**record, "verdicts": [{**record["verdicts"][0], "verdict": "contradicted"},
                                    *record["verdicts"][1:]]}
    (tmp_path / "findings.json").write_text(json.dumps(found))
    claims_page.write_tex(tmp_path / "findings.json", ROOT / "config" / "history.yaml",
                          tmp_path / "claims.tex", ROOT)
    listed = (tmp_path / "claims.tex").read_text().split("\\claimsContradictedList}{")[1]
    first = found["verdicts"][0]
    assert listed.startswith(": ``" + render.tex_escape(
        {c["id"]: c for c in spec["claims"]}[first["claim"]]["text"]))
    assert listed.count("``") == 1  # one claim, however many of its parts


def test_a_claim_holds_when_every_part_does_and_the_counts_say_both():
    """The roll-up: holds when every part holds, contradicted when any part is, else
    undecided; the study's count covers only the claims judged on fresh seeds."""
    assert claims.rolled_up(["holds", "holds"]) == "holds"
    assert claims.rolled_up(["holds", "contradicted", "undecided"]) == "contradicted"
    assert claims.rolled_up(["holds", "undecided"]) == "undecided"
    v = [{"claim": "a", "part": p, "seed_set": "fresh", "verdict_set": True, "verdict": x}
         for p, x in (("l1", "holds"), ("l2", "undecided"))]
    v += [{"claim": "b", "part": "", "seed_set": "study", "verdict_set": True,
           "verdict": "holds"},
          {"claim": "a", "part": "l1", "seed_set": "study", "verdict_set": False,
           "verdict": "holds"}]
    c = claims.counts(v)
    assert c["verdict"] == {"effects": 3, "holds": 2, "contradicted": 0, "undecided": 1}
    assert c["verdict_claims"] == {"claims": 2, "holds": 1, "contradicted": 0, "undecided": 1}
    assert c["study"]["effects"] == 1 and c["study_claims"]["claims"] == 1  # not FA's own
    # each claim on each seed set, as the paper cites it (\\claimverdict)
    rolled = claims.claim_verdicts([{**x, "n": 8 - i, "t_verdict": "holds"}
                                    for i, x in enumerate(v)])
    assert [(r["claim"], r["seed_set"], r["parts"], r["n"], r["verdict"], r["t_verdict"])
            for r in rolled] == [("a", "fresh", 2, 7, "undecided", "holds"),
                                 ("b", "study", 1, 6, "holds", "holds"),
                                 ("a", "study", 1, 5, "holds", "holds")]


# ---- the sensitivity rule, the paper's magnitude, coverage (issue #43) -------------------
def test_the_t_interval_and_holm_on_known_answers():
    low, high = claims.t_interval([1.0, 2.0, 3.0], 0.95)
    # mean 2, sd 1, n 3: t(0.975, 2) = 4.302653 → half-width 4.302653 / sqrt(3)
    assert (low, high) == pytest.approx((2 - 2.4841377, 2 + 2.4841377), abs=1e-6)
    assert claims.holm([0.01, 0.04, 0.03, math.nan, 0.005]) == pytest.approx(
        [0.03, 0.06, 0.06, math.nan, 0.02], nan_ok=True)
    assert claims.holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    # a two-sided t-test against the threshold: p < 0.05 exactly when the 95 % t-interval
    # excludes it
    x = [0.1, 0.3, 0.2, 0.25]
    low, high = claims.t_interval(x, 0.95)
    for threshold in (low - 1e-9, low + 1e-9, high - 1e-9, high + 1e-9):
        p = claims.claim_p(x, _claim(threshold=threshold))
        assert (p < 0.05) == (not low <= threshold <= high)
    # no effect within ±margin: the two one-sided tests (p < 0.05 ⇔ the interval inside)
    inside = claims.claim_p(x, _claim("within", margin=high + 1e-6))
    straddles = claims.claim_p(x, _claim("within", margin=high - 1e-6))
    assert inside < 0.05 <= straddles


def test_the_sensitivity_verdict_uses_holm_over_the_tables_parts():
    spec = {"decision": DECISION | {"n_resamples": 999}, "seeds": {"fresh": [1, 2, 3, 4]},
            "claims": [{**_claim(), "id": f"c{i}"} for i in range(4)]}
    effects = {"c0": [0.5, 0.6, 0.55, 0.52], "c1": [0.02, 0.05, -0.01, 0.04],
               "c2": [0.01, 0.012, 0.011, 0.013], "c3": [-0.3, -0.35, -0.31, -0.33]}
    by_seed = [{"claim": c, "part": "", "seed": s, "effect": e, "status": "ok",
                "seed_set": "fresh"} for c, es in effects.items() for s, e in zip(
                    [1, 2, 3, 4], es, strict=True)]
    found = claims.judged(spec, by_seed)
    v = {r["claim"]: r for r in found["verdicts"]}
    raw = [claims.claim_p(effects[c], spec["claims"][0]) for c in effects]
    assert [v[c]["p_holm"] for c in effects] == pytest.approx(claims.holm(raw))
    assert v["c0"]["t_verdict"] == "holds" and v["c3"]["t_verdict"] == "contradicted"
    assert v["c1"]["t_verdict"] == "undecided"  # straddles 0
    assert {(c["claim"], c["verdict"], c["t_verdict"]) for c in
            found["sensitivity"]["changed"]} == {(r["claim"], r["verdict"], r["t_verdict"])
                                                 for r in found["verdicts"]
                                                 if r["verdict"] != r["t_verdict"]}
    assert found["counts"]["t_verdict"]["effects"] == 4


def test_the_papers_value_and_zero_are_placed_against_the_interval():
    assert claims.position(0.5, 0.1, 0.3) == "above"
    assert claims.position(-0.5, 0.1, 0.3) == "below"
    assert claims.position(0.2, 0.1, 0.3) == "inside"
    assert claims.position(None, 0.1, 0.3) is None
    rows = [{"claim": "c", "part": "l2", "seed": s, "effect": e, "status": "ok",
             "seed_set": "fresh"} for s, e in zip(range(8), [0.03, 0.02, 0.04, 0.025, 0.035,
                                                               0.028, 0.031, 0.022], strict=True)]
    claim = {**_claim("within", margin=0.02), "paper": 0.0}
    spec = {"decision": DECISION | {"n_resamples": 999}, "seeds": {"fresh": list(range(8))},
            "claims": [claim]}
    v = claims.judged(spec, rows)["verdicts"][0]
    # above the margin in mean, yet not resolved: undecided, and wholly above zero
    assert v["zero_vs"] == "above" and v["zero_vs_t"] == "above"
    assert v["paper_vs_t"] == "below"


def test_the_sizes_are_said_to_reproduce_less_often_only_when_they_do():
    """magnitude's vs_directions (the sentence the paper guards): the share of the
    paper's values inside our t-interval against the share of claims that hold."""
    given = [{"verdict_set": True, "paper_vs_t": p, "paper_vs_pred": "inside",
              "paper_vs": "inside"} for p in ("inside", "below", "below", "above")]
    half = {"claims": 4, "holds": 2}
    assert claims.magnitude(given, half)["vs_directions"] == "less_often"  # 1/4 < 2/4
    assert claims.magnitude(given, {"claims": 4, "holds": 1})["vs_directions"] == "as_often"
    assert claims.magnitude([], half)["vs_directions"] == "none_given"
    assert claims.magnitude(given, half)["inside_t"] == 1


def test_a_bootstrap_interval_covers_less_than_it_says_at_a_few_seeds():
    """The simulation the page reports (small here): at 3 normal seeds a 95 % BCa
    interval of the mean covers well under 95 %, the t-interval about 95 %."""
    settings = {**claims.COVERAGE, "replicates": 400, "n_resamples": 300,
                "distributions": ("normal",)}
    got = claims.coverage(3, DECISION, settings)["normal"]
    assert got["bootstrap"] < 0.85 and 0.9 < got["t"] < 0.99


def test_a_new_claims_file_chooses_its_rule_for_coverage_and_multiplicity(tmp_path):
    import yaml

    base = yaml.safe_load(SPEC.read_text())
    for decision, match in (({"method": "BCa"}, "correction is required"),
                            ({"method": "BCa", "correction": "none"}, "use method t"),
                            ({"method": "percentile", "correction": "holm"}, "use method t")):
        path = tmp_path / "claims.yaml"
        path.write_text(yaml.safe_dump({**base, "version": 2,
                                        "decision": base["decision"] | decision}))
        with pytest.raises(ClaimsError, match=match):
            load(path)
    path.write_text(yaml.safe_dump({**base, "version": 2, "decision": base["decision"] | {
        "method": "t", "correction": "holm"}}))
    assert load(path)["decision"]["method"] == "t"
    load(SPEC)  # the first claims file (no version) stays as committed


def test_the_published_intervals_come_back_from_the_published_per_seed_file():
    """Every interval of record in docs/findings.json's claims section, recomputed from
    docs/claims_by_seed.csv as published (full precision: each float round-trips)."""
    from credit_assign.infra import findings_file

    record = findings_file.section("claims", ROOT / findings_file.FILE)
    if record is None:
        pytest.skip("no published claims")
    by_seed = pd.read_csv(ROOT / "docs" / "claims_by_seed.csv", keep_default_na=False)
    for v in record["verdicts"]:
        if v["low"] is None:
            continue
        rows = by_seed[(by_seed.claim == v["claim"]) & (by_seed.part.astype(str) == v["part"])
                       & (by_seed.seed_set == v["seed_set"]) & (by_seed.status == "ok")]
        low, high, _ = claims.interval(rows.effect.astype(float).tolist(), record["decision"])
        assert (low, high) == (v["low"], v["high"]), (v["claim"], v["part"], v["seed_set"])
        t_low, t_high = claims.t_interval(rows.effect.astype(float).tolist(),
                                          record["decision"]["confidence"])
        assert (t_low, t_high) == pytest.approx((v["t_low"], v["t_high"]), abs=1e-12)


@pytest.mark.workflow
def test_the_claims_runs_refuse_to_start_from_uncommitted_code(tmp_path):
    """Pre-registered runs: `snakemake claims` from a checkout whose code has changes not
    committed stops before any job, naming the files and how to commit; the record's
    folders (results/, data/) are not code."""
    from conftest import fresh_copy, snakemake

    repo = fresh_copy(tmp_path / "repo")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "code"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=GIT_ENV)
    (repo / "data").mkdir()
    (repo / "data" / "cifar10.json").write_text("{}")  # untracked data: never code
    clean = snakemake(repo, "-n", "claims", check=False)
    assert "committed code" not in clean.stdout + clean.stderr
    new = repo / "src/credit_assign/science/helper.py"  # a new module, not yet added
    new.write_text("x = 1\n")
    untracked = snakemake(repo, "-n", "claims", check=False)
    assert untracked.returncode != 0 and "src/credit_assign/science/helper.py" in (
        untracked.stdout + untracked.stderr)
    new.unlink()
    model = repo / "src/credit_assign/science/model.py"
    model.write_text(model.read_text() + "\n# an edit\n")
    dirty = snakemake(repo, "-n", "claims", check=False)
    out = dirty.stdout + dirty.stderr
    assert dirty.returncode != 0
    assert "start only from committed code" in out
    assert "src/credit_assign/science/model.py" in out and "git commit" in out
    # a fresh seed's run asked for by its own file: refused the same way; a study seed's not
    own = snakemake(repo, "-n", "results/cifar10/default/train/dfa/lam0/seed1001/metrics.json",
                    check=False)
    assert own.returncode != 0 and "start only from committed code" in own.stdout + own.stderr
    study = snakemake(repo, "-n", "results/cifar10/default/train/dfa/lam0/seed42/metrics.json",
                      check=False)
    assert "committed code" not in study.stdout + study.stderr
    # the EP question's seeds (config/claims_ep.yaml): refused, naming that file; a seed
    # or a corpus it does not name is not
    ep = "results/ep_stack/{}/float32/seed{}.fixed_point.json"
    fp = snakemake(repo, "-n", ep.format("tinyshakespeare", 6), check=False)
    assert fp.returncode != 0 and "pre-registered (config/claims_ep.yaml)" in (
        fp.stdout + fp.stderr)
    for other in (ep.format("tinyshakespeare", 99), ep.format("pydoc", 6)):
        out = snakemake(repo, "-n", other, check=False)
        assert "committed code" not in out.stdout + out.stderr


def test_the_prediction_interval_of_one_more_seed():
    low, high = claims.prediction_interval([1.0, 2.0, 3.0], 0.95)
    # mean 2, sd 1, n 3: t(0.975, 2) · sqrt(1 + 1/3)
    assert (low, high) == pytest.approx((2 - 4.3026527 * math.sqrt(4 / 3),
                                         2 + 4.3026527 * math.sqrt(4 / 3)), abs=1e-6)


def test_a_version_2_claims_page_names_its_own_rule(tmp_path):
    """Where the rule of record is the t-interval with Holm, the page says so, shows no
    second rule 'added after the results', and labels the coverage table's columns."""
    import yaml

    base = yaml.safe_load(SPEC.read_text())
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump({**base, "version": 2, "decision": base["decision"] | {
        "method": "t", "correction": "holm"}}))
    spec = load(path)
    found = claims.findings(spec, _synthetic(spec))
    assert found["sensitivity"]["same_as_record"] and not found["sensitivity"]["changed"]
    record = _page_record(spec, found, "claims.yaml")
    text = claims_page.page(record)
    assert "95 % Student-t interval of the mean over seeds, and its" in text
    assert "added after the results" not in text and "## The tests and their correction" in text
    assert "| BCa bootstrap | t-interval (the rule of record) |" in text
    readme = render.render("readme_claims.md.j2", **record, findings=record)
    assert "chosen after the results" not in readme  # its own rule: nothing to add


@pytest.mark.process  # the order is read from git
def test_the_page_renders_the_order_the_workflow_finds():
    """claims_verdicts' path: the order as history.order states it (not the published
    findings' shape) renders, and a claims seed set of one seed has no interval and no
    coverage row (it crashed the coverage simulation)."""
    spec = load(SPEC)
    spec = {**spec, "seeds": {**spec["seeds"], "ep_fresh": [3]}}
    found = claims.findings(spec, _synthetic(spec))
    prov = pd.DataFrame({"kind": ["train"], "seed": [1001], "git_commit": [None],
                         "git_dirty": [None], "finished_at": [None]})
    cov = claims_page.coverage(spec, QUICK_COVERAGE)
    assert sorted(cov["by_n"]) == ["3", "8"]
    record = claims_page._clean({"spec_path": "config/claims.yaml", "seeds": spec["seeds"],
                                 "decision": spec["decision"], "draws": 20,
                                 "claims": spec["claims"], **found, "coverage": cov,
                                 "source": None,
                                 "order": history.order(ROOT, "config/claims.yaml", prov),
                                 "history": history.events(ROOT, _history())})
    text = claims_page.page(record)
    assert "## When the rule was written down" in text and "published findings" not in text
    with pytest.raises(ValueError, match="two or more"):
        claims.coverage(1, DECISION)
