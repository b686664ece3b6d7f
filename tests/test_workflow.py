"""The Snakemake workflow end to end on a tiny config, in a temporary copy of the repo."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import TINY, fresh_copy, job_counts, needs_tex, pdf_text, snakemake
from pdf_fonts import figure_text_pt

from credit_assign.infra import paths
from credit_assign.infra.results import read_result

ROOT_CLAIMS = Path(__file__).resolve().parents[1] / "config" / "claims.yaml"

pytestmark = pytest.mark.workflow  # every test here runs Snakemake on a tiny config

TINY_REFERENCE = {
    "dataset": "digits",
    "tolerances": {"test_acc": {"abs": 0.02}, "h_L_norm_median": {"log10": 1.0},
                   "cosine": {"abs": 0.05}},
    "entries": [
        {"method": "bp", "lam": 0, "metric": "test_acc", "value": 0.5, "std": 0.1, "source": "t"},
        {"method": "dfa", "lam": 0.01, "metric": "h_L_norm_median", "value": 1.0, "source": "t"},
        {"method": "dfa", "lam": 0, "metric": "cosine", "layer": 1, "range": [0.2, 0.3],
         "source": "t"},
        {"method": "fa", "lam": 0, "metric": "test_acc", "value": 0.4, "source": "not run"},
    ],
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    dest = fresh_copy(tmp_path_factory.mktemp("repo"))
    (dest / "config" / "tiny.yaml").write_text(yaml.safe_dump(TINY))
    (dest / "config" / "tiny_reference.yaml").write_text(yaml.safe_dump(TINY_REFERENCE))
    return dest


@pytest.fixture(scope="module")
def tiny_run(repo) -> Path:
    snakemake(repo, "--configfile", "config/tiny.yaml")
    return repo


def test_every_result_validates_and_records_provenance(tiny_run):
    metrics = sorted(tiny_run.glob("results/digits/default/train/*/*/*/metrics.json"))
    assert len(metrics) == 2 * (2 + 2 + 1 + 1)
    for path in metrics:
        result = read_result(path, "train")
        assert result["provenance"]["packages"]["torch"]
        assert result["provenance"]["threads"] == 1
        assert result["config"]["training"]["epochs"] == 2
        # the weights are temp(): deleted once the jobs that read them are done
        assert not (path.parent / "model.pt").exists()
        assert not (path.parent / "resume.pt").exists()
    nulls = sorted(tiny_run.glob("results/digits/default/fresh_b_null/dfa/*/*.json"))
    assert len(nulls) == 2 * 2
    for path in nulls:
        assert len(read_result(path, "fresh_b_null")["fresh"]["deep_cosine"]) == 3


def test_tables_and_figures_are_written(tiny_run):
    import pandas as pd

    runs = pd.read_csv(tiny_run / "results/digits/default/summary/runs.csv")
    assert len(runs) == 12 and set(runs.method) == {"bp", "dfa", "frozen", "np"}
    epochs = pd.read_csv(tiny_run / "results/digits/default/summary/epochs.csv")
    assert len(epochs) == 12 * 2
    for fmt in ("pdf", "png", "svg"):
        assert (tiny_run / f"paper/figures/fig4_penalty_rescue.{fmt}").stat().st_size > 1000
    svg = (tiny_run / "paper/figures/fig4_penalty_rescue.svg").read_text()
    assert "<text" in svg  # text stays text: editable in a slide tool
    log = paths.fill(paths.LOGS["train"], dataset="digits", recipe="default", method="dfa",
                     lam="0", seed=1)
    assert (tiny_run / log).read_text().count("epoch 2/2") == 1


def test_reproduction_table_sets_ours_beside_the_reference(tiny_run):
    import pandas as pd

    table = pd.read_csv(tiny_run / "results/digits/default/summary/reproduction.csv")
    runs = pd.read_csv(tiny_run / "results/digits/default/summary/runs.csv")
    bp = table[(table.method == "bp") & (table.metric == "test_acc")].iloc[0]
    ours = runs[(runs.method == "bp") & (runs.lam == 0)].test_acc
    assert bp.ours_mean == pytest.approx(ours.mean()) and bp.ours_n == 2
    assert bp.difference == pytest.approx(ours.mean() - 0.5)
    assert bool(bp.within_tolerance) == (abs(ours.mean() - 0.5) <= 0.02)
    cos = table[table.metric == "cosine"].iloc[0]
    layers = pd.read_csv(tiny_run / "results/digits/default/summary/layers.csv")
    final = layers[(layers.method == "dfa") & (layers.lam == 0) & (layers.layer == 1)
                   & (layers.epoch == layers.epoch.max())]
    assert cos.ours_mean == pytest.approx(final.cosine.mean()) and cos.ours_n == 2
    outside = max(0.2 - cos.ours_mean, cos.ours_mean - 0.3, 0.0)  # distance from the range
    assert cos.difference == pytest.approx(outside if cos.ours_mean > 0.3 else -outside)
    assert bool(cos.within_tolerance) == (outside <= 0.05)
    fa = table[table.method == "fa"].iloc[0]
    assert fa.ours_n == 0 and pd.isna(fa.within_tolerance)
    md = (tiny_run / "results/digits/default/summary/reproduction.md").read_text()
    assert "not run" in md and "| bp | 0 |" in md


def test_second_run_has_nothing_to_do(tiny_run):
    out = snakemake(tiny_run, "--configfile", "config/tiny.yaml", "-n")
    assert "Nothing to be done" in out.stdout + out.stderr


def test_changing_one_lambda_reruns_only_its_jobs(tiny_run, tmp_path):
    changed = json.loads(json.dumps(TINY))
    changed["sweep"]["dfa"] = [0, {"fig4": 1.0e-3}]  # figure 4's λ, marked in the sweep
    cfg = tiny_run / "config" / "tiny-changed.yaml"
    cfg.write_text(yaml.safe_dump(changed))
    out = snakemake(tiny_run, "--configfile", str(cfg), "-n")
    counts = job_counts(out.stdout)
    assert counts["train"] == 2 and counts["fresh_b_null"] == 2  # the new λ × 2 seeds
    assert "prepare_data" not in counts


def test_changing_one_rules_option_reruns_only_that_rules_runs(tiny_run, tmp_path):
    """A run depends on its own rule's options only (methods.<method>)."""
    changed = json.loads(json.dumps(TINY))
    changed["methods"] = {"np": {"directions": 6}}
    cfg = tiny_run / "config" / "tiny-np.yaml"
    cfg.write_text(yaml.safe_dump(changed))
    out = snakemake(tiny_run, "--configfile", str(cfg), "-n")
    counts = job_counts(out.stdout)
    assert counts["train"] == 2 and counts["alignment_probe"] == 2  # np × 2 seeds
    assert "fresh_b_null" not in counts


