"""The workflow's logic as plain functions (credit_assign.planning), without Snakemake:
the config checks and their messages, the target lists, each job's params, the rules'
catalogue. Milliseconds each; the tests that start Snakemake (test_workflow.py, marked
slow) keep what is Snakemake's own: the DAG, reruns, real jobs."""

import ast
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from credit_assign.infra import paths
from credit_assign.planning import ConfigError, catalog, checks, matrix, params, targets
from credit_assign.planning.configfiles import ConfigFileError

ROOT = Path(__file__).resolve().parents[1]
PIPELINE = sorted(p.stem for p in (ROOT / "src/credit_assign/planning").glob("*.py")
                  if p.stem != "__init__")


def parse(tmp_path, *configs: dict, base=("config/quick.yaml",), overrides=None) -> dict:
    """The config as `snakemake -n --configfile <base> <configs…>` parses it from ROOT
    (each dict written to a YAML file first, as a user would), or the error it raises."""
    files = [ROOT / b for b in base]
    for i, cfg in enumerate(configs):
        path = tmp_path / f"extra{i}.yaml"
        path.write_text(yaml.safe_dump(cfg))
        files.append(path)
    return checks.load_config(files, ROOT, overrides)


# ---- torch-free ------------------------------------------------------------------------
@pytest.mark.process
def test_every_pipeline_module_imports_without_torch_or_the_science():
    code = (f"import sys; sys.path.insert(0, {str(ROOT / 'src')!r})\n"
            + "".join(f"import credit_assign.planning.{m}\n" for m in PIPELINE)
            + "from credit_assign.planning import catalog\ncatalog.methods()\n"
            + "bad = sorted(m for m in sys.modules if m == 'torch' or m.startswith("
              "('torch.', 'credit_assign.science.learning_rules', "
              "'credit_assign.science.model')))\n"
            + "assert not bad, bad\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert {"catalog", "checks", "targets", "params"} <= set(PIPELINE)


# ---- the rules' catalogue ----------------------------------------------------------------
def test_the_committed_catalogue_is_what_the_registry_generates():
    from credit_assign.science.learning_rules import catalog as registry

    text = catalog.render(registry(), catalog.sources_digest())
    assert catalog.CATALOG.read_text() == text, f"rerun `{catalog.REGENERATE}`"
    assert catalog.methods() == tuple(registry())


def test_a_catalogue_of_other_rule_sources_names_the_command_that_regenerates_it(tmp_path):
    stale = json.loads(catalog.CATALOG.read_text()) | {"sources_sha256": "0" * 64}
    path = tmp_path / "rules_catalog.json"
    path.write_text(json.dumps(stale))
    with pytest.raises(ConfigError,
                       match=r"python -m credit_assign\.science\.learning_rules --write"):
        catalog.load(path)
    assert catalog.load(path, check=False) == catalog.load()


BLOCKS = [("np", None), ("np", {}), ("np", {"sigma": 1}), ("np", {"sigma": 0.0}),
          ("np", {"sigma": -1.0}), ("np", {"directions": 2.5}), ("np", {"directions": True}),
          ("np", {"directions": 0}), ("np", {"sigmaa": 1.0, "zeta": 2}),
          ("np", {"mode": "sequential", "sigma": 2.0e-3}), ("np", {"mode": None}),
          ("dfa", {"feedback_scale": "huge"}), ("dfa", {"train_embedding": 1}),
          ("dfa", {"error_reduction": "sum"}), ("fa", {"backward": "jacobian"}),
          ("fa", {"backward": "jacobian", "feedback_scale": "unit"}),
          ("fa", {"feedback_scale": "init", "backward": "jacobian", "x": 1}),
          ("frozen", {"embedding_signal": "dfa"}), ("bp", {}), ("bp", {"x": 1}),
          ("sdil", None)]


@pytest.mark.parametrize("method, block", BLOCKS, ids=[f"{m}-{b}" for m, b in BLOCKS])
def test_options_are_checked_and_filled_as_the_rules_own_options_class_does(method, block):
    """Same filled options (values, types, key order), same error messages."""
    from credit_assign.science.learning_rules import options_of

    try:
        expected = options_of(method, block).to_config()
    except ValueError as err:
        with pytest.raises(ValueError) as ours:
            catalog.options_of(method, block)
        assert str(ours.value) == str(err)
    else:
        got = catalog.options_of(method, block)
        assert got == expected and list(got) == list(expected)
        assert [type(v) for v in got.values()] == [type(v) for v in expected.values()]


# ---- config errors, named before any job (formerly one Snakemake run each) ----------------
BAD_CONFIGS = [
    ({"training": {"epochz": 3}}, "'epochz' was unexpected"),
    ({"training": {"epochs": "many"}}, "instance['training']['epochs']"),
    ({"training": {"lr": -1.0}}, "instance['training']['lr']"),
    ({"sweep": {"dfa": [-1.0]}}, "instance['sweep']['dfa'][0]"),
    # written as 1e-4 (YAML 1.1: a string): named with the spelling that works
    ({"sweep": {"dfa": ["1e-4"]}}, "sweep.dfa[0] = 1e-4 is read by YAML as the string"),
    ({"sweep": {"seeds": []}}, "instance['sweep']['seeds']"),
    ({"sweep": {"sdil": [0.0]}}, "sweep: 'sdil' is not a learning rule; registered rules: "
     "['bp', 'dfa', 'dfa_cap', 'dfa_redraw', 'fa', 'frozen', 'np']"),
    ({"methods": {"dfa": {"feedback_scal": "unit"}}},
     "methods.dfa: unknown option(s) ['feedback_scal']"),
    ({"methods": {"np": {"sigma": -1.0}}}, "methods.np.sigma must be > 0, got -1.0"),
    ({"methods": {"np": {"directions": 2.5}}},
     "methods.np.directions must be of type integer"),
    ({"methods": {"feedback_scale": "unit"}},
     "methods: 'feedback_scale' is not a learning rule "
     "('feedback_scale' is an option of dfa, dfa_cap, dfa_redraw, fa, frozen: write it as "
     "methods.<method>.feedback_scale)"),
    ({"methods": {"dfa": 3}}, "methods.dfa: 3 is not a mapping of options"),
    ({"probes": {"network": {"method": "sdil"}}}, "probes.network.method: 'sdil' is not a"),
    ({"training": {"per_method": {"dfx": {"epochs": 3}}}}, "training.per_method: 'dfx' is not"),
    ({"dataset": "mnist"}, "instance['dataset']"),
    ({"model": {"width": 0}}, "instance['model']['width']"),
    ({"fresh_b_null": {"draws": 1}}, "instance['fresh_b_null']['draws']"),
    ({"training": {"device": "tpu"}}, "instance['training']['device']"),
    ({"methods": {"dfa": {"feedback_scale": "huge"}}},
     "methods.dfa.feedback_scale must be one of ['unit', 'fan_in'], got 'huge'"),
    ({"sweep": {"seeds": [-1]}}, "sweep.seeds[0] = -1 is not a plain decimal integer"),
    ({"sweep": {"seeds": [2**32]}}, "instance['sweep']['seeds'][0]"),
    ({"ep_stack": {"seeds": [-3]}}, "ep_stack.seeds[0] = -3 is not a plain decimal integer"),
    ({"sweep": {"dfa": [float("inf")]}}, "instance['sweep']['dfa'][0]"),
    ({"sweep": {"dfa": [float("nan")]}}, "sweep.dfa[0] = nan: numbers must be finite"),
    ({"training": {"lr": float("nan")}}, "training.lr = nan: numbers must be finite"),
    ({"sweep": {"dfa": [0.01, 0.0100000001]}}, "are one λ to the tables (lam0.01 and"),
    ({"training": {"epochs": 10**9}}, "instance['training']['epochs']"),
    # figure 4's λ is marked in the sweep; the old second key says how to write it now
    ({"figures": {"penalty_lambda": 0.5}}, "figures.penalty_lambda = 0.5: this key is gone; "
     "figure 4's λ is marked in the sweep. Remove the `figures` section and write that λ "
     "in sweep.dfa as {fig4: 0.5}"),
    # each learning rule's options were `rule.<method>`: the old block says what to write
    ({"rule": {"dfa": {"feedback_scale": "unit"}}}, "rule: this key is gone; each learning "
     "rule's options are in methods.<method> now (the method's name as in sweep.<method>). "
     "Rename `rule:` to `methods:`"),
    ({"variants": {"e": {"kind": "open", "methods": ["fa"],
                         "overrides": {"rule": {"fa": {"feedback_scale": "unit"}}}}}},
     "variants.e.overrides.rule: this key is gone; each learning rule's options are in "
     "variants.e.overrides.methods.<method> now"),
    ({"sweep": {"dfa": [0, 1.0e-4, 1.0e-2]}}, "sweep.dfa [0.0001, 0.01] has penalised λ but "
     "marks none for figure 4: write the one figure 4 shows as {fig4: λ}"),
    ({"sweep": {"dfa": [0, {"fig4": 1.0e-4}, {"fig4": 1.0e-2}]}},
     "sweep.dfa marks 2 λ for figure 4 (0.0001, 0.01); mark one"),
    ({"sweep": {"dfa": [{"fig4": 0}, 1.0e-2]}}, "sweep.dfa: {fig4: 0.0} marks an unpenalised λ"),
    ({"sweep": {"dfa": [0, 1.0e-2, {"fig4": 1.0e-2}]}}, "are one λ to the tables (lam0.01 and"),
    ({"sweep": {"dfa": [0, {"fig": 1.0e-2}]}}, "instance['sweep']['dfa'][1]"),
    ({"sweep": {"bp": [0, {"fig4": 1.0e-2}]}}, "instance['sweep']['bp'][1]"),
    ({"variants": {"slow": {"kind": "open", "methods": ["dfa"],
                            "overrides": {"training": {"epochz": 3}}}}},
     "variants.slow.overrides"),
    ({"variants": {"Bad-Name": {"kind": "open", "methods": ["dfa"], "overrides": {}}}}, "Bad-Name"),
    # a name longer than its folder, logs and fig_variants_key's header carry (round five)
    ({"variants": {"v" * 33: {"kind": "open", "methods": ["dfa"], "overrides": {}}}},
     f"variants.{'v' * 33}: a variant's name is at most 32 characters (this one has 33)"),
    # a variant's folder is results/<dataset>/<name>: not the stated recipe's, nor one a
    # recipe's folder holds
    ({"variants": {"default": {"kind": "open", "methods": ["dfa"], "overrides": {}}}},
     "'default' does not match"),
    ({"variants": {"summary": {"kind": "open", "methods": ["dfa"], "overrides": {}}}},
     "'summary' does not match"),
    ({"variants": {"e": {"kind": "open", "methods": ["dfa"],
                         "overrides": {"methods": {"error_reduction": "sum"}}}}},
     "variants.e.overrides: methods: 'error_reduction' is not a learning rule"),
    ({"variants": {"e": {"kind": "open", "methods": ["dfa"],
                         "overrides": {"methods": {"dfa": {"error_reduction": "max"}}}}}},
     "variants.e.overrides: methods.dfa.error_reduction must be one of"),
    # the study's pre-registered design: one set of seeds for every recipe, each labelled
    ({"variants": {"screened": {"kind": "open", "methods": ["dfa"], "seeds": [42],
                                "overrides": {}}}},
     "variants.screened.seeds = [42]: every recipe of the study runs on the study's seeds"),
    ({"study": {"seeds": [7]}}, "study.seeds = [7] differ from sweep.seeds"),
    ({"variants": {"unlabelled": {"methods": ["dfa"], "overrides": {}}}},
     "'kind' is a required property"),
    ({"variants": {"x": {"kind": "better", "methods": ["dfa"], "overrides": {}}}},
     "instance['variants']['x']['kind']"),
    ({"study": {"ranking": {"primary": "vibes"}}}, "instance['study']['ranking']['primary']"),
    # a variant whose methods all have empty sweeps would aggregate nothing (and its old
    # tables would be deleted before the job failed)
    ({"sweep": {"fa": []}, "variants": {"fa_only": {"kind": "open", "methods": ["fa"],
                                                    "overrides": {}}}},
     "variants.fa_only: none of its methods ['fa'] has a λ in the sweep"),
    ({"sweep": {"dfa": [], "bp": [], "frozen": [], "np": []}},
     "sweep: every sweep.<method> is empty"),
    # a probe epoch past the last epoch would be missing from the probe tables silently
    ({"training": {"epochs": 1}, "probes": {"epochs": [1, 5]}},
     "probes.epochs: 5 past the last epoch of bp (1"),
    # a claims file with a wrong key is refused when the config is parsed
    ({"claims": {"file": "config/paper_reference.yaml"}}, "config/paper_reference.yaml: "),
]


@pytest.mark.parametrize("bad, named", BAD_CONFIGS, ids=[n for _, n in BAD_CONFIGS])
def test_a_malformed_config_is_named(tmp_path, bad, named):
    """The checks the Snakefile runs when it parses (test_workflow.py shows, once, that
    such an error stops Snakemake before it plans a job)."""
    with pytest.raises(ConfigError) as err:  # the schema's, the files' (ConfigFileError) too
        parse(tmp_path, bad)
    assert named in str(err.value)


def test_the_schema_caps_a_variants_name_where_the_check_does():
    """The schema's own limit is the check's (which says why, before it is asked)."""
    import yaml
    from snakemake.exceptions import WorkflowError
    from snakemake.utils import validate

    schema = yaml.safe_load((ROOT / "workflow/schemas/config.schema.yaml").read_text())
    names = schema["properties"]["variants"]["propertyNames"]
    assert names["maxLength"] == checks.VARIANT_NAME_MAX
    config = checks.load_config(["config/quick.yaml"], ROOT)
    spec = {"kind": "open", "methods": ["dfa"], "overrides": {}}
    validate({**config, "variants": {"v" * checks.VARIANT_NAME_MAX: spec}},
             str(ROOT / "workflow/schemas/config.schema.yaml"))
    with pytest.raises(WorkflowError, match="is too long"):
        validate({**config, "variants": {"v" * (checks.VARIANT_NAME_MAX + 1): spec}},
                 str(ROOT / "workflow/schemas/config.schema.yaml"))


def test_a_number_yaml_reads_as_a_string_is_named_with_its_file_line_and_fix(tmp_path):
    """sweep.dfa: [0, 1e-2]: YAML 1.1 reads 1e-2 as a string; the error names the file,
    the line and the spelling that works."""
    bad = tmp_path / "lams.yaml"
    bad.write_text("sweep:\n  dfa: [0, 1e-2]\n")
    with pytest.raises(ConfigError, match=r"lams\.yaml, line 2: sweep\.dfa\[1\] = 1e-2 .*"
                                          r"write it with a dot and a signed exponent: "
                                          r"1\.0e-2"):
        checks.load_config([ROOT / "config/quick.yaml", bad], ROOT)


def test_a_duplicate_yaml_key_and_a_badly_spelled_seed_are_named(tmp_path):
    dup = tmp_path / "dup.yaml"
    dup.write_text("training:\n  epochs: 3\n  lr: 1.0e-3\n  epochs: 5\n")
    with pytest.raises(ConfigFileError, match="dup.yaml, line 4: the key 'epochs' appears twice"):
        checks.load_config([ROOT / "config/quick.yaml", dup], ROOT)
    for seeds in ("[042]", "[42.0]", "[true]"):
        bad = tmp_path / "seeds.yaml"
        bad.write_text(f"sweep:\n  seeds: {seeds}\n")
        with pytest.raises(ConfigFileError, match=rf"seeds.yaml, line 2: sweep.seeds\[0\] = "
                                                  rf"{seeds[1:-1]} is not a plain decimal"):
            checks.load_config([ROOT / "config/quick.yaml", bad], ROOT)


@pytest.mark.parametrize("source, named", [
    ({"cifar10": {"source": "/nonexistent/cifar"}}, "data.cifar10.source = '/nonexistent/cifar'"),
    ({"cifar10": {"source": "download"}, "tinyshakespeare": {"source": "/nonexistent/input.txt"}},
     "data.tinyshakespeare.source = '/nonexistent/input.txt' is not a (non-empty) file"),
])
def test_a_missing_data_source_is_named(tmp_path, source, named):
    with pytest.raises(ConfigError) as err:
        parse(tmp_path, {"data": source}, base=())
    assert named in str(err.value)


def test_a_local_copy_of_each_source_passes(tmp_path):
    import tarfile

    folder = tmp_path / "cifar" / "cifar10"
    for split in ("train", "test"):
        (folder / split / "cat").mkdir(parents=True)
    (tmp_path / "input.txt").write_text("First Citizen:\n")
    with tarfile.open(tmp_path / "images.tar", "w") as tar:
        tar.add(folder, arcname="images")
    for cifar in (tmp_path / "cifar", folder, tmp_path / "images.tar"):
        parse(tmp_path, {"data": {"cifar10": {"source": str(cifar)},
                                  "tinyshakespeare": {"source": str(tmp_path / "input.txt")}}},
              base=())


def test_the_checks_fill_every_rules_options_and_sweep():
    cfg = checks.load_config([ROOT / "config/quick.yaml"], ROOT)
    # Snakemake's order: the --configfile's keys (quick.yaml's np), config.yaml's, then bp
    assert list(cfg["methods"]) == ["np", "dfa", "fa", "frozen", "bp", "dfa_cap", "dfa_redraw"]
    assert cfg["methods"]["np"] == {"sigma": 1.0e-3, "directions": 16, "mode": "simultaneous",
                                 "train_embedding": True}
    assert cfg["methods"]["bp"] == {} and cfg["sweep"]["fa"] == []


# ---- targets and params ------------------------------------------------------------------
@pytest.fixture(scope="module")
def paper_config():
    return checks.load_config([], ROOT)


def test_the_paper_config_asks_for_every_paper_job(paper_config, tmp_path):
    """(Formerly two dry-runs of Snakemake.) dfa × 3 λ × 3 seeds, bp × 2 λ × 3, frozen × 3,
    fa × 3; a null per DFA model; the EP probe on Tiny Shakespeare, 3 seeds in float32,
    and 3 more in bfloat16 with config/ep_precision.yaml."""
    cfg = paper_config
    runs = [(r.method, r.lam_path, r.seed) for r in targets.runs(cfg)]
    assert len(runs) == 9 + 6 + 3 + 3 and len(targets.null_results(cfg)) == 9
    assert ("fa", "0", 42) in runs and ("dfa", "0.0001", 456) in runs
    assert targets.ep_results(cfg) == [
        f"results/ep_stack/tinyshakespeare/float32/seed{s}.json" for s in (0, 1, 2)]
    everything = targets.all_targets(cfg)
    assert "results/cifar10/default/train/fa/lam0/seed42/timings.json" in everything
    # the weights are temp(): no target, so a clone with the record trains nothing
    assert not [f for f in everything if f.endswith(".pt")]
    assert "results/cifar10/default/summary/reproduction.md" in everything
    assert "paper/figures/fig_ep_stack_cosines.svg" in everything
    assert not targets.probe_results(cfg) and not targets.variant_targets(cfg)
    both = checks.load_config([ROOT / "config/ep_precision.yaml"], ROOT)
    assert targets.ep_precisions(both) == ["float32", "bfloat16"]
    assert targets.ep_results(both)[3:] == [
        f"results/ep_stack/tinyshakespeare/bfloat16/seed{s}.json" for s in (0, 1, 2)]


def test_a_variant_trains_its_methods_on_the_study_seeds_under_its_own_folder(tmp_path):
    cfg = checks.load_config(["config/variants.yaml"], ROOT)
    name = next(iter(cfg["variants"]))  # const_lr: dfa, frozen
    variant_runs = targets.runs(cfg, recipe=name)
    assert {r.method for r in variant_runs} == set(cfg["variants"][name]["methods"])
    assert {r.recipe for r in variant_runs} == {name}
    assert targets.train_metrics(cfg, "cifar10", name)[0].startswith(
        f"results/cifar10/{name}/train/")
    assert targets.probe_results(cfg, "cifar10", name) == []
    assert f"results/cifar10/{name}/summary/reproduction.csv" in targets.variant_targets(cfg)
    assert targets.measurement_tables(cfg)[0] == "results/cifar10/default/summary/measurements.csv"
    run = params.run_config(cfg, "cifar10", name, "dfa", "0", "42")
    assert run["variant"] == name and run["training"]["schedule"] == "constant"
    assert list(run) == ["dataset", "method", "lam", "seed", "model", "training", "options",
                         "diagnostics", "variant"]
    assert run["dataset"] == "cifar10" and run["lam"] == 0.0 and run["seed"] == 42
    assert params.train_priority(cfg, name, "fa") == 100
    assert params.reproduction_config(cfg, name)["variant"]["name"] == name
    with pytest.raises(ConfigError, match="recipe 'nope': not a recipe of this config"):
        targets.runs(cfg, recipe="nope")
    expect = targets.variant_expect(cfg)
    assert list(expect) == list(cfg["variants"]) and ["dfa", 0.0, 42] in expect[name]
    about = params.variants_about(cfg)[name]
    assert about["seeds"] == [42, 123, 456] and about["kind"] == "departs"


def test_a_run_depends_on_its_own_rules_options_only(paper_config):
    run = params.run_config(paper_config, "cifar10", "default", "np", "0", "1")
    assert run["options"] == paper_config["methods"]["np"] and "variant" not in run
    assert run["model"]["final_norm"] is True
    probe = params.probe_settings(paper_config)
    assert set(probe["methods"]) == {m for m, r in catalog.load().items() if r["probed"]}
    assert "epochs" not in probe and "network" not in probe


def test_a_probe_depends_on_its_precision_and_not_on_the_sweep(paper_config):
    settings = params.ep_settings(paper_config, "bfloat16")
    assert settings["pretrain"]["precision"] == "bfloat16"
    assert not {"corpora", "seeds", "compare_precisions", "settle"} & set(settings)
    assert params.ep_settle(paper_config) == paper_config["ep_stack"]["settle"]
    assert params.corpus_version("tinyshakespeare") == ""
    assert params.corpus_version("pydoc") == ".".join(map(str, sys.version_info[:3]))


def test_data_sources_and_their_stamps(paper_config, tmp_path, monkeypatch):
    assert params.data_source(paper_config, "cifar10") == "download"
    assert params.data_source(paper_config, "pydoc") == ""
    assert params.source_stamp(paper_config, "cifar10") == ""
    (tmp_path / "input.txt").write_text("First Citizen:\n")
    monkeypatch.chdir(tmp_path)
    cfg = {"data": {"tinyshakespeare": {"source": str(tmp_path / "input.txt")}}}
    stamp = params.source_stamp(cfg, "tinyshakespeare")
    assert stamp.startswith("sha256:") and (tmp_path / paths.SOURCE_DIGESTS).exists()


def test_the_paper_reads_the_tables_this_config_makes(paper_config):
    inputs = targets.paper_number_inputs(paper_config)
    # the EP question's findings once every run of config/claims_ep.yaml is here (the
    # record's), with its figure; before, neither (the paper says its runs are not in)
    question = targets.ep_question_findings(paper_config)
    assert question in (None, "results/ep_stack/summary/ep_question/findings.json")
    assert bool(question) == bool(paper_config["claims"]["ep"] and all(
        Path(p).exists() for p in targets.ep_question_runs(paper_config)))
    assert inputs == {"info": "data/cifar10.json",
                      "runs": "results/cifar10/default/summary/runs.csv",
                      "nulls": "results/cifar10/default/summary/nulls.csv",
                      "primer": "results/primer_check/primer_check.json",
                      "reproduction": "results/cifar10/default/summary/reproduction.csv",
                      "ep": "results/ep_stack/summary/by_seed.csv",
                      "findings": "results/cifar10/default/summary/findings.json",
                      "claims": "results/cifar10/default/claims/findings.json",
                      **({"ep_question": question} if question else {})}
    assert ("paper/figures/fig_ep_fixed_point.pdf" in targets.paper_sources(paper_config)[
        "figures"]) == bool(question)
    # the verdicts' findings: from the runs and nulls here (the notes' tables only with the
    # variant study; never the EP probe's, which the paper reads itself)
    assert targets.findings_inputs(paper_config) == {
        "runs": "results/cifar10/default/summary/runs.csv",
        "nulls": "results/cifar10/default/summary/nulls.csv"}
    figures = targets.paper_sources(paper_config)["figures"]
    assert figures[0] == "paper/figures/fig4_penalty_rescue.pdf"
    assert "paper/figures/fig_variants.pdf" not in figures
    number_config = params.paper_number_config(paper_config)
    assert number_config["labels"] == {m: s["label"] for m, s in catalog.styles().items()}


def test_the_tables_expect_exactly_the_configs_runs(paper_config):
    expect = targets.table_expect(paper_config)
    assert len(expect["runs"]) == 21 and len(expect["nulls"]) == 9
    assert ["dfa", 0.0001, 42] in expect["runs"]
    assert targets.gap_map_expect(paper_config) == {}


def test_lambda_spelling_and_paths():
    assert [matrix.lam_str(x) for x in (0, 1.0e-4, 0.01, 1)] == ["0", "0.0001", "0.01", "1"]
    assert paths.fill(paths.METRICS, dataset="digits", recipe="default", method="dfa", lam="0",
                      seed=1) == \
        "results/digits/default/train/dfa/lam0/seed1/metrics.json"
    assert paths.figures("fig4_penalty_rescue")[1] == "paper/figures/fig4_penalty_rescue.png"


# ---- the path table: no file spells a path ------------------------------------------
PATH_ROOTS = ("results", "data", "paper", "logs", "docs", "config")
# a string literal that starts with one, or a Markdown code span or a `snakemake` command
# (in a generated page) that names one
SPELLED = re.compile(rf"(?:^|`|snakemake )(?:{'|'.join(PATH_ROOTS)})/")
# what may spell a path: the table itself, and nothing else
# the shared table, and a study room's own paths (its folder owns them: studies/<name>/)
# the shared table, and each study room's own (studies/<name>: its paths are its own)
MAY_SPELL = {"src/credit_assign/infra/paths.py", "src/credit_assign/studies/dose/plan.py",
             "src/credit_assign/studies/ep_estimator/files.py",
             "src/credit_assign/studies/ep_question2/plan.py"}


def _python(file: Path) -> tuple[str, dict[int, int] | None]:
    """A file's Python code: a .smk file (and the Snakefile) as Snakemake compiles it, with
    the compiled code's line -> the file's line."""
    if file.suffix == ".py":
        return file.read_text(), None
    from snakemake import parser
    from snakemake.sourcecache import LocalSourceFile

    opener = SimpleNamespace(open=lambda source: open(  # noqa: SIM115 (parser closes it)
        source.get_path_or_uri(secret_free=True), encoding="utf-8"))
    linemap: dict[int, int] = {}
    code, _ = parser.parse(LocalSourceFile(str(file)), SimpleNamespace(sourcecache=opener),
                           linemap)
    return code, linemap


def _string_literals(tree: ast.AST):
    """(line, text) of every string constant in the code, f-strings' parts included;
    docstrings (a module's, class's, function's, a rule's) are text, not code."""
    docs = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)):
            docs.add(id(body[0].value))
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "docstring" and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "workflow"):  # a rule's docstring, compiled
            docs.update(id(arg) for arg in node.args)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node.lineno, node.value


