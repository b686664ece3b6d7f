"""Where a change goes, proven (issue #46): a statement of a new kind — a claim whose effect
is a kind the project does not have — added in a temporary copy of the package by writing
only the kind's module and its words (credit_assign/effects/<kind>.py and <kind>.md.j2),
is checked in the claims file, judged into the findings, worded on the page, set in the
paper's TeX and given its figure panel, with no other file of the package touched."""

import filecmp
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "credit_assign"

KIND = '''"""metric(a) / metric(b) on one seed: a new kind, for the test."""

from credit_assign.effects import Kind, Row, Tables


def rows(e: dict, seed: int, data: Tables) -> list[Row]:
    a, b = (data.scalar(e[k], seed, e["metric"]) for k in ("a", "b"))
    return [("", a / b, data.diverged(e["a"], seed) or data.diverged(e["b"], seed), None)]


KIND = Kind(name="ratio", panel="acc", rows=rows,
            schema={"required": ["metric", "a", "b"],
                    "properties": {"metric": {"enum": ["test_acc"]},
                                   "a": {"$ref": "#/$defs/run"},
                                   "b": {"$ref": "#/$defs/run"}}})
'''
WORDS = '''{% macro words(e, names, draws) -%}
ratio of {{ names[e.metric] }}({{ e.a.method }} λ={{ e.a.lam|lam }}) to
{{- " " ~ e.b.method }} λ={{ e.b.lam|lam }}'s
{%- endmacro %}
'''
CLAIMS = """version: 2
seeds: {fresh: [1, 2, 3, 4], study: [5, 6, 7]}
runs: {dfa: [0, 0.01]}
null: {draws: 3}
decision: {confidence: 0.95, method: t, correction: none, fallback: BCa,
           n_resamples: 1000, random_state: 0, min_seeds: 3}
claims:
  - id: rescue
    text: the penalty rescues DFA's accuracy
    effect: {kind: diff, metric: test_acc, a: {method: dfa, lam: 0.01}, b: {method: dfa, lam: 0}}
    claim: {side: greater, threshold: 0.0}
    paper: null
  - id: rescue_ratio
    text: penalised DFA's accuracy is a tenth above unpenalised DFA's
    effect: {kind: ratio, metric: test_acc, a: {method: dfa, lam: 0.01}, b: {method: dfa, lam: 0}}
    claim: {side: greater, threshold: 1.1}
    paper: null
"""
# what the claims target does, from the claims file to the page and the TeX, on
# synthetic runs (penalised DFA's accuracy 0.40 against 0.30: a ratio of 4/3)
SCRIPT = '''
import json, sys
from pathlib import Path
import numpy as np, pandas as pd
from credit_assign.analysis import claims, history
from credit_assign.studies.claims import page as claims_page
from credit_assign.studies.claims.fig_claims import GROUPS
from credit_assign.planning.claims import load, runs_needed

spec_path, out, history_path, root = Path(sys.argv[1]), Path(sys.argv[2]), *sys.argv[3:]
spec = load(spec_path)
rng = np.random.default_rng(0)
runs = pd.DataFrame([{"dataset": "cifar10", "method": m, "lam": lam, "seed": s,
                      "test_acc": (0.40 if lam else 0.30) + rng.normal(0, 0.005),
                      "h_L_norm_median": 1.0, "n_nonfinite": 0}
                     for m, lam, s in runs_needed(spec)])
tables = {"runs": runs, "epochs": pd.DataFrame(), "nulls": pd.DataFrame(),
          "ep": pd.DataFrame()}
quick = {**claims.COVERAGE, "replicates": 20, "n_resamples": 200}
record = claims_page._clean({"spec_path": spec_path.name, "seeds": spec["seeds"],
                             "decision": spec["decision"], "draws": 3,
                             "claims": spec["claims"], **claims.findings(spec, tables),
                             "coverage": claims_page.coverage(spec, quick),
                             "order": history.order(out, str(spec_path), pd.DataFrame(
                                 {"git_commit": [], "finished_at": []})),
                             "history": history.read_events(root, history_path)})
(out / "findings.json").write_text(json.dumps(record))
(out / "claims.md").write_text(claims_page.page(record))
claims_page.write_tex(out / "findings.json", history_path, out / "claims.tex", root)
(out / "panels.json").write_text(json.dumps({name: list(kinds) for name, kinds, _ in GROUPS}))
'''


def test_a_statement_of_a_new_kind_touches_only_its_module_and_its_words(tmp_path):
    copy = tmp_path / "src" / "credit_assign"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(PACKAGE, copy, ignore=ignore)
    (copy / "effects" / "ratio.py").write_text(KIND, encoding="utf-8")
    (copy / "effects" / "ratio.md.j2").write_text(WORDS, encoding="utf-8")
    (tmp_path / "claims.yaml").write_text(CLAIMS, encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "src")}
    subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "claims.yaml"), str(out),
                    str(ROOT / "config" / "history.yaml"), str(ROOT)],
                   check=True, env=env, cwd=tmp_path)

    # the findings file: the new claim judged like any other
    record = json.loads((out / "findings.json").read_text())
    v = {(r["claim"], r["seed_set"]): r for r in record["verdicts"]}
    assert v[("rescue_ratio", "fresh")]["verdict"] == "holds"
    assert abs(v[("rescue_ratio", "fresh")]["mean"] - 4 / 3) < 0.05
    assert {r["claim"] for r in record["by_seed"]} == {"rescue", "rescue_ratio"}
    # the page: its words, from its own template
    page = (out / "claims.md").read_text()
    assert "ratio of test accuracy(dfa λ=1e-2) to dfa λ=0's" in page
    # the paper's TeX: the claim in the table and cited by id
    tex = (out / "claims.tex").read_text()
    assert "penalised DFA" in tex and "accuracy is a tenth above unpenalised DFA" in tex
    assert "claimverdict:rescue_ratio" in tex
    # the figure: the panel the kind names
    assert "ratio" in json.loads((out / "panels.json").read_text())["acc"]

    # nothing else of the package was touched: the copy differs by the two new files
    def differences(cmp: filecmp.dircmp, at: str = "") -> list[str]:
        out = [f"{at}{n}" for n in cmp.left_only + cmp.right_only + cmp.diff_files]
        for name, sub in cmp.subdirs.items():
            out += differences(sub, f"{at}{name}/")
        return sorted(out)

    cmp = filecmp.dircmp(PACKAGE, copy, ignore=["__pycache__"])
    assert differences(cmp) == ["effects/ratio.md.j2", "effects/ratio.py"]


