"""Interrupted jobs, bad input, divergence: nothing lost, every error named."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from test_results_and_training import tiny_run
from test_workflow import TINY, fresh_copy, snakemake

from credit_assign.infra import data
from credit_assign.infra.results import ResultError, read_result
from credit_assign.jobs import train
from credit_assign.reporting.aggregate import tables
from credit_assign.science.rules import RULES

ROOT = Path(__file__).resolve().parents[1]

TRAIN_SCRIPT = """
import sys
sys.path.insert(0, {src!r})
from credit_assign.infra.hardware import set_threads
set_threads(1)
import json
from credit_assign.jobs import train
run = json.loads({run!r})
train(run, {data!r}, {out!r} + "/metrics.json", {out!r} + "/model.pt",
      resume_path={out!r} + "/resume.pt", timings_out={out!r} + "/timings.json")
"""


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "digits.pt"
    data.prepare("digits", None, path.parent, path)
    return path


def start_training(run, digits, out: Path) -> subprocess.Popen:
    out.mkdir(parents=True, exist_ok=True)
    code = TRAIN_SCRIPT.format(src=str(ROOT / "src"), run=json.dumps(run), data=str(digits),
                               out=str(out))
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)


@pytest.mark.slow
def test_sigkill_mid_run_then_rerun_gives_identical_bytes(tmp_path, digits):
    run = tiny_run("dfa", epochs=40, batch_size=64)
    run["model"]["width"] = 48
    reference = start_training(run, digits, tmp_path / "ref")
    assert reference.wait(timeout=600) == 0, reference.stderr.read()

    victim = start_training(run, digits, tmp_path / "killed")
    resume = tmp_path / "killed" / "resume.pt"
    deadline = time.time() + 300
    while not resume.exists() and victim.poll() is None and time.time() < deadline:
        time.sleep(0.01)
    time.sleep(0.3)  # into a later epoch
    victim.send_signal(signal.SIGKILL)
    victim.wait(timeout=60)
    assert victim.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    assert resume.exists() and not (tmp_path / "killed" / "metrics.json").exists()

    rerun = start_training(run, digits, tmp_path / "killed")
    assert rerun.wait(timeout=600) == 0, rerun.stderr.read()
    timings = read_result(tmp_path / "killed" / "timings.json", "train_timings")
    assert timings["resumed_from_epoch"] >= 1
    assert (tmp_path / "killed" / "metrics.json").read_bytes() == \
        (tmp_path / "ref" / "metrics.json").read_bytes()
    assert not resume.exists()


@pytest.mark.parametrize("policy", ["continue", "stop"])
def test_divergence_is_recorded_not_a_crash(tmp_path, digits, policy):
    run = tiny_run("dfa", lam=0.0, epochs=4, lr=1e30, nonfinite_policy=policy)
    result = train(run, digits, tmp_path / "m.json", tmp_path / "m.pt",
                   timings_out=tmp_path / "timings.json")
    stored = read_result(tmp_path / "m.json", "train")  # strict JSON, schema-valid
    assert stored == result
    epoch = result["divergence"]["first_nonfinite_epoch"]
    assert epoch == 1 and result["nonfinite"]
    assert any(flag["path"].startswith("history.") for flag in result["nonfinite"])
    assert result["divergence"]["stopped_early"] == (policy == "stop")
    assert len(result["history"]["epoch"]) == (1 if policy == "stop" else 4)

    # the figure shows it rather than crash
    from credit_assign.reporting.figures import penalty_rescue

    train(tiny_run("bp", lam=0.0, epochs=2), digits, tmp_path / "bp" / "metrics.json",
          tmp_path / "bp" / "model.pt", timings_out=tmp_path / "bp" / "timings.json")
    frames = tables([tmp_path / "m.json", tmp_path / "bp" / "metrics.json"], [])
    assert frames["runs"].first_nonfinite_epoch.notna().any()
    outputs = [tmp_path / "fig.png", tmp_path / "fig.svg"]
    penalty_rescue.style.save(penalty_rescue.plot(frames["runs"], frames["epochs"],
                                                  frames["nulls"], 0.01), outputs)
    assert all(p.stat().st_size > 0 for p in outputs)


BAD_CONFIGS = [
    ({"training": {"epochz": 3}}, "'epochz' was unexpected"),
    ({"training": {"epochs": "many"}}, "instance['training']['epochs']"),
    ({"training": {"lr": -1.0}}, "instance['training']['lr']"),
    ({"sweep": {"dfa": [-1.0]}}, "instance['sweep']['dfa'][0]"),
    ({"sweep": {"dfa": ["1e-4"]}}, "instance['sweep']['dfa'][0]"),
    ({"sweep": {"seeds": []}}, "instance['sweep']['seeds']"),
    ({"sweep": {"sdil": [0.0]}}, "sweep: 'sdil' is not a learning rule; registered rules: "
     f"{list(RULES)}"),
    ({"rule": {"dfa": {"feedback_scal": "unit"}}}, "rule.dfa: unknown option(s) ['feedback_scal']"),
    ({"rule": {"np": {"sigma": -1.0}}}, "rule.np.sigma must be > 0, got -1.0"),
    ({"rule": {"np": {"directions": 2.5}}}, "rule.np.directions must be of type integer"),
    ({"rule": {"feedback_scale": "unit"}}, "rule: 'feedback_scale' is not a learning rule "
     "('feedback_scale' is an option of dfa, fa, frozen: write it as "
     "rule.<method>.feedback_scale)"),
    ({"rule": {"dfa": 3}}, "rule.dfa: 3 is not a mapping of options"),
    ({"probes": {"network": {"method": "sdil"}}}, "probes.network.method: 'sdil' is not a"),
    ({"training": {"per_method": {"dfx": {"epochs": 3}}}}, "training.per_method: 'dfx' is not"),
    ({"dataset": "mnist"}, "instance['dataset']"),
    ({"model": {"width": 0}}, "instance['model']['width']"),
    ({"fresh_b_null": {"draws": 1}}, "instance['fresh_b_null']['draws']"),
    ({"training": {"device": "tpu"}}, "instance['training']['device']"),
    ({"rule": {"dfa": {"feedback_scale": "huge"}}},
     "rule.dfa.feedback_scale must be one of ['unit', 'fan_in'], got 'huge'"),
    ({"sweep": {"seeds": [-1]}}, "sweep.seeds[0] = -1 is not a plain decimal integer"),
    ({"sweep": {"seeds": [2**32]}}, "instance['sweep']['seeds'][0]"),
    ({"ep_stack": {"seeds": [-3]}}, "ep_stack.seeds[0] = -3 is not a plain decimal integer"),
    ({"sweep": {"dfa": [float("inf")]}}, "instance['sweep']['dfa'][0]"),
    ({"sweep": {"dfa": [float("nan")]}}, "sweep.dfa[0] = nan: numbers must be finite"),
    ({"training": {"lr": float("nan")}}, "training.lr = nan: numbers must be finite"),
    ({"sweep": {"dfa": [0.01, 0.0100000001]}}, "would share the results path lam0.01"),
    ({"training": {"epochs": 10**9}}, "instance['training']['epochs']"),
    ({"figures": {"penalty_lambda": 0.5}}, "figures.penalty_lambda = 0.5 is not one of sweep.dfa"),
    ({"variants": {"slow": {"kind": "open", "methods": ["dfa"],
                            "overrides": {"training": {"epochz": 3}}}}},
     "variants.slow.overrides"),
    ({"variants": {"Bad-Name": {"kind": "open", "methods": ["dfa"], "overrides": {}}}}, "Bad-Name"),
    ({"variants": {"e": {"kind": "open", "methods": ["dfa"],
                         "overrides": {"rule": {"error_reduction": "sum"}}}}},
     "variants.e.overrides: rule: 'error_reduction' is not a learning rule"),
    ({"variants": {"e": {"kind": "open", "methods": ["dfa"],
                         "overrides": {"rule": {"dfa": {"error_reduction":
                                                                           "max"}}}}}},
     "variants.e.overrides: rule.dfa.error_reduction must be one of"),
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
]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return fresh_copy(tmp_path_factory.mktemp("bad-config"))


@pytest.mark.slow
@pytest.mark.parametrize("bad, named", BAD_CONFIGS, ids=[n for _, n in BAD_CONFIGS])
def test_malformed_config_is_named_before_any_job(workdir, bad, named):
    cfg = workdir / "bad.yaml"
    cfg.write_text(yaml.safe_dump(bad))
    out = snakemake(workdir, "-n", "--configfile", "config/quick.yaml", str(cfg), check=False)
    text = out.stdout + out.stderr
    assert out.returncode != 0 and named in text, text
    assert "Job stats" not in text


@pytest.mark.slow
def test_duplicate_yaml_key_is_named_before_any_job(workdir):
    cfg = workdir / "dup.yaml"
    cfg.write_text("training:\n  epochs: 3\n  lr: 1.0e-3\n  epochs: 5\n")
    out = snakemake(workdir, "-n", "--configfile", "config/quick.yaml", str(cfg), check=False)
    text = out.stdout + out.stderr
    assert out.returncode != 0 and "dup.yaml, line 4: the key 'epochs' appears twice" in text
    assert "Job stats" not in text


@pytest.fixture
def finished_run(tmp_path):
    """A completed tiny workflow (results, figures, Snakemake's metadata)."""
    work = fresh_copy(tmp_path / "w")
    (work / "config" / "tiny.yaml").write_text(yaml.safe_dump(
        {**TINY, "sweep": {**TINY["sweep"], "seeds": [1], "bp": [0], "dfa": [0]},
         "reproduction": {"reference": None}}))
    snakemake(work, "--configfile", "config/tiny.yaml")
    return work


@pytest.mark.slow
def test_corrupt_result_stops_the_figure_with_the_file_named(finished_run):
    work = finished_run
    target = work / "results/digits/train/dfa/lam0/seed1/metrics.json"
    figure = work / "paper/figures/fig4_penalty_rescue.png"
    before = figure.stat().st_mtime_ns
    text = target.read_text()
    target.write_text(text[: len(text) // 3])  # truncated, as by a full disk
    out = snakemake(work, "--configfile", "config/tiny.yaml", check=False)
    log = (work / "logs/aggregate/digits.log").read_text()
    assert out.returncode != 0
    assert "results/digits/train/dfa/lam0/seed1/metrics.json: not valid JSON" in log
    assert figure.stat().st_mtime_ns == before  # no figure from a broken file
    with pytest.raises(ResultError):
        read_result(target, "train")


@pytest.mark.slow
def test_sigterm_to_snakemake_leaves_nothing_mistaken_for_complete(tmp_path):
    work = fresh_copy(tmp_path / "w")
    long = {**TINY, "training": {**TINY["training"], "epochs": 400},
            "sweep": {"seeds": [1], "dfa": [0], "bp": [], "frozen": [], "fa": []},
            "reproduction": {"reference": None}}
    (work / "config" / "long.yaml").write_text(yaml.safe_dump(long))
    log = work / "logs/train/digits/dfa_lam0_seed1.log"
    proc = subprocess.Popen([sys.executable, "-m", "snakemake", "--cores", "1", "--configfile",
                             "config/long.yaml"], cwd=work, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 300
    while time.time() < deadline and "epoch 3/" not in (log.read_text() if log.exists() else ""):
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=120)
    metrics = work / "results/digits/train/dfa/lam0/seed1/metrics.json"
    assert not metrics.exists()
    assert (metrics.parent / "resume.pt").exists()
    # a later run resumes the job instead of trusting a partial output
    done = snakemake(work, "--configfile", "config/long.yaml", "--rerun-incomplete",
                     "results/digits/train/dfa/lam0/seed1/metrics.json")
    assert done.returncode == 0
    assert "resumed from" in log.read_text()
    assert read_result(metrics, "train")["history"]["epoch"][-1] == 400
    shutil.rmtree(work / "results")
