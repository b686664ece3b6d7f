"""Adding a learning rule is one new file plus its λ list in the config
(docs/adding-a-rule.md): the rules registry, and the toy rule of tests/toy_rule.py run
through a copy of the workflow with nothing else changed."""

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import fresh_copy, job_counts, snakemake

from credit_assign.infra.results import read_result
from credit_assign.science.learning_rules import (
    RULES,
    catalog,
    make_rule,
    options_of,
    options_table,
)
from credit_assign.science.learning_rules.base import LearningRule, register
from credit_assign.science.learning_rules.options import Options, option

ROOT = Path(__file__).resolve().parents[1]

# A small run without the toy rule: BP at λ = 0, one seed, probes at both epochs.
BASE = {
    "dataset": "digits",
    "model": {"width": 16, "depth": 2},
    "training": {"epochs": 2, "batch_size": 256, "augmentation": "none"},
    "sweep": {"seeds": [1], "bp": [0], "dfa": [], "frozen": [], "fa": [], "np": []},
    "probes": {"epochs": [1, 2], "n_samples": 64, "directions": 8,
               "network": {"method": "bp", "lam": 0}},
    "diagnostics": {"n_samples": 100},
    "reproduction": {"reference": None},
    "ep_stack": {"corpora": []},
}
TABLES = ["results/digits/default/summary/runs.csv",
          "results/digits/default/summary/probe_alignment.csv"]
FIGURE = "paper/figures/fig_alignment_probes.svg"


# ---- the registry ----------------------------------------------------------------------
def declared_rules() -> list[str]:
    """The rule names the package's files declare (`name, label, color = "…", …` in an
    @register class), read from the source without importing it."""
    import ast

    names = []
    for path in sorted((ROOT / "src/credit_assign/science/learning_rules").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and any(
                    getattr(d, "id", None) == "register" for d in node.decorator_list):
                for stmt in node.body:
                    if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Tuple):
                        targets = [t.id for t in stmt.targets[0].elts]
                        if "name" in targets:
                            names.append(stmt.value.elts[targets.index("name")].value)
                    elif isinstance(stmt, ast.Assign) and \
                            getattr(stmt.targets[0], "id", "") == "name":
                        names.append(stmt.value.value)
    return sorted(names)


def test_the_registry_holds_every_rule_the_package_declares_in_name_order():
    """A new rule file appears here by itself (no list to edit): the registry holds
    exactly the rules the package's files declare, in name order."""
    assert "dfa" in declared_rules() and list(RULES) == declared_rules()
    for name, info in catalog().items():
        assert info["label"] and info["color"]
        assert RULES[name].name == name


def test_config_yaml_states_every_rule_default():
    """config.yaml's rule blocks are the rules' own defaults (the paper recipe)."""
    cfg = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    for name, cls in RULES.items():
        assert options_of(name, cfg["methods"].get(name)).to_config() == cls.Options().to_config()


def test_config_readme_lists_every_rule_option_as_the_code_declares_it():
    readme = (ROOT / "config/README.md").read_text()
    assert options_table() in readme, \
        "rerun `python -m credit_assign.science.learning_rules --write`"


def test_options_are_checked_and_named():
    with pytest.raises(ValueError, match=r"methods.np: unknown option\(s\) \['sigmaa'\]"):
        options_of("np", {"sigmaa": 1.0})
    with pytest.raises(ValueError, match="methods.np.sigma must be > 0"):
        options_of("np", {"sigma": 0.0})
    with pytest.raises(ValueError, match="methods.dfa.feedback_scale must be one of"):
        options_of("dfa", {"feedback_scale": "huge"})
    with pytest.raises(ValueError, match="methods.np.directions must be of type integer"):
        options_of("np", {"directions": True})
    assert options_of("np", {"sigma": 1}).sigma == 1.0  # an int where a float is asked
    with pytest.raises(ValueError, match="unknown learning rule 'sdil'.*adding-a-rule"):
        options_of("sdil")


def test_a_rule_takes_only_its_own_options(small_model):
    with pytest.raises(TypeError, match="rule 'dfa' takes FeedbackOptions, got NPOptions"):
        RULES["dfa"](small_model, 0.0, options_of("np"))
    rule = make_rule("frozen", small_model, 0.0, {"embedding_signal": "dfa"})
    assert rule.local and len(rule.feedback) == 1


def test_registering_checks_the_declaration():
    with pytest.raises(TypeError, match="declares label as a string"):
        @register
        class NoLabel(LearningRule):
            name, color = "nolabel", "k"
    with pytest.raises(ValueError, match="lower-case letters"):
        @register
        class BadName(LearningRule):
            name, label, color = "Bad-Name", "bad", "k"
    with pytest.raises(ValueError, match="two rules are named 'dfa'"):
        @register
        class Impostor(LearningRule):
            name, label, color = "dfa", "DFA again", "k"
    assert RULES["dfa"].__name__ == "DFA"