def _code_files() -> list[Path]:
    return [ROOT / "Snakefile", *sorted((ROOT / "workflow/rules").glob("*.smk")),
            *sorted((ROOT / "src/credit_assign").rglob("*.py")),
            *sorted((ROOT / "scripts").glob("*.py"))]


def test_no_file_spells_a_path():
    """Every path is in credit_assign.infra.paths: the rules, the scripts and the library
    take theirs from there, and none spells one (in a string literal, f-strings included;
    comments and docstrings may mention one)."""
    spelled = []
    for file in _code_files():
        name = file.relative_to(ROOT).as_posix()
        if name in MAY_SPELL:
            continue
        code, linemap = _python(file)
        for line, text in _string_literals(ast.parse(code, name)):
            if SPELLED.search(text):
                spelled.append(f"{name}:{linemap[line] if linemap else line}: {text[:80]!r}")
    assert not spelled, "paths spelled outside credit_assign.infra.paths:\n" + "\n".join(
        spelled)


def test_the_path_check_finds_a_spelled_path():
    code = ('"""results/in/a/docstring.json"""\nx = "results/a.json"\n'
            'y = f"data/{name}.json"\nz = f"from `paper/{name}.pdf`"\nw = "a results/b"\n')
    found = [line for line, text in _string_literals(ast.parse(code)) if SPELLED.search(text)]
    assert found == [2, 3, 4]


