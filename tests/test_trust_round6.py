"""Trust, round six (issue #57): pre-registered runs never rerun from uncommitted code,
whatever git is told to overlook."""

import json
import os
import subprocess
from pathlib import Path

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
    from credit_assign.planning import checks
    from credit_assign.planning.wildcards import JobFunctions

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
             "alignment_probe", "ep_stack_probe", "ep_fixed_point", "ep_estimator",
             "ep_question2")


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
    # the paper alone (its dose section reads the arms' results without config/dose.yaml)
    # and the dose study with it
    for args in ([], ["paper/ms.pdf"],
                 ["all", "variants", "claims", "paper/ms.pdf", "--configfile",
                  "config/config.yaml", "config/variants.yaml"],
                 ["dose", "--configfile", "config/config.yaml", "config/dose.yaml"]):
        out = snakemake(clone, "-n", *args)
        stats = out.stdout.split("Job stats:")[-1] if "Job stats:" in out.stdout else ""
        planned = {line.split()[0] for line in stats.splitlines()[3:] if line.strip()}
        assert not planned & set(COMPUTING), (args, sorted(planned))


# ---- 8: claims files ---------------------------------------------------------------
def _claims_variant(tmp_path, edit):
    import yaml

    spec = yaml.safe_load((ROOT / "config/claims.yaml").read_text(encoding="utf-8"))
    edit(spec)
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def test_the_committed_claims_file_still_reads():
    from credit_assign.planning import claims

    assert claims.load(ROOT / "config/claims.yaml")["decision"]["method"] == "BCa"


def test_a_claims_file_without_version_and_bca_on_three_seeds_is_refused(tmp_path):
    from credit_assign.planning import claims

    path = _claims_variant(tmp_path, lambda s: s["seeds"].update(fresh=[2001, 2002, 2003]))
    with pytest.raises(claims.ClaimsError, match=r"without version 2.*seeds.fresh has 3"):
        claims.load(path)


def test_fresh_seeds_that_are_the_study_seeds_are_refused(tmp_path):
    from credit_assign.planning import claims

    path = _claims_variant(tmp_path, lambda s: s["seeds"].update(fresh=[42, 123, 456, 1, 2,
                                                                         3, 4, 5]))
    with pytest.raises(claims.ClaimsError, match=r"\[42, 123, 456\] are in both"):
        claims.load(path)


def test_fresh_seeds_that_are_the_configs_own_seeds_are_refused(tmp_path):
    """Round six's new break: seeds.study says other seeds, but the fresh ones are the
    config's sweep seeds, whose runs were made and seen."""
    import yaml

    from credit_assign.planning import claims

    def edit(spec):
        spec.update(version=2)
        spec["decision"].update(method="t", correction="holm")
        spec["seeds"].update(fresh=[42, 123, 456], study=[7, 8, 9])

    path = _claims_variant(tmp_path, edit)
    spec = claims.load(path)
    config = yaml.safe_load((ROOT / "config/config.yaml").read_text(encoding="utf-8"))
    with pytest.raises(claims.ClaimsError, match=r"seeds.fresh \[42, 123, 456\] are the "
                                                 r"config's own seeds"):
        claims.check_against(spec, config, str(path))


def test_a_threshold_given_as_a_string_is_named_as_such(tmp_path):
    from credit_assign.planning import claims

    def edit(spec):
        spec["claims"][0]["claim"]["threshold"] = "0.5"

    with pytest.raises(claims.ClaimsError, match=r"claims/0/claim.*'0.5' is not of type "
                                                 r"'number'"):
        claims.load(_claims_variant(tmp_path, edit))


# ---- 12: a table refused names the result, not every column ---------------------------
def test_a_nan_in_a_runs_table_names_its_result_file(tmp_path):
    import math

    from test_trust import _runs_frame

    from credit_assign.analysis import tables

    frame = _runs_frame()
    frame["path"] = [f"results/digits/default/train/{m}/lam0/seed{s}/metrics.json"
                     for m, s in zip(frame.method, frame.seed, strict=True)]
    frame.loc[2, "test_acc"] = math.nan
    with pytest.raises(tables.TableError) as err:
        tables.write(frame, tmp_path / "runs.csv", "runs")
    message = str(err.value)
    assert "results/digits/default/train/dfa/lam0/seed1/metrics.json" in message
    assert "bug in the writer" not in message
    assert message.count("non-finite") == 1  # the frame-wide check named once


