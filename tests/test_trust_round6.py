"""Trust, round six (issue #57): pre-registered runs never rerun from uncommitted code,
whatever git is told to overlook."""

import json
import os
import subprocess

import pytest
from conftest import ROOT

from credit_assign.infra import record
from credit_assign.infra.provenance import uncommitted


def _git(cwd, *args):
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
                        "PATH": "/usr/bin:/bin"})


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "rule.py").write_text("x = 1\n")
    (tmp_path / ".gitignore").write_text("/logs/\n")
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "r.json").write_text("{}\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "c")
    return tmp_path


def test_an_edit_git_is_told_to_overlook_is_still_uncommitted(repo):
    assert uncommitted(repo) == []
    (repo / "src" / "rule.py").write_text("x = 2\n")
    _git(repo, "update-index", "--assume-unchanged", "src/rule.py")
    assert subprocess.run(["git", "-C", str(repo), "status", "--porcelain"],
                          capture_output=True, text=True).stdout == ""  # git says clean
    assert uncommitted(repo) == ["src/rule.py"]


def test_a_new_file_hidden_by_info_exclude_is_still_uncommitted(repo):
    (repo / "src" / "extra.py").write_text("y = 1\n")
    (repo / ".git" / "info" / "exclude").write_text("src/extra.py\n")
    (repo / "logs").mkdir()
    (repo / "logs" / "a.log").write_text("ignored by the committed .gitignore\n")
    (repo / "results" / "r.json").write_text('{"new": 1}\n')  # the record: not code
    assert uncommitted(repo) == ["src/extra.py"]


def test_a_staged_new_file_and_a_symlink(repo):
    (repo / "src" / "link.py").symlink_to("rule.py")
    _git(repo, "add", "src/link.py")
    _git(repo, "commit", "-q", "-m", "link")
    assert uncommitted(repo) == []  # a committed symlink is its target's name
    (repo / "src" / "staged.py").write_text("z = 1\n")
    _git(repo, "add", "src/staged.py")
    assert uncommitted(repo) == ["src/staged.py"]


def test_a_deleted_file_is_uncommitted(repo):
    (repo / "src" / "rule.py").unlink()
    assert uncommitted(repo) == ["src/rule.py"]


def test_a_run_whose_recorded_params_differ_would_rerun(tmp_path):
    """The refusal's question for a pre-registered run whose result is here: would
    Snakemake train it again (other code or config than its job's record holds)?"""
    from credit_assign.spec import checks
    from credit_assign.spec.wildcards import JobFunctions

    config = checks.load_config([], root=ROOT)
    jobs = JobFunctions(config, tmp_path)

    class W(dict):
        __getattr__ = dict.__getitem__

    w = W(dataset="cifar10", recipe="default", method="dfa", lam="0.01", seed="1001")
    metrics = "results/cifar10/default/train/dfa/lam0.01/seed1001/metrics.json"
    assert not jobs._would_rerun(w, metrics)  # no record of its job: Snakemake cannot tell
    (tmp_path / metrics).parent.mkdir(parents=True)
    (tmp_path / metrics).write_text("{}")
    meta = tmp_path / record.SNAKEMAKE_METADATA / record.record_name(metrics)
    meta.parent.mkdir(parents=True, exist_ok=True)
    params = [repr("data/cifar10.pt"), repr(jobs.code("train")(w)), repr(jobs.run_config(w))]
    meta.write_text(json.dumps({"params": json.dumps(params)}))
    assert not jobs._would_rerun(w, metrics)
    # the job's script edited after the run (Snakemake's mtime trigger)
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "train.py").write_text("# edited\n")
    os.utime(tmp_path / metrics, (1e9, 1e9))
    assert jobs._would_rerun(w, metrics)
    (tmp_path / "scripts" / "train.py").unlink()
    params[1] = repr("0" * 64)  # the rule's code changed since the job
    meta.write_text(json.dumps({"params": json.dumps(params)}))
    assert jobs._would_rerun(w, metrics)


def test_ctrl_c_then_the_same_command_continues():
    """#57, 6: a stopped run leaves files marked incomplete; the same command (every make
    target, a bare snakemake) reruns them, each from its last epoch, not an
    IncompleteFilesException."""
    import yaml

    profile = yaml.safe_load((ROOT / "profiles" / "default" / "profile.yaml").read_text())
    assert profile.get("rerun-incomplete") is True


@pytest.mark.workflow
def test_a_checkout_in_a_folder_with_a_space_is_refused_before_any_job(tmp_path):
    """#57, 9: Snakemake's script steps pass the interpreter's path to a shell unquoted;
    the dry run passed and the first job failed. Now the parse stops, naming the path."""
    from conftest import fresh_copy, snakemake

    repo = fresh_copy(tmp_path / "x y")
    out = snakemake(repo, "-n", "--configfile", "config/quick.yaml", check=False)
    text = out.stdout + out.stderr
    assert out.returncode != 0 and "Job stats" not in text
    assert f"the workflow's folder has a space in its path ({repo})" in text


COMPUTING = ("prepare_data", "prepare_corpus", "train", "fresh_b_null", "measure",
             "alignment_probe", "ep_stack_probe", "ep_fixed_point", "ep_estimator")


@pytest.mark.workflow
def test_a_fresh_clones_bare_snakemake_plans_no_computing_job(tmp_path):
    """#58, 3 and #57, 5: the mission's own command on a fresh clone, with no restore
    step to remember: the Snakefile reads the record as its jobs wrote it, and the paper
    config, the study and the claims plan tables, figures and pages only."""
    from conftest import snakemake

    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    first = snakemake(clone, "-n")
    assert "Snakemake records put back (a fresh checkout)" in first.stderr
    for args in ([], ["all", "variants", "claims", "--configfile", "config/config.yaml",
                      "config/variants.yaml"]):
        out = snakemake(clone, "-n", *args)
        stats = out.stdout.split("Job stats:")[-1] if "Job stats:" in out.stdout else ""
        planned = {line.split()[0] for line in stats.splitlines()[3:] if line.strip()}
        assert not planned & set(COMPUTING), (args, sorted(planned))