def test_every_rule_takes_its_log_from_the_table():
    """Each rule with a log: writes paths.LOGS[its name] (or its room's table), and each
    entry is a rule's; a figure's step writes paths.figure_log(the first figure it draws)."""
    logs, figures = {}, {}
    for smk in sorted((ROOT / "workflow/rules").glob("*.smk")):
        tree = ast.parse(_python(smk)[0])
        for func in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
            calls = {d.func.attr: d for d in func.decorator_list if isinstance(d, ast.Call)
                     and isinstance(d.func, ast.Attribute)}
            if "rule" in calls and "log" in calls:
                name = next(k.value.value for k in calls["rule"].keywords if k.arg == "name")
                logs[name] = ast.unparse(calls["log"].args[0])
                drawn = [c.args[0].value for c in ast.walk(calls["output"])
                         if isinstance(c, ast.Call) and getattr(c.func, "id", "") ==
                         "figure_outputs"] if "output" in calls else []
                if drawn:
                    figures[name] = f"paths.figure_log('{drawn[0]}')"
    from credit_assign.studies.dose import plan as dose_plan
    from credit_assign.studies.ep_estimator import files as ep_estimator_files
    from credit_assign.studies.ep_question2 import plan as ep2_plan

    assert len(figures) >= 10  # every figure's step
    assert logs == figures | {rule: f"paths.LOGS['{rule}']" for rule in paths.LOGS} | {
        rule: f"dose_plan.LOGS['{rule}']" for rule in dose_plan.LOGS} | {
        rule: f"ep_estimator_files.LOGS['{rule}']" for rule in ep_estimator_files.LOGS} | {
        rule: f"ep2_plan.LOGS['{rule}']" for rule in ep2_plan.LOGS}


