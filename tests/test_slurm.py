"""The SLURM profile against a real (throwaway, single-node) SLURM cluster.

Starts Debian's slurmctld/slurmd/munge with tests/slurm/cluster.sh, runs the tiny
config through ``--profile profiles/slurm`` (test overrides: partition, squeue as
the status command, no account), checks the results equal a local run's byte for
byte, checks a failing job fails the run with its log path, and tears down.
Skipped (with the reason) where that is impossible — never in CI (CI=true).
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import fresh_copy

pytestmark = pytest.mark.cluster  # every test here runs a real SLURM cluster

ROOT = Path(__file__).resolve().parents[1]
CLUSTER = ROOT / "tests" / "slurm" / "cluster.sh"
TINY = {
    "dataset": "digits",
    "model": {"width": 16, "depth": 2},
    "training": {"epochs": 2, "batch_size": 256, "augmentation": "none"},
    "sweep": {"seeds": [1], "dfa": [0], "bp": [0], "frozen": [], "fa": []},
    "diagnostics": {"n_samples": 100},
    "fresh_b_null": {"draws": 3},
    "reproduction": {"reference": None},
}
TARGETS = ["results/digits/default/summary/runs.csv", "paper/figures/fig4_penalty_rescue.pdf"]
SLURM_OVERRIDES = [
    "--profile", "profiles/slurm",
    "--default-resources", "slurm_partition=debug", "runtime=10", "mem_mb=500",
    "--slurm-status-command", "squeue", "--slurm-no-account",
    # the plugin checks first after init seconds, then backs off by 10 s a check while no
    # job finished (so a step of the chain takes about 12 s whatever the job's length)
    "--slurm-init-seconds-before-status-checks", "2", "--latency-wait", "5", "--jobs", "2",
    "--retries", "0",
]


def _unavailable() -> str | None:
    if os.geteuid() != 0:
        return "needs root to start slurmctld/slurmd/munge"
    missing = [b for b in ("slurmctld", "slurmd", "munged", "sinfo") if not shutil.which(b)]
    if missing:
        return f"SLURM not installed ({', '.join(missing)} missing): bash {CLUSTER} pkgs"
    if not shutil.which("timeout"):
        return "coreutils timeout missing"
    try:
        import snakemake_executor_plugin_slurm  # noqa: F401
    except ImportError:
        return 'snakemake-executor-plugin-slurm missing: pip install -e ".[slurm]"'
    return None


@pytest.fixture(scope="module")
def cluster():
    reason = _unavailable()
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the SLURM integration test must run in CI, but: {reason}")
        pytest.skip(reason)
    subprocess.run(["timeout", "-s", "KILL", "60", "bash", str(CLUSTER), "down"],
                   capture_output=True)
    up = subprocess.run(["timeout", "-s", "KILL", "120", "bash", str(CLUSTER), "up"],
                        capture_output=True, text=True)
    assert up.returncode == 0, f"cluster did not start:\n{up.stdout}\n{up.stderr}"
    yield
    subprocess.run(["timeout", "-s", "KILL", "60", "bash", str(CLUSTER), "down"],
                   capture_output=True)


def run(workdir: Path, *args: str, limit: int = 420) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    return subprocess.run(["timeout", "-s", "KILL", str(limit), sys.executable, "-m",
                           "snakemake", *args], cwd=workdir, capture_output=True, text=True,
                          env=env)


def workdir(path: Path, config: dict) -> Path:
    fresh_copy(path)
    (path / "config" / "tiny.yaml").write_text(yaml.safe_dump(config))
    return path


def test_slurm_run_equals_local_run(cluster, tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    local = workdir(tmp_path / "local", TINY)
    remote = workdir(tmp_path / "slurm", TINY)
    # the two runs at once (the SLURM run mostly waits on the scheduler); targets first:
    # --configfile takes every word after it
    with ThreadPoolExecutor(2) as pool:
        local_run = pool.submit(run, local, *TARGETS, "--cores", "1",
                                "--configfile", "config/tiny.yaml")
        slurm_run = pool.submit(run, remote, *TARGETS, *SLURM_OVERRIDES, "--verbose",
                                "--configfile", "config/tiny.yaml")
        out_local, out = local_run.result(), slurm_run.result()
    assert out_local.returncode == 0, out_local.stderr
    text = out.stdout + out.stderr
    assert out.returncode == 0, text
    sbatch = [line for line in text.splitlines() if line.startswith("sbatch call:")]
    assert len(sbatch) == 6  # prepare_data, 2 × train, fresh_b_null, aggregate, figure
    assert all("-p debug" in line for line in sbatch)
    (ROOT / "logs").mkdir(exist_ok=True)
    (ROOT / "logs" / "slurm-test-sbatch.txt").write_text("\n".join(sbatch) + "\n")

    results = sorted(p.relative_to(local)
                     for p in local.glob("results/digits/default/train/*/*/*/*.json")
                     if p.name == "metrics.json")
    assert len(results) == 2
    for rel in results:
        assert (remote / rel).read_bytes() == (local / rel).read_bytes(), rel
    assert (remote / "results/digits/default/summary/runs.csv").exists()
    assert (remote / "paper/figures/fig4_penalty_rescue.pdf").stat().st_size > 0
    # sbatch's own output goes to the profile's log folder (kept there for failed jobs)
    assert all(f"--output {remote}/logs/slurm/rule_" in line for line in sbatch)


def test_failing_slurm_job_fails_the_run_with_its_log(cluster, tmp_path):
    empty = tmp_path / "empty-cifar" / "train"
    empty.mkdir(parents=True)
    (empty.parent / "test").mkdir()  # the layout passes the parse-time check; no images
    broken = {**TINY, "dataset": "cifar10",
              "data": {"cifar10": {"source": str(empty.parent)}}}
    work = workdir(tmp_path / "w", broken)
    out = run(work, "data/cifar10.json", *SLURM_OVERRIDES, "--configfile", "config/tiny.yaml",
              limit=300)
    text = out.stdout + out.stderr
    assert out.returncode not in (0, 124, 137), text  # failed, and did not hang
    assert "logs/prepare_data/cifar10.log" in text
    assert "holds no images" in (work / "logs/prepare_data/cifar10.log").read_text()