# ---- 4: a diverged EP stack is an outcome its job records, named -----------------------
def test_a_diverged_stack_is_an_outcome_its_job_records_and_the_question_names(
        tmp_path, monkeypatch):
    """ARPACK's -9999 on a stack whose pretraining diverged: the job writes a valid result
    that says so (no batch), not a traceback; the EP question's step names the seed and
    why (its judge of record, committed before its runs, has no outcome for it)."""
    from scipy.sparse.linalg import ArpackError

    from credit_assign import jobs
    from credit_assign.studies.ep_question.page import refuse_diverged

    def diverged(*args, **kwargs):
        raise ArpackError(-9999)

    monkeypatch.setattr(jobs, "run_fixed_point", diverged)
    monkeypatch.setattr(jobs.CharCorpus, "load", staticmethod(lambda path: None))
    monkeypatch.setattr(jobs, "ensure_data", lambda path: None)
    out = jobs.ep_fixed_point("cache.pt", "tinyshakespeare", 3,
                              {"fixed_point": {"batches": 3}}, tmp_path / "r.json",
                              tmp_path / "t.json")
    assert out["batches"] == [] and "not finite" in out["diverged"]
    assert json.loads((tmp_path / "r.json").read_text())["diverged"] == out["diverged"]
    refuse_diverged([{"batches": [{}]}], ["a.json"])  # a seed that did not diverge passes
    with pytest.raises(ValueError, match=r"seed3.json: its stack diverged in pretraining "
                                         r"\(the Jacobian's eigenvalues"):
        refuse_diverged([out], ["results/ep_stack/x/seed3.json"])


# ---- 11: the record names data by file name and checksum, never a machine's path -------
def test_no_committed_file_names_a_path_of_the_machine_that_made_it():
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True,
                            check=True).stdout.decode().split("\0")
    found = []
    for name in filter(None, listed):
        path = ROOT / name
        if not path.is_file() or path.stat().st_size > 2_000_000:
            continue
        text = path.read_bytes().decode("utf-8", errors="ignore")
        if "/".join(("..", "shared", "")) in text or str(ROOT) in text:
            found.append(name)
    assert found == [], f"committed files naming a machine's path: {found}"


def test_the_records_manifest_has_no_rebuild_path_and_a_clone_rebuilds_from_its_config(
        tmp_path, monkeypatch):
    from credit_assign.infra import data
    from credit_assign.jobs import ensure_data

    copy = json.loads((ROOT / "results/.record/manifests/data/cifar10.json").read_text())
    assert "rebuild_from" not in copy and copy["source"].startswith("cifar10-jpg.tar (sha256")
    monkeypatch.chdir(tmp_path)
    data.prepare_manifest("digits", None, Path("data"), Path("data/digits.pt"))
    manifest = json.loads(Path("data/digits.json").read_text())
    assert record.manifest_text(Path("data/digits.json")).count("rebuild_from") == 0
    Path("data/digits.pt").unlink()  # a fresh clone: the manifest, no data
    ensure_data("data/digits.pt")
    assert data.load("data/digits.pt")["info"]["digest"] == manifest["digest"]
    # a manifest of other data than the source gives: named, and nothing left to read
    Path("data/digits.json").write_text(json.dumps({**manifest, "digest": "0" * 64}))
    Path("data/digits.pt").unlink()
    with pytest.raises(data.DataFormatError, match=r"built from the download \(config "
                                                   r"data.digits.source\), holds other data"):
        ensure_data("data/digits.pt")
    assert not Path("data/digits.pt").exists()