def test_the_path_table_imports_only_the_standard_library():
    tree = ast.parse((ROOT / "src/credit_assign/infra/paths.py").read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}, imported


def test_the_study_runs_recipe_by_recipe_stated_then_open_then_departing():
    """make study's steps (compute --steps): one per recipe, the stated recipe first, the
    open variants before the departing ones (config order within each), every variant
    once, each step its reproduction and measurements tables."""
    config = checks.load_config([ROOT / "config/variants.yaml"], ROOT)
    steps = targets.study_steps(config)
    recipes = [step[0].split("/")[2] for step in steps]
    kinds = [config["variants"][r]["kind"] for r in recipes[1:]]
    assert recipes[0] == "default" and len(recipes) == 1 + len(config["variants"])
    assert kinds == sorted(kinds, key=["open", "departs"].index)
    assert recipes[1:] == [
        v for k in ("open", "departs") for v, spec in config["variants"].items()
        if spec["kind"] == k]
    for step, recipe in zip(steps, recipes, strict=True):
        assert step == [paths.fill(paths.REPRODUCTION, dataset="cifar10", recipe=recipe),
                        paths.fill(paths.MEASUREMENTS, dataset="cifar10", recipe=recipe)]


@pytest.mark.parametrize("lam", [1e-4, 0.0001, 3e-3, 1 / 3, 0.0, 1e-2, 2.5e-7])
def test_a_lambda_is_spelled_once_and_read_back_exactly(lam):
    """λ from the config to the path, back from the path to the job's float, into the
    tables' run key and the figures' selection: one spelling (matrix.lam_str), and the
    λ a job trains with is the config's, to the last bit (1/3 is not 0.333333)."""
    import pandas as pd

    from credit_assign.analysis.aggregate import select_runs
    from credit_assign.analysis.tables import run_key
    from credit_assign.planning.matrix import lam_str

    spelled = lam_str(lam)
    assert float(spelled) == lam  # what params.run_config reads back from the wildcard
    assert lam_str(float(spelled)) == spelled  # one spelling, whatever the float's origin
    assert run_key("dfa", lam, 1) == run_key("dfa", float(spelled), 1) == ("dfa", spelled, 1)
    table = pd.DataFrame({"method": "dfa", "lam": [lam, 0.5, 1e-9 if lam == 0 else 0.0],
                          "seed": 1})
    assert len(select_runs(table, "dfa", float(spelled))) == 1
    six = table.assign(lam=[float(f"{x:.6g}") for x in table.lam])  # a %.6g table
    assert len(select_runs(six, "dfa", float(spelled))) == 1
    assert spelled == f"{lam:g}" or lam == 1 / 3  # the paths that existed keep their names