# ---- a verdict of a new kind: its module and its words beside it, nothing else
VERDICT = '''"""A verdict of a new kind, for the test: is the stated recipe's worst number within
three tolerances? Rule: a screen."""

from credit_assign.analysis.verdicts import Study, Verdict


def finding(data: Study) -> dict:
    own = data.gaps[data.gaps.kind == "stated"]
    if own.empty:
        return {"outcome": "missing"}
    worst = float(own.gap.abs().max())
    return {"outcome": "near" if worst <= 3 else "far", "worst": worst}


VERDICT = Verdict(name="worstgap", reads="study", outcomes=("near", "far", "missing"),
                  rule="screen", finding=finding,
                  schema={"if": {"properties": {"outcome": {"enum": ["near", "far"]}}},
                          "then": {"required": ["worst"],
                                   "properties": {"worst": {"type": "number"}}}})
'''
VERDICT_WORDS = '''{% from "markdown.j2" import facts %}
{% macro words(f) %}
{% if f.outcome == "near" %}
The stated recipe's worst number is {{ f.worst|num(1) }} tolerances off: near the paper.
{% else %}{{ facts("worstgap", f) }}{% endif %}
{% endmacro %}
'''
# what step findings, step reproduction_notes and step paper_numbers do with a study:
# the verdicts judged into findings.json, listed on the notes page, set in findings.tex
VERDICT_SCRIPT = '''
import json, sys
from pathlib import Path
import pandas as pd
from credit_assign.analysis import findings
from credit_assign.analysis import verdicts as registry
from credit_assign.reporting import paper, render

out = Path(sys.argv[1])
gaps = pd.read_csv(out / "gaps.csv", keep_default_na=False, na_values=[""])
findings.write(out / "findings.json", registry.judge(gaps))
record = findings.read(out / "findings.json")
study = {n: record["verdicts"][n + "verdict"] for n in registry.of("study")}
(out / "notes.md").write_text(render.macro("notes_sections.md.j2", "verdicts_md")(study))
cfg = {"ep_stack": {"pretrain": {"precision": "float32"}}}
found = paper.paper_findings(cfg, record["verdicts"])
(out / "findings.tex").write_text(paper.findings_tex(found, "test"))
'''


def test_a_verdict_of_a_new_kind_touches_only_its_module_and_its_words(tmp_path):
    """A verdict the project does not have, added in a temporary copy of the package by
    writing only its module (analysis/verdicts/<name>.py: what it reads, its outcomes and
    fields, its rule, its finding) and its words (<name>.md.j2): judged into findings.json
    (and checked there), listed on the notes page and its outcome and value set in the
    paper's findings.tex for a guarded sentence, with no other file of the package
    touched."""
    copy = tmp_path / "src" / "credit_assign"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (copy / "analysis" / "verdicts" / "worstgap.py").write_text(VERDICT, encoding="utf-8")
    words = copy / "analysis" / "verdicts" / "worstgap.md.j2"
    words.write_text(VERDICT_WORDS, encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    from conftest import DISAGREE, KINDS, hand_gaps  # a gap map by hand

    hand_gaps(DISAGREE, KINDS).assign(ours_mean=1.0, ours_n=3).to_csv(out / "gaps.csv",
                                                                      index=False)
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "src")}
    subprocess.run([sys.executable, "-c", VERDICT_SCRIPT, str(out)], check=True, env=env,
                   cwd=tmp_path)

    # the findings file: judged (the stated recipe's worst gap is 3.0: near)
    record = json.loads((out / "findings.json").read_text())
    assert record["verdicts"]["worstgapverdict"] == {"outcome": "near", "worst": 3.0}
    # the page: its words in the verdicts' list
    words = "The stated recipe's worst number is 3.0 tolerances off: near the paper."
    assert f"- {words}" in (out / "notes.md").read_text()
    # the paper's TeX: its outcome for \findingguard and its value for \fv
    tex = (out / "findings.tex").read_text()
    assert "\\csname finding:worstgap\\endcsname{near}" in tex
    assert "\\csname value:worstgap/worst\\endcsname{$3$}" in tex

    cmp = filecmp.dircmp(PACKAGE, copy, ignore=["__pycache__"])

    def differences(cmp: filecmp.dircmp, at: str = "") -> list[str]:
        found = [f"{at}{n}" for n in cmp.left_only + cmp.right_only + cmp.diff_files]
        for name, sub in cmp.subdirs.items():
            found += differences(sub, f"{at}{name}/")
        return sorted(found)

    # one folder: the verdict's module and its words side by side
    assert differences(cmp) == ["analysis/verdicts/worstgap.md.j2",
                                "analysis/verdicts/worstgap.py"]