# ---- 7: without .snakemake/, a result is judged from what it records ------------------
def test_a_result_without_a_job_record_is_judged_from_its_own_commit(tmp_path, monkeypatch):
    from credit_assign.analysis import stale

    def out(*args):
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True,
                              text=True, check=True).stdout

    history = out("log", "--format=%H", "--", "src/credit_assign/science/training.py")
    if len(history.split()) < 2:
        pytest.skip("a shallow clone: no older commit of training.py to compare with")
    older = history.split()[1]  # training.py differs there from today's
    here = out("rev-parse", "HEAD").strip()

    def result(commit, dirty=False):
        path = tmp_path / f"{commit[:7]}{dirty}.json"
        path.write_text(json.dumps({"provenance": {"code": {"git_commit": commit,
                                                             "git_dirty": dirty}}}))
        return path

    why = stale.own_word(result(older), "train", "dfa")
    assert why.startswith(f"train code changed since its commit {older[:7]}: ")
    # from any folder (git runs in the package's checkout), and a job's timings judged
    # by the result its job wrote beside them
    monkeypatch.chdir(tmp_path)
    assert stale.own_word(result(older), "train", "dfa") == why
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.json").write_text(result(older).read_text())
    (run / "timings.json").write_text("{}")
    assert stale.own_word(run / "timings.json", "train", "dfa") == why
    assert stale.own_word(result(older, dirty=True), "train", "dfa") == stale.UNKNOWN
    assert stale.own_word(result("f" * 40), "train", "dfa") == stale.UNKNOWN
    if not out("status", "--porcelain", "--", "src").strip():  # a clean tree (CI)
        assert stale.own_word(result(here), "train", "dfa") is None


# ---- 3: another data source than the record's is said at the parse -------------------
def test_a_config_source_other_than_the_records_is_named(tmp_path):
    copy = tmp_path / record.MANIFESTS / "data/cifar10.json"
    copy.parent.mkdir(parents=True)
    tar = tmp_path / "cifar10-jpg.tar"
    tar.write_bytes(b"the images")
    import hashlib

    sha = hashlib.sha256(b"the images").hexdigest()
    copy.write_text(json.dumps({"source": f"cifar10-jpg.tar (sha256 {sha})"}))

    from credit_assign.planning.checks import source_note

    def note(source):
        return source_note({"dataset": "cifar10",
                                   "data": {"cifar10": {"source": source}}}, tmp_path)

    assert note(str(tar)) is None  # the same bytes, wherever they lie
    other = tmp_path / "other.tar"
    other.write_bytes(b"other images")
    assert f"made from cifar10-jpg.tar (sha256 {sha}); this config's source is {other}" \
        in note(str(other))
    folder = tmp_path / "images"
    folder.mkdir()
    assert "this config's source is the folder" in note(str(folder))
    copy.write_text(json.dumps({"source": "images/ (image folder)"}))
    assert note(str(folder)) is None  # the same folder name: its data are checked by digest
    assert "the download (the official archive)" in note("download")
    assert source_note({"dataset": "digits", "data": {}}, tmp_path) is None


def test_a_training_result_whose_config_differs_from_todays_is_stale(tmp_path):
    """A result records its run config: one made under another config (2 epochs where
    today's says 30) is stale, whatever Snakemake's records say."""
    import shutil

    from credit_assign.analysis import stale
    from credit_assign.planning.checks import load_config

    src = ROOT / "results/cifar10/default/train/dfa/lam0/seed42/metrics.json"
    dest = tmp_path / "results/cifar10/default/train/dfa/lam0/seed42/metrics.json"
    dest.parent.mkdir(parents=True)
    shutil.copyfile(src, dest)
    config = load_config([], ROOT)
    fresh, old, _ = stale.scan(tmp_path / "results", tmp_path, config)
    assert old == []
    result = json.loads(dest.read_text())
    result["config"]["training"]["epochs"] = 2
    dest.write_text(json.dumps(result))
    fresh, old, _ = stale.scan(tmp_path / "results", tmp_path, config)
    assert [(p, why) for p, why in old] == [
        (dest, "its config differs from today's: training.epochs 2 → 30")]


def test_an_index_written_before_manifests_were_kept_bare_still_checks(tmp_path):
    """A record index of before (a worktree cut earlier) holds a manifest's raw bytes,
    rebuild_from and all: it still checks, and the next save keeps it bare."""
    from credit_assign.infra.files import sha256_file

    manifest = tmp_path / "data/cifar10.json"
    manifest.parent.mkdir()
    manifest.write_text(json.dumps({"digest": "d", "rebuild_from": "/a/machine/path"}))
    entry = {"sha256": sha256_file(manifest), "bytes": manifest.stat().st_size,
             "endtime": None}
    assert record._check_one(tmp_path, "data/cifar10.json", entry) is None
    entry["sha256"] = "0" * 64
    assert "does not match the record" in record._check_one(tmp_path, "data/cifar10.json",
                                                            entry)