def test_awkward_lambdas_walk_through_the_run_table_paths_tables_and_figure_once(tmp_path):
    """λ = 1e-4, 0.0001, 3e-3, 1/3 from sweep.dfa to the figure, pure functions only: the
    run table (1e-4 and 0.0001 are one λ: a ConfigError naming both, not two runs that
    would share lam0.0001), then each λ once through the run table, its paths (spelled,
    and read back by the job's params), a runs table written and read back as the
    pipeline does (coverage against the config's expectation: each run once), and the
    figure's selection (figure_lam, select_runs)."""
    import pandas as pd

    from credit_assign.analysis import tables as table_io
    from credit_assign.analysis.aggregate import select_runs

    def config(dfa):
        return checks.load_config([ROOT / "config/quick.yaml"], ROOT, overrides={
            "sweep": {"seeds": [1, 2], "dfa": dfa, "bp": [], "frozen": [], "np": []}})

    third = 1 / 3
    with pytest.raises(ConfigError, match=r"sweep\.dfa: λ = 0\.0001 and 0\.0001 are one λ"):
        matrix.run_table({"dataset": "digits", "sweep": {
            "seeds": [1], "dfa": [0, 1e-4, 0.0001, 3e-3, {"fig4": third}]}}, ("dfa",))
    with pytest.raises(ConfigError, match="are one λ"):  # and the workflow's parse says so
        config([0, 1.0e-4, {"fig4": 3.0e-3}, 0.0001 * (1 + 1e-9)])
    cfg = config([0, 1e-4, 3e-3, {"fig4": third}])
    lams = [0.0, 1e-4, 3e-3, third]

    table = matrix.run_table(cfg)
    assert [(r.dataset, r.recipe, r.method) for r in table] == [("digits", "default", "dfa")] * 8
    assert [r.lam for r in table] == [lam for lam in lams for _ in (1, 2)]  # floats, exact
    assert [r.lam_path for r in table[::2]] == ["0", "0.0001", "0.003", "0.3333333333333333"]
    assert len({r.lam_path for r in table}) == len(lams)

    # paths: one spelling each, read back from the path to the job's float exactly
    metrics = targets.train_metrics(cfg)
    assert metrics == [r.path(paths.METRICS) for r in table] and len(set(metrics)) == 8
    for r, path in zip(table, metrics, strict=True):
        spelled = re.fullmatch(
            r"results/digits/default/train/dfa/lam([0-9.e+-]+)/seed\d+/metrics\.json",
            path).group(1)  # common.smk's lam wildcard
        assert spelled == r.lam_path and matrix.lam_str(matrix.lam_of(spelled)) == spelled
        job = params.run_config(cfg, "digits", "default", "dfa", spelled, str(r.seed))
        assert job["lam"] == r.lam and [job["method"], job["lam"], job["seed"]] == r.key()
    for r in table[::2]:  # each spelling names its own folder, on each seed
        assert sum(f"/lam{r.lam_path}/" in p for p in metrics) == 2

    # a runs table, written and read back as the pipeline does, holds each run once
    expect = targets.table_expect(cfg)["runs"]
    assert expect == [r.key() for r in table]
    rows = [{"dataset": r.dataset, "method": r.method, "lam": r.lam, "seed": r.seed,
             "epochs": 40, "final_epoch": 40, "test_acc": 0.5, "train_loss": 1.0,
             "test_loss": 1.0, "h_L_norm_median": 10.0, "deep_cosine": 0.1,
             "first_nonfinite_epoch": None, "stopped_early": False, "n_nonfinite": 0,
             "total_s": 1.0, "device": "cpu"} for r in table]
    csv = tmp_path / "runs.csv"
    table_io.write(pd.DataFrame(rows), csv, "runs")
    runs = table_io.read(csv, "runs", expect)  # coverage: every run, none twice
    keys = [matrix.run_key(*row) for row in runs[["method", "lam", "seed"]].itertuples(
        index=False, name=None)]
    assert keys == [matrix.run_key(*r.key()) for r in table] and len(set(keys)) == 8
    assert runs.lam.tolist() == [r.lam for r in table]  # the CSV keeps every bit
    # a table written with "%.6g" (measurements.csv) holds 1/3 as 0.333333: coverage
    # matches it by the one equality, not by its spelling
    table_io.write(pd.DataFrame(rows), tmp_path / "six.csv", "runs", float_format="%.6g")
    six_digits = table_io.read(tmp_path / "six.csv", "runs", expect)
    assert 0.333333 in six_digits.lam.tolist()
    twice = pd.DataFrame(rows + rows[-1:]).assign(dataset=["digits"] * 8 + ["elsewhere"])
    table_io.write(twice, tmp_path / "twice.csv", "runs")
    with pytest.raises(table_io.TableError, match="has run.s. more than once: dfa "
                                                  "λ=0.3333333333333333 seed 2"):
        table_io.read(tmp_path / "twice.csv", "runs", expect)
    for lam in lams:
        assert len(select_runs(runs, "dfa", lam)) == 2  # each λ once, on each seed
        six = runs.assign(lam=[float(f"{x:.6g}") for x in runs.lam])  # a "%.6g" table
        assert len(select_runs(six, "dfa", lam)) == 2

    # the figure's λ: the one sweep.dfa marks, found once
    assert matrix.figure_lam(cfg) == third
    assert sum(matrix.same_lam(lam, matrix.figure_lam(cfg)) for lam in lams) == 1
    assert len(select_runs(runs, "dfa", matrix.figure_lam(cfg))) == 2
    assert matrix.figure_lam(config([0, {"fig4": 1e-4}, 3e-3])) == 1e-4