def test_options_rows_document_each_field():
    @dataclasses.dataclass
    class Opts(Options):
        rate: float = option(1.0e-3, "a rate", exclusive_minimum=0)
        mode: str = option("a", "`a` or `b`", choices=("a", "b"))
        steps: int = option(3, "steps", minimum=1)

    assert Opts.rows() == [("rate", "1.0e-3", "a rate (> 0)"), ("mode", "`a`", "`a` or `b`"),
                           ("steps", "3", "steps (≥ 1)")]


# ---- the toy rule through the workflow -------------------------------------------------
def regenerate(work: Path) -> None:
    """`python -m credit_assign.science.learning_rules --write` in a workflow copy
    (docs/adding-a-rule.md)."""
    out = subprocess.run([sys.executable, "-m", "credit_assign.science.learning_rules",
                          "--write"], cwd=work,
                         env={**os.environ, "PYTHONPATH": str(work / "src")},
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr


@pytest.fixture(scope="module")
def with_toy(tmp_path_factory) -> Path:
    """A finished small run; then tests/toy_rule.py dropped into the rules package."""
    work = fresh_copy(tmp_path_factory.mktemp("toy"))
    (work / "config/base.yaml").write_text(yaml.safe_dump(BASE))
    snakemake(work, *TABLES, FIGURE, "--configfile", "config/base.yaml")
    shutil.copy(ROOT / "tests/toy_rule.py",
                work / "src/credit_assign/science/learning_rules/shared.py")
    regenerate(work)  # the catalogue and config/README.md's table, as the doc says
    toy = {"sweep": {"shared": [0]}, "methods": {"shared": {"scale": 0.5}},
           "probes": {"network": {"method": "shared", "lam": 0}}}
    (work / "config/toy.yaml").write_text(yaml.safe_dump(toy))
    return work


@pytest.mark.workflow
def test_a_new_rule_file_and_its_lambdas_run_it_and_rerun_nothing_else(with_toy):
    args = (*TABLES, FIGURE, "--configfile", "config/base.yaml", "config/toy.yaml")
    plan = snakemake(with_toy, "-n", *args)
    counts = job_counts(plan.stdout + plan.stderr)
    # the toy's run and its probe; the BP run is not retrained nor reprobed
    assert counts["train"] == 1 and counts["alignment_probe"] == 1, counts
    snakemake(with_toy, *args)

    metrics = read_result(with_toy / "results/digits/default/train/shared/lam0/seed1/metrics.json",
                          "train")
    assert metrics["config"]["options"] == {"scale": 0.5, "train_embedding": True}
    assert metrics["run"]["method"] == "shared"
    runs = pd.read_csv(with_toy / TABLES[0])
    assert sorted(runs.method) == ["bp", "shared"]
    assert runs.test_acc.notna().all()
    probes = pd.read_csv(with_toy / TABLES[1])
    own = probes[(probes.method == "shared") & probes.trained_with]
    assert set(own.rule) == {"shared"} and own.cosine.notna().any()
    # the figure shows the toy-trained nets, under the label its module declares
    assert "shared-B DFA-trained nets" in (with_toy / FIGURE).read_text()
    bp = read_result(with_toy / "results/digits/default/train/bp/lam0/seed1/metrics.json", "train")
    assert bp["config"]["options"] == {}  # BP records only its own options: none


@pytest.mark.workflow
def test_a_misspelt_rule_option_is_named_before_any_job(with_toy):
    bad = with_toy / "config/bad.yaml"
    bad.write_text(json.dumps({"methods": {"shared": {"scal": 2.0}}}))
    out = snakemake(with_toy, "-n", "--configfile", "config/base.yaml", str(bad), check=False)
    text = out.stdout + out.stderr
    assert out.returncode != 0 and "methods.shared: unknown option(s) ['scal']" in text, text
    assert "Job stats" not in text


@pytest.mark.workflow
def test_a_new_rule_file_without_its_catalogue_names_the_command(tmp_path):
    """The workflow reads the rules from their catalogue; a rule file added (or edited)
    without regenerating it stops the parse, naming the command."""
    work = fresh_copy(tmp_path)
    shutil.copy(ROOT / "tests/toy_rule.py",
                work / "src/credit_assign/science/learning_rules/shared.py")
    out = snakemake(work, "-n", "--configfile", "config/quick.yaml", check=False)
    text = out.stdout + out.stderr
    assert out.returncode != 0, text
    assert "python -m credit_assign.science.learning_rules --write" in text, text
    assert "Job stats" not in text


def test_the_walkthrough_shows_the_toy_rule_the_test_runs():
    doc = (ROOT / "docs/adding-a-rule.md").read_text()
    shown = doc.split("```python\n", 1)[1].split("```", 1)[0]
    toy = (ROOT / "tests/toy_rule.py").read_text()
    assert toy.split('"""', 2)[2].strip() == shown.strip()