# Which configs are refused, and the messages, are unit tests (tests/test_planning.py);
# here, once for the schema and once for the pipeline's checks, that Snakemake stops
# with the message before it plans a job.
@pytest.mark.parametrize("override, named", [
    ("training={'epochz': 3}", "epochz"),
    ("methods={'feedback_scale': 'unit'}", "'feedback_scale' is not a learning rule"),
    ("rule={'dfa': {'feedback_scale': 'unit'}}", "Rename `rule:` to `methods:`"),
    # 300 characters failed with a raw OSError, 250 trained and then crashed (round five)
    ("variants={'" + "v" * 300 + "': {'kind': 'open', 'methods': ['dfa'], 'overrides': {}}}",
     "a variant's name is at most 32 characters (this one has 300)"),
])
def test_bad_config_is_refused_before_any_job(repo, override, named):
    out = snakemake(repo, "-n", "--configfile", "config/quick.yaml", "--config", override,
                    check=False)
    assert out.returncode != 0
    text = out.stdout + out.stderr
    assert named in text and "Job stats" not in text


def test_the_workflow_parses_without_torch(repo, tmp_path):
    """Parsing reads the rules from their catalogue (credit_assign.planning): with an
    `import torch` that fails, the quick config still plans every job."""
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("raise ImportError('torch at parse')\n")
    out = snakemake(repo, "-n", "--configfile", "config/quick.yaml",
                    env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert job_counts(out.stdout)["train"] == 21


def test_lint_is_clean(repo):
    out = snakemake(repo, "--lint", "--configfile", "config/quick.yaml", check=False)
    assert "Congratulations" in out.stdout + out.stderr


def test_primer_figures_and_check_are_part_of_the_run(tiny_run):
    for name in ("fig_primer_phases", "fig_primer_check"):
        for fmt in ("pdf", "png", "svg"):
            assert (tiny_run / f"paper/figures/{name}.{fmt}").stat().st_size > 1000
    check = read_result(tiny_run / "results/primer_check/primer_check.json", "primer_check")
    for model in check["models"].values():
        assert model["free_energy"] == 0.0
        assert 0.9 < model["slopes"]["all"]["one_sided"] < 1.1
        assert 1.9 < model["slopes"]["all"]["symmetric"] < 2.1


def test_forced_figure_reruns_only_its_rule(tiny_run):
    target = "paper/figures/fig4_penalty_rescue.pdf"
    out = snakemake(tiny_run, target, "--configfile", "config/tiny.yaml", "-n", "--forcerun",
                    target)
    assert job_counts(out.stdout) == {"fig4_penalty_rescue": 1, "total": 1}


def test_figure_without_results_runs_exactly_what_it_needs(tmp_path):
    out = snakemake(fresh_copy(tmp_path), "--configfile", "config/quick.yaml", "-n",
                    "paper/figures/fig4_penalty_rescue.svg")
    counts = job_counts(out.stdout)
    counts.pop("total")
    assert counts == {"prepare_data": 1, "train": 21, "fresh_b_null": 9, "aggregate": 1,
                      "fig4_penalty_rescue": 1}


def test_primer_schematic_alone_on_a_fresh_copy(tmp_path):
    fresh_copy(tmp_path)
    out = snakemake(tmp_path, "paper/figures/fig_primer_phases.svg")
    assert job_counts(out.stdout + out.stderr)["fig_primer_phases"] == 1
    made = sorted(p.name for p in (tmp_path / "paper/figures").iterdir())
    assert made == ["fig_primer_phases.pdf", "fig_primer_phases.png", "fig_primer_phases.svg"]
    assert (tmp_path / "paper/figures/fig_primer_phases.svg").read_text().count("<text") > 10
    assert not (tmp_path / "results").exists()


def test_report_contains_every_figure(tiny_run):
    snakemake(tiny_run, "--configfile", "config/tiny.yaml", "--report", "report.html")
    html = (tiny_run / "report.html").read_text(errors="replace")
    for name in ("fig4_penalty_rescue", "fig_primer_phases", "fig_primer_check",
                 "fig_alignment_probes", "fig_ep_stack_cosines", "runs.csv"):
        assert name in html


def test_probes_measure_every_rule_at_every_saved_checkpoint(tiny_run):
    import pandas as pd

    probes = sorted(tiny_run.glob("results/digits/default/probes/*/*/*.json"))
    assert len(probes) == 12
    for path in probes:
        result = read_result(path, "probes")
        assert [e["epoch"] for e in result["epochs"]] == [1, 2]
        for rep in result["epochs"]:
            assert rep["loss_decrease"]["bp"]["ratio"] == pytest.approx(1.0, abs=1e-9)
            assert rep["rules"]["bp"]["cosine"] == pytest.approx([1.0] * 3, abs=1e-9)
            assert {"dfa", "fa", "np_sequential", "np_simultaneous"} <= set(rep["rules"])
    table = pd.read_csv(tiny_run / "results/digits/default/summary/probe_alignment.csv")
    assert set(table.epoch) == {1, 2} and table.layer.max() == 2
    for fmt in ("pdf", "png", "svg"):
        assert (tiny_run / f"paper/figures/fig_alignment_probes.{fmt}").stat().st_size > 1000


def test_ep_stack_probe_runs_as_pipeline_jobs(tiny_run):
    import pandas as pd

    for precision in ("float32", "bfloat16"):  # the config's, and the comparison's
        result = read_result(tiny_run / f"results/ep_stack/pydoc/{precision}/seed0.json",
                             "ep_stack")
        assert result["settings"]["model"]["width"] == 16
        assert len(result["pretrain"]["loss"]) == 3
        assert result["settings"]["pretrain"]["precision"] == precision
        assert result["provenance"]["precision"]["pretrain"] == precision
    cos = pd.read_csv(tiny_run / "results/ep_stack/summary/cosines.csv")
    assert set(cos.group) == {"all", "block0", "block1", "embeddings"}
    assert sorted(cos.free_steps.unique()) == [20, 40]
    assert set(cos.precision) == {"float32", "bfloat16"}
    by_seed = pd.read_csv(tiny_run / "results/ep_stack/summary/by_seed.csv")
    assert len(by_seed) == 2 * 2 * 4  # precision × T1 × group, one seed
    assert (by_seed.batches == 1).all()
    timings = pd.read_csv(tiny_run / "results/ep_stack/summary/timings.csv")
    assert {"pretrain", "reference", "ep_nudged"} <= set(timings.phase)
    for fmt in ("pdf", "png", "svg"):
        assert (tiny_run / f"paper/figures/fig_ep_stack_cosines.{fmt}").stat().st_size > 1000
    assert not list(tiny_run.glob("results/ep_stack/pydoc/*/seed0.resume.pt"))


FIGURE_RULES = ("fig4_penalty_rescue", "fig_primer_phases", "fig_primer_check",
                "fig_alignment_probes", "fig_ep_stack_cosines")


def test_rebuilt_figures_are_byte_identical_in_every_format(tiny_run):
    figures = sorted(p for p in (tiny_run / "paper/figures").iterdir()
                     if p.suffix in (".pdf", ".png", ".svg"))
    assert len(figures) == 3 * len(FIGURE_RULES)
    before = {p.name: p.read_bytes() for p in figures}
    snakemake(tiny_run, "--configfile", "config/tiny.yaml", "--forcerun", *FIGURE_RULES)
    changed = [p.name for p in figures if p.read_bytes() != before[p.name]]
    assert changed == []


def test_deleted_intermediates_are_rebuilt_and_nothing_else(tiny_run):
    """A null and the data caches deleted (as an error message may advise): the next run
    retrains the null's model (its weights are temp(), not kept) and rebuilds the null
    and what depends on it, the retrained metrics byte-identical; a deleted cache is no
    reason to rerun anything (no prepare job runs) and is rebuilt by the first job that
    reads it; afterwards there is truly nothing to be done, the weights gone again."""
    run_dir = tiny_run / "results/digits/default/train/dfa/lam0/seed2"
    null = tiny_run / "results/digits/default/fresh_b_null/dfa/lam0/seed2.json"
    cache, corpus = tiny_run / "data/digits.pt", tiny_run / "data/corpus/pydoc.pt"
    metrics = (run_dir / "metrics.json").read_bytes()
    assert not (run_dir / "model.pt").exists()
    for path in (null, cache, corpus):
        path.unlink()
    counts = job_counts(snakemake(tiny_run, "--configfile", "config/tiny.yaml", "-n").stdout)
    assert counts["train"] == 1 and counts["fresh_b_null"] == 1
    assert "prepare_data" not in counts and "prepare_corpus" not in counts
    assert "ep_stack_probe" not in counts
    snakemake(tiny_run, "--configfile", "config/tiny.yaml")
    assert null.exists() and cache.exists() and not (run_dir / "model.pt").exists()
    assert not corpus.exists()  # no job read it: it is rebuilt when one does
    assert (run_dir / "metrics.json").read_bytes() == metrics
    again = snakemake(tiny_run, "--configfile", "config/tiny.yaml", "-n")
    assert "Nothing to be done" in again.stdout + again.stderr


def test_a_recipe_variant_runs_as_its_own_jobs_beside_the_default(tiny_run):
    """`snakemake variants`: the variant's methods only, on the study's seeds, under
    results/<dataset>/<name>/, with its overrides in each run's config; the default
    results untouched; the gap map has a column per recipe."""
    import pandas as pd

    cfg = tiny_run / "config" / "tiny-variants.yaml"
    cfg.write_text(yaml.safe_dump({"variants": {"const_lr": {
        "kind": "departs", "description": "constant lr, e summed", "methods": ["dfa"],
        "overrides": {"training": {"schedule": "constant"},
                      "methods": {"dfa": {"error_reduction": "sum"}}}}}}))
    metrics = tiny_run / "results/digits/default/train/dfa/lam0/seed1/metrics.json"
    default = metrics.read_bytes()
    dry = snakemake(tiny_run, "variants", "--configfile", "config/tiny.yaml", str(cfg), "-n")
    counts = job_counts(dry.stdout)
    assert counts["train"] == 4 and counts["fresh_b_null"] == 4  # dfa × 2 λ × 2 seeds
    snakemake(tiny_run, "variants", "--configfile", "config/tiny.yaml", str(cfg))
    run = read_result(tiny_run / "results/digits/const_lr/train/dfa/lam0/seed1/metrics.json",
                      "train")
    assert run["config"]["variant"] == "const_lr"
    assert run["config"]["training"]["schedule"] == "constant"
    assert run["config"]["options"] == {"feedback_scale": "unit", "error_reduction": "sum",
                                     "train_embedding": True}  # the rest: the rule's defaults
    assert len(set(run["history"]["lr"])) == 1
    assert metrics.read_bytes() == default
    gaps = pd.read_csv(tiny_run / "results/digits/default/summary/variants_gap.csv")
    assert list(dict.fromkeys(gaps.recipe)) == ["default", "const_lr"]
    inherited = gaps[(gaps.recipe == "const_lr") & gaps.inherited]
    assert set(inherited.method) == {"bp"}  # the methods it leaves alone
    assert "run" not in gaps and {"lam", "seed", "layer", "paper_std", "paper_range"} <= set(gaps)
    side = (tiny_run / "results/digits/default/summary/reproduction_variants.md").read_text()
    assert side.startswith("# Reproduction")
    assert "best departs variant (`const_lr`) side by side" in side
    notes = (tiny_run / "results/digits/default/summary/reproduction_notes.md").read_text()
    assert "What matches under the default recipe" in notes and "`const_lr`" in notes
    md = (tiny_run / "results/digits/const_lr/summary/reproduction.md").read_text()
    assert "Recipe variant `const_lr`" in md
    for fmt in ("pdf", "png", "svg"):
        assert (tiny_run / f"paper/figures/fig_variants.{fmt}").stat().st_size > 1000
    assert "Nothing to be done" in snakemake(tiny_run, "--configfile", "config/tiny.yaml",
                                             "-n").stdout  # the default target is unchanged


def test_the_claims_target_judges_fresh_seeds_beside_the_study(tiny_run):
    """`snakemake claims`: the claims file's runs on its fresh and study seeds (the
    study's already there, not rerun), each DFA run's per-layer null, the EP probe on its
    own seeds; the verdicts, the page and the figure, from the same findings."""
    import pandas as pd

    spec = yaml.safe_load((ROOT_CLAIMS).read_text())
    spec["seeds"] = {"fresh": [3, 4, 5], "study": [1, 2], "ep_fresh": [0]}
    # 3 fresh seeds: the rule for a file written now (a t-interval, Holm), not version 1's
    # bootstrap, which needs 8
    spec["version"] = 2
    spec["decision"].update(method="t", correction="holm")
    # must be what the config draws (YAML reads the key `null:` as None; claims.load
    # maps it back)
    spec[None]["draws"] = TINY["fresh_b_null"]["draws"]
    spec["runs"] = {"dfa": [0, 1.0e-2], "bp": [0, 1.0e-2], "frozen": [0]}
    spec["claims"] = [c for c in spec["claims"] if c["id"] not in
                      ("small_penalty_no_alignment", "fa_over_dfa")]
    spec["claims"][-1]["effect"]["free_steps"] = TINY["ep_stack"]["probe"]["free_steps"]
    layers = {"learned_alignment": [0, 1, 2, "deep"], "no_information_unpenalised": [1, 2]}
    for c in spec["claims"]:
        c["effect"]["layers"] = layers.get(c["id"], c["effect"].get("layers"))
        if c["effect"]["layers"] is None:
            del c["effect"]["layers"]
    (tiny_run / "config" / "tiny-claims.yaml").write_text(
        yaml.safe_dump(spec, allow_unicode=True))
    args = ("claims", "--configfile", "config/tiny.yaml", "--config",
            "claims={'file': 'config/tiny-claims.yaml'}")
    counts = job_counts(snakemake(tiny_run, *args, "-n").stdout)
    # 5 runs × 3 fresh seeds (the study's seeds 1, 2 are the tiny config's own runs)
    assert counts["train"] == 15 and counts["fresh_b_null"] == 6
    assert "ep_stack_probe" not in counts  # seed 0 is the tiny config's probe
    snakemake(tiny_run, *args)
    out = tiny_run / "results/digits/default/claims"
    verdicts = pd.read_csv(out / "claims.csv")
    assert set(verdicts.verdict) <= {"holds", "contradicted", "undecided"}
    assert set(verdicts.seed_set) == {"fresh", "study", "ep_fresh"}
    # the study's 2 seeds are fewer than the rule's 3: every study verdict is undecided
    assert set(verdicts[verdicts.seed_set == "study"].reason) == {"too_few"}
    by_seed = pd.read_csv(out / "claims_by_seed.csv")
    assert set(by_seed.status) <= {"ok", "unsettled"}  # nothing diverged on the digits
    found = json.loads((out / "findings.json").read_text())
    # the order check reads every pre-registered result: training, nulls and the EP probe
    assert found["order"]["results"] == 15 + 6 + 1
    assert {k: v["results"] for k, v in found["order"]["by_kind"].items()} == {
        "train": 15, "fresh_b_null": 6, "ep_stack": 1}
    page = (out / "claims.md").read_text()
    assert page.startswith("# The paper's claims") and "nan" not in page
    for fmt in ("pdf", "png", "svg"):
        assert (tiny_run / f"paper/figures/fig_claims.{fmt}").stat().st_size > 1000
    assert "Nothing to be done" in snakemake(tiny_run, *args, "-n").stdout


# ---- the paper (TeX is optional for users; CI installs it and sets REQUIRE_TEX) -------


@needs_tex
def test_paper_is_built_from_the_tables_and_follows_a_changed_value(tiny_run, tmp_path):
    """`snakemake paper/ms.pdf` on finished results runs only the paper's four jobs
    (the findings, its numbers, its claims and history, the PDF); the
    PDF states a number from runs.csv; a changed value in runs.csv (written as the
    pipeline writes a table, with its record) rebuilds findings.json, numbers.tex, the
    figure and table that read it and the PDF (no training, no aggregation), and the PDF
    then states the new value. arxiv.tar.gz compiles on its own."""
    import pandas as pd

    from credit_assign.analysis import tables

    work = tmp_path / "w"
    shutil.copytree(tiny_run, work, symlinks=True)  # keeps mtimes: nothing else is stale
    first = snakemake(work, "paper/ms.pdf", "--configfile", "config/tiny.yaml")
    ran = {k for k in job_counts(first.stdout + first.stderr) if k != "total"}
    assert ran == {"findings", "paper_numbers", "paper_claims", "paper"}
    runs_csv = work / "results/digits/default/summary/runs.csv"
    runs = pd.read_csv(runs_csv)
    bp = (runs.method == "bp") & (runs.lam == 0)
    text = pdf_text(work / "paper/ms.pdf")
    assert f"{runs[bp].test_acc.mean():.3f}" in text
    # every figure is drawn at the size it is printed: its smallest text, measured in
    # the PDF (a glyph's font size times its drawing scale), reads ≥ 6.5 pt (7 pt drawn;
    # a tight bounding box may widen a figure a little past the text width)
    printed = figure_text_pt(work / "paper/ms.pdf")
    assert len(printed) >= 4, printed  # fig4, the primer, the EP stack, the probes
    assert min(printed.values()) >= 6.5, printed
    assert "0.777" not in text
    runs.loc[bp, "test_acc"] = 0.777
    tables.write(runs, runs_csv, "runs", tables.recorded_inputs(runs_csv))
    second = snakemake(work, "paper/ms.pdf", "--configfile", "config/tiny.yaml")
    ran = {k for k in job_counts(second.stdout + second.stderr) if k != "total"}
    assert {"findings", "paper_numbers", "paper"} <= ran
    assert ran <= {"findings", "paper_numbers", "paper", "fig4_penalty_rescue",
                   "reproduction"}, ran
    assert "0.777" in pdf_text(work / "paper/ms.pdf")
    assert "Nothing to be done" in snakemake(work, "paper/ms.pdf", "--configfile",
                                             "config/tiny.yaml", "-n").stdout

    snakemake(work, "paper/arxiv.tar.gz", "--configfile", "config/tiny.yaml")
    alone = tmp_path / "arxiv"
    alone.mkdir()
    shutil.unpack_archive(work / "paper/arxiv.tar.gz", alone)
    subprocess.run(["latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error", "ms.tex"],
                   cwd=alone, capture_output=True, check=True, timeout=300)
    assert "0.777" in pdf_text(alone / "ms.pdf")


def test_paper_without_tex_fails_at_once_saying_what_to_install(repo, tmp_path):
    """PATH with every program of this machine but latexmk and pdflatex."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        for program in Path(folder).glob("*") if Path(folder).is_dir() else []:
            link = bin_dir / program.name
            if program.name not in ("latexmk", "pdflatex") and not link.exists():
                link.symlink_to(program)
    out = snakemake(repo, "paper/ms.pdf", "--configfile", "config/tiny.yaml", "-n",
                    check=False, env={**os.environ, "PATH": str(bin_dir)})
    assert out.returncode != 0
    text = out.stdout + out.stderr
    assert "latexmk" in text and "apt-get install texlive-latex-base" in text
    assert "Job stats" not in text  # refused before any job was planned