def test_the_workflows_functions_of_wildcards_are_one_object_and_none_only_forwards(
        paper_config):
    """Every input/params/priority function of a job's wildcards is a method of
    planning.wildcards.JobFunctions, bound to the config once in common.smk; no function
    of common.smk only returns another's result, and the rules call the object."""
    from snakemake.iocontainers import Wildcards

    from credit_assign.planning.wildcards import JobFunctions

    per_job = JobFunctions(paper_config, ROOT)
    w = Wildcards(fromdict={"dataset": "cifar10", "recipe": "default", "method": "dfa",
                            "lam": "0.01",
                            "seed": "42", "corpus": "tinyshakespeare",
                            "precision": "float32"})
    assert per_job.train_metrics(w) == targets.train_metrics(paper_config, "cifar10")
    assert per_job.run_config(w)["lam"] == 0.01
    variant = Wildcards(fromdict={"dataset": "cifar10", "recipe": "const_lr"})
    assert per_job.dataset_manifest(variant) == "data/cifar10.json"  # every recipe's
    assert per_job.summary(paths.FINDINGS) == "results/cifar10/default/summary/findings.json"
    assert per_job.paper_claims_inputs(w)["history"] == str(ROOT / paths.HISTORY)
    common = (ROOT / "workflow" / "rules" / "common.smk").read_text()
    bodies = re.findall(r"^def (\w+)\(.*?\):\n((?:    .*\n|\n)+)", common, re.M)
    for name, body in bodies:
        code = [s for s in ast.parse(textwrap.dedent(body)).body
                if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        # only forwards: its one statement returns another function's result
        forwards = len(code) == 1 and isinstance(code[0], ast.Return) and isinstance(
            code[0].value, ast.Call)
        assert not forwards, f"common.smk's {name} only forwards: make it a JobFunctions method"
    rules = "".join(p.read_text() for p in (ROOT / "workflow" / "rules").glob("*.smk")) \
        + (ROOT / "Snakefile").read_text()
    for method in (m for m in vars(JobFunctions) if not m.startswith("_")):
        assert f"per_job.{method}" in rules + common, f"JobFunctions.{method} is unused"


def test_every_report_rule_carries_its_own_scripts_code():
    """Each rule whose script is a report step (planning.code.report_steps) has the param
    code=digests.report_digest("<its own script>"), so Snakemake rebuilds what it
    writes when its analysis, templates or figure texts change (a figure step runs the
    shared scripts/figure.py: its rule's name is the step); a computing rule has
    per_job.code("<its step>")."""
    from credit_assign.planning import code

    report = set(code.report_steps())
    seen = set()
    for smk in sorted((ROOT / "workflow" / "rules").glob("*.smk")):
        for block in re.split(r"\n(?=rule )", "\n" + smk.read_text())[1:]:
            script = re.search(r'"../../scripts/(\w+)\.py"', block)
            if not script:
                continue
            step = script.group(1)
            if step == code.FIGURE_SCRIPT:
                step = re.match(r"rule (\w+):", block.lstrip()).group(1)
            if step in report:
                seen.add(step)
                assert f'code=digests.report_digest("{step}")' in block, (smk.name, step)
            elif step in code.ENTRY:
                assert f'code=per_job.code("{step}")' in block, (smk.name, step)
    assert seen == report, sorted(report - seen)


def test_a_rules_inputs_are_spelled_one_way():
    """Issue #46: what a rule reads is spelled per_job.<name> (a JobFunctions method, of
    the job's wildcards or of the config alone), a path of infra.paths or a file of the
    workflow, never a lambda or a call into planning.targets beside them."""
    files = [ROOT / "Snakefile",
             *(p for p in (ROOT / "workflow" / "rules").glob("*.smk") if p.name != "common.smk")]
    found = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
             for p in files for n, line in enumerate(p.read_text().splitlines(), 1)
             if re.search(r"\blambda\b|\btargets\.\w+\(", line)]
    assert not found, "spell these as per_job.<name> (planning.wildcards):\n" + "\n".join(found)


