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
from conftest import TINY, fresh_copy, snakemake, tiny_run_config

from credit_assign.analysis.aggregate import tables
from credit_assign.infra import data, paths
from credit_assign.infra.results import ResultError, read_result
from credit_assign.jobs import train

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


@pytest.mark.process  # two training processes, one killed
def test_sigkill_mid_run_then_rerun_gives_identical_bytes(tmp_path, digits):
    run = tiny_run_config("dfa", epochs=40, batch_size=64)
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


@pytest.mark.figure
@pytest.mark.parametrize("policy", ["continue", "stop"])
def test_divergence_is_recorded_not_a_crash(tmp_path, digits, policy):
    run = tiny_run_config("dfa", lam=0.0, epochs=4, lr=1e30, nonfinite_policy=policy)
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
    from credit_assign.studies.penalty_rescue import fig4_penalty_rescue as penalty_rescue

    train(tiny_run_config("bp", lam=0.0, epochs=2), digits, tmp_path / "bp" / "metrics.json",
          tmp_path / "bp" / "model.pt", timings_out=tmp_path / "bp" / "timings.json")
    frames = tables([tmp_path / "m.json", tmp_path / "bp" / "metrics.json"], [])
    assert frames["runs"].first_nonfinite_epoch.notna().any()
    outputs = [tmp_path / "fig.png", tmp_path / "fig.svg"]
    penalty_rescue.style.save(penalty_rescue.plot(frames["runs"], frames["epochs"],
                                                  frames["nulls"], 0.01), outputs)
    assert all(p.stat().st_size > 0 for p in outputs)


# The malformed configs that were one Snakemake run each are unit tests of the checks
# now (tests/test_planning.py: test_a_malformed_config_is_named and the duplicate key).


@pytest.fixture
def finished_run(tmp_path):
    """A completed tiny workflow (results, figures, Snakemake's metadata)."""
    work = fresh_copy(tmp_path / "w")
    (work / "config" / "tiny.yaml").write_text(yaml.safe_dump(
        {**TINY, "sweep": {**TINY["sweep"], "seeds": [1], "bp": [0], "dfa": [0]},
         "reproduction": {"reference": None}}))
    snakemake(work, "--configfile", "config/tiny.yaml")
    return work


@pytest.mark.workflow
def test_corrupt_result_stops_the_figure_with_the_file_named(finished_run):
    work = finished_run
    target = work / "results/digits/default/train/dfa/lam0/seed1/metrics.json"
    figure = work / "paper/figures/fig4_penalty_rescue.png"
    before = figure.stat().st_mtime_ns
    text = target.read_text()
    target.write_text(text[: len(text) // 3])  # truncated, as by a full disk
    out = snakemake(work, "--configfile", "config/tiny.yaml", check=False)
    log = (work / paths.fill(paths.LOGS["aggregate"], dataset="digits",
                             recipe="default")).read_text()
    assert out.returncode != 0
    assert "results/digits/default/train/dfa/lam0/seed1/metrics.json: not valid JSON" in log
    assert figure.stat().st_mtime_ns == before  # no figure from a broken file
    with pytest.raises(ResultError):
        read_result(target, "train")


@pytest.mark.workflow
def test_sigterm_to_snakemake_leaves_nothing_mistaken_for_complete(tmp_path):
    work = fresh_copy(tmp_path / "w")
    long = {**TINY, "training": {**TINY["training"], "epochs": 400},
            "sweep": {"seeds": [1], "dfa": [0], "bp": [], "frozen": [], "fa": []},
            "reproduction": {"reference": None}}
    (work / "config" / "long.yaml").write_text(yaml.safe_dump(long))
    log = work / paths.fill(paths.LOGS["train"], dataset="digits", recipe="default",
                            method="dfa", lam="0", seed=1)
    proc = subprocess.Popen([sys.executable, "-m", "snakemake", "--cores", "1", "--configfile",
                             "config/long.yaml"], cwd=work, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 300
    while time.time() < deadline and "epoch 3/" not in (log.read_text() if log.exists() else ""):
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=120)
    metrics = work / "results/digits/default/train/dfa/lam0/seed1/metrics.json"
    assert not metrics.exists()
    assert (metrics.parent / "resume.pt").exists()
    # a later run resumes the job instead of trusting a partial output
    done = snakemake(work, "--configfile", "config/long.yaml", "--rerun-incomplete",
                     "results/digits/default/train/dfa/lam0/seed1/metrics.json")
    assert done.returncode == 0
    assert "resumed from" in log.read_text()
    assert read_result(metrics, "train")["history"]["epoch"][-1] == 400
    shutil.rmtree(work / "results")