def test_no_recipe_is_named_as_the_stated_recipe_or_a_recipe_folders_folder():
    """The schema refuses a variant named default or as a folder a recipe's folder holds
    (train, summary, ...): a recipe's folder never shares a name with a folder a recipe's
    folder holds."""
    from pathlib import PurePosixPath

    depth = len(PurePosixPath(paths.RECIPE).parts)  # results/{dataset}/{recipe}
    folders = {PurePosixPath(p).parts[depth] for p in (paths.RUN_DIR, paths.NULL,
               paths.PROBE, paths.MEASURE, paths.SUMMARY, paths.CLAIMS)}
    schema = yaml.safe_load((ROOT / paths.CONFIG_SCHEMA).read_text())
    pattern = schema["properties"]["variants"]["propertyNames"]["pattern"]
    reserved = re.fullmatch(r"\^\(\?!\((.*)\)\$\).*", pattern).group(1).split("|")
    assert sorted(reserved) == sorted([paths.DEFAULT_RECIPE, *folders])


def test_the_claims_findings_of_a_config_without_claims_name_what_is_missing():
    """A claims step asked for (fig_claims, forced) with a config that names no claims
    file: a message that says so, not a TypeError from inside planning."""
    from credit_assign.planning import checks

    quick = checks.load_config([ROOT / "config" / "quick.yaml"], root=ROOT)
    assert quick["claims"]["file"] is None
    assert targets.claims_train(quick) == [] and targets.claims_nulls(quick) == []
    with pytest.raises(ValueError, match="names no claims file"):
        targets.claims_findings(quick)


def test_the_quick_config_asks_no_question_of_the_papers_data():
    """`make quick` runs offline in minutes: the paper's claims and its EP question (Tiny
    Shakespeare, eight fixed-point probes) are not asked of the quick config, even where
    the record holds the question's results, and every corpus it reads ships offline."""
    from credit_assign.planning import checks

    quick = checks.load_config([ROOT / "config" / "quick.yaml"], root=ROOT)
    assert quick["claims"] == {"file": None, "ep": None}
    assert targets.ep_question_findings(quick) is None
    assert "ep_question" not in targets.paper_number_inputs(quick)
    assert not any("fig_ep_fixed_point" in f for f in targets.paper_sources(quick)["figures"])
    assert quick["ep_stack"]["corpora"] == ["pydoc"]  # the standard library's docstrings


def test_the_old_package_name_serves_only_the_frozen_ep_judge():
    """credit_assign.spec is planning's old name, kept as one alias module: the first EP
    question's judge of record (analysis/ep_question.py, never edited: its page proves
    the order from git's history of it) imports credit_assign.spec.claims, which is
    planning.claims; no other file of the package or the workflow names the old one but
    the migration of the record's job records (planning.old_digests)."""
    from credit_assign.analysis import ep_question
    from credit_assign.planning import claims

    assert ep_question.ClaimsError is claims.ClaimsError
    package = ROOT / "src" / "credit_assign"
    users = sorted(str(p.relative_to(ROOT)) for p in [*package.rglob("*.py"),
                                                       *(ROOT / "workflow").rglob("*.smk"),
                                                       *(ROOT / "scripts").glob("*.py"),
                                                       ROOT / "Snakefile"]
                   if re.search(r"credit_assign\.spec\b", p.read_text(encoding="utf-8")))
    assert users == ["src/credit_assign/analysis/ep_question.py",
                     "src/credit_assign/planning/old_digests.py", "src/credit_assign/spec.py"]
