"""The record (credit_assign.infra.record): the index and Snakemake's records of the
results kept in git; a file that does not match its record is named, never used; a
restore orders the files as their jobs do."""

import json
import os
import subprocess
import sys

import pytest
import yaml
from conftest import ROOT, TINY, fresh_copy, job_counts, snakemake

from credit_assign.infra import paths, record
from credit_assign.infra.results import ResultError, read_result

RUN = "results/cifar10/default/train/dfa/lam0/seed42"
FILES = {"data/cifar10.json": {"digest": "d"},
         f"{RUN}/metrics.json": {"kind": "train"},
         f"{RUN}/timings.json": {"kind": "train_timings"},
         "results/cifar10/default/fresh_b_null/dfa/lam0/seed42.json": {"kind": "null"}}


def _job(root, path, body, endtime):
    """Write ``path`` as a finished job of Snakemake's would, with its record."""
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(json.dumps(body))
    os.utime(root / path, (endtime - 1, endtime - 1))
    meta = root / record.SNAKEMAKE_METADATA / record.record_name(path)
    meta.parent.mkdir(parents=True, exist_ok=True)
    meta.write_text(json.dumps({"record_format_version": 6, "rule": "x", "params": ["p"],
                                "endtime": endtime, "incomplete": False}))


@pytest.fixture
def recorded(tmp_path):
    for i, (path, body) in enumerate(FILES.items()):
        _job(tmp_path, path, body, 1_000_000.0 + i)
    (tmp_path / "results/cifar10/default/train/dfa/lam0/seed42/model.pt").write_bytes(b"w")
    (tmp_path / "results/cifar10/default/summary").mkdir(parents=True)
    (tmp_path / "results/cifar10/default/summary/runs.csv").write_text("a\n")
    assert record.save(tmp_path) == {"files": 4, "unrecorded": 0}
    return tmp_path


def test_the_record_holds_results_and_manifests_never_weights_or_tables(recorded):
    index = json.loads((recorded / record.INDEX).read_text())["files"]
    assert sorted(index) == sorted(FILES)
    saved = {record.record_path(p.relative_to(recorded / record.METADATA))
             for p in (recorded / record.METADATA).rglob("*") if p.is_file()}
    # the data manifest's Snakemake record names the machine's copy of the data: not kept
    assert saved == set(FILES) - {"data/cifar10.json"}
    assert record.check(recorded) == []


def test_an_edited_or_truncated_record_file_is_named(recorded, monkeypatch):
    metrics = recorded / f"{RUN}/metrics.json"
    metrics.write_text(json.dumps({"kind": "trained"}))  # same job, other bytes
    (recorded / f"{RUN}/timings.json").write_text("{")
    problems = record.check(recorded)
    assert len(problems) == 2 and all("does not match the record" in p for p in problems)
    monkeypatch.chdir(recorded)
    with pytest.raises(record.RecordError, match="metrics.json: does not match"):
        record.check_file(f"{RUN}/metrics.json")
    with pytest.raises(record.RecordError, match="restoring nothing|nothing restored"):
        record.restore(recorded)


def test_a_file_rewritten_by_its_job_is_a_rerun_not_an_edit(recorded, monkeypatch):
    _job(recorded, f"{RUN}/metrics.json", {"kind": "rerun"}, 2_000_000.0)
    assert record.check(recorded) == []
    monkeypatch.chdir(recorded)
    record.check_file(f"{RUN}/metrics.json")
    # ... until it is edited after that job ended
    metrics = recorded / f"{RUN}/metrics.json"
    metrics.write_text(json.dumps({"kind": "edited"}))
    assert "changed after the job" in record.check(recorded)[0]
    # the edit is not a job's: the record keeps the entry it had and goes on naming it
    assert record.save(recorded)["changed"] == 1
    assert json.loads((recorded / record.INDEX).read_text())["files"][
        f"{RUN}/metrics.json"]["endtime"] == 1_000_001.0
    assert "changed after the job" in record.check(recorded)[0]


def test_a_hand_edit_is_not_laundered_by_the_next_save(recorded, capsys):
    """Issue #57, 1: an edit of the same size, then any successful snakemake (its
    onsuccess saves the record): the index keeps the job's bytes, check names the file."""
    metrics = recorded / f"{RUN}/metrics.json"
    entry = json.loads((recorded / record.INDEX).read_text())["files"][f"{RUN}/metrics.json"]
    metrics.write_text(json.dumps({"kind": "TRAIN"}))  # same size, other bytes
    (recorded / f"{RUN}/timings.json").write_text("{")  # truncated
    assert record.save(recorded)["changed"] == 2
    assert "is not what its job wrote" in capsys.readouterr().err
    after = json.loads((recorded / record.INDEX).read_text())["files"]
    assert after[f"{RUN}/metrics.json"] == entry
    assert len(record.check(recorded)) == 2


def test_a_result_deleted_saved_and_put_back_edited_is_never_vouched_for(
        recorded, monkeypatch, capsys):
    """Round six's new break: delete a result, save (its entry goes), put an edited copy
    back; the next save does not record it, and a reader refuses it, naming it."""
    metrics = recorded / f"{RUN}/metrics.json"
    text = metrics.read_text()
    metrics.unlink()
    record.save(recorded)
    assert f"{RUN}/metrics.json" not in record.recorded(recorded)
    metrics.write_text(text.replace("train", "TRAIN"))  # now: after its job ended
    assert record.save(recorded)["unrecorded"] == 1
    assert "written after the job that made it ended" in capsys.readouterr().err
    assert f"{RUN}/metrics.json" not in record.recorded(recorded)
    monkeypatch.chdir(recorded)
    with pytest.raises(record.RecordError, match=r"metrics.json: not in the record .* "
                                                 r"written after the job"):
        record.check_file(f"{RUN}/metrics.json")


def test_read_result_refuses_a_record_file_that_does_not_match(recorded, monkeypatch):
    monkeypatch.chdir(recorded)
    null = "results/cifar10/default/fresh_b_null/dfa/lam0/seed42.json"
    (recorded / null).write_text(json.dumps({"kind": "forged"}))
    with pytest.raises(ResultError, match=f"{null}: does not match the record"):
        read_result(null, "fresh_b_null")


def test_a_restore_puts_back_snakemakes_records_and_orders_the_files(recorded):
    clone = recorded / "clone"
    # a clone: the results, the index, Snakemake's records and the manifests' copies; no
    # data/ (never committed)
    for path in [f for f in FILES if not f.startswith("data/")] + [record.INDEX] + [
            p.relative_to(recorded).as_posix()
            for folder in (record.METADATA, record.MANIFESTS)
            for p in (recorded / folder).rglob("*") if p.is_file()]:
        (clone / path).parent.mkdir(parents=True, exist_ok=True)
        (clone / path).write_bytes((recorded / path).read_bytes())
    # git checks files out in any order: the null first
    for i, path in enumerate(reversed([f for f in FILES if not f.startswith("data/")])):
        os.utime(clone / path, (5e6 + i, 5e6 + i))
    assert not (clone / "data").exists()
    out = record.restore(clone, now=6e6)
    # the manifest as the record keeps it: what it says of the data, no machine's path
    assert json.loads((clone / "data/cifar10.json").read_text()) == json.loads(
        record.manifest_text(recorded / "data/cifar10.json"))
    assert out == {"files": 4, "metadata": 3}
    t = {p: (clone / p).stat().st_mtime for p in FILES}
    assert t["data/cifar10.json"] < t[f"{RUN}/metrics.json"] < t[
        "results/cifar10/default/fresh_b_null/dfa/lam0/seed42.json"]
    assert (clone / record.SNAKEMAKE_METADATA / record.record_name(
        f"{RUN}/metrics.json")).is_file()
    assert not (clone / record.SNAKEMAKE_METADATA / record.record_name(
        "data/cifar10.json")).exists()
    later = {p: (clone / p).stat().st_mtime for p in FILES}
    assert record.restore(clone, now=7e6) == {"files": 0, "metadata": 0}  # once
    assert {p: (clone / p).stat().st_mtime for p in FILES} == later


def test_a_result_file_without_a_finished_job_is_not_recorded(recorded, capsys):
    stray = recorded / "results/cifar10/default/measure/dfa/lam0/seed42.json"
    stray.parent.mkdir(parents=True)
    stray.write_text("{}")
    assert record.save(recorded) == {"files": 4, "unrecorded": 1}
    assert "measure/dfa/lam0/seed42.json has no finished Snakemake record" in \
        capsys.readouterr().err


def test_a_record_file_naming_this_machine_is_refused(recorded):
    timings = recorded / f"{RUN}/timings.json"
    _job(recorded, f"{RUN}/timings.json", {"argv": [str(recorded / "x.py")]}, 3e6)
    record.save(recorded)
    assert any("names this machine's folder" in p for p in record.check(recorded))
    assert timings.is_file()


def test_a_result_of_another_config_in_a_runs_place_is_named(tmp_path, monkeypatch):
    """Snakemake's record of the job says which config it was given: a metrics.json
    whose own config differs (another run's file copied in) is named by check and by
    every reader, even where the index was written after the swap."""
    config = {"dataset": "cifar10", "method": "dfa", "lam": 0.0, "seed": 42,
              "training": {"epochs": 30}}
    path = f"{RUN}/metrics.json"
    _job(tmp_path, path, {"kind": "train", "config": {**config, "seed": 43}}, 1e6)
    meta = tmp_path / record.SNAKEMAKE_METADATA / record.record_name(path)
    meta.write_text(json.dumps({"params": ["'x'", repr(config)], "endtime": 1e6,
                                "incomplete": False, "record_format_version": 6}))
    record.save(tmp_path)
    assert any("made by a run of another config" in p and "seed" in p
               for p in record.check(tmp_path))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(record.RecordError, match="another config than its job's"):
        record.check_file(path)
    _job(tmp_path, path, {"kind": "train", "config": config}, 2e6)
    meta.write_text(json.dumps({"params": ["'x'", repr(config)], "endtime": 2e6,
                                "incomplete": False, "record_format_version": 6}))
    record.check_file(path)  # its own config: read


def test_a_clone_without_the_data_keeps_its_manifest_in_the_record(recorded):
    """A checkout that never prepared the recorded results' data (a fresh clone that ran
    only make quick, say) saves the record unchanged: the manifest's copy and entry stay."""
    index = (recorded / record.INDEX).read_bytes()
    (recorded / "data/cifar10.json").unlink()
    record.save(recorded)
    assert (recorded / record.INDEX).read_bytes() == index
    assert (recorded / record.MANIFESTS / "data/cifar10.json").is_file()


def test_a_run_that_made_no_result_records_nothing(tmp_path):
    (tmp_path / "paper").mkdir()
    assert record.save(tmp_path) == {"files": 0, "unrecorded": 0}
    assert not (tmp_path / "results").exists()


def test_the_record_patterns_are_the_pipelines_paths():
    assert record.pattern_of("results/cifar10/const_lr/measure/fa/lam0/seed1.json")
    assert record.pattern_of("results/ep_stack/tinyshakespeare/float32/seed3.json")[1] == \
        paths.EP_RESULT
    assert record.pattern_of("results/ep_stack/tinyshakespeare/float32/seed3.fixed_point.json"
                             )[1] == paths.EP_FIXED_POINT
    assert record.pattern_of("results/cifar10/default/train/dfa/lam0/seed1/model.pt") is None
    assert record.pattern_of("results/cifar10/default/summary/runs.csv") is None
    assert paths.RECORD.startswith("results/.")  # no dataset wildcard matches it


# ---- a real workflow, its record committed, used from a real `git clone`
def _git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          check=True).stdout


def _py(cwd, *args):
    env = {**os.environ, "PYTHONPATH": str(cwd / "src")}
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True,
                          env=env)


@pytest.mark.workflow
def test_a_fresh_clone_trains_nothing_and_a_rule_edit_reruns_only_its_runs(tmp_path):
    """The record of a tiny workflow committed; from a `git clone` of it (no data/, files
    in checkout order), `record restore` then a dry run plans no computing job; an edit
    to DFA's module reruns DFA's runs and nulls only; an edited result is named."""
    repo = fresh_copy(tmp_path / "repo")
    tiny = {**TINY, "sweep": {**TINY["sweep"], "bp": [0], "frozen": [], "np": []},
            "probes": {**TINY["probes"], "epochs": []}}
    (repo / "config/tiny.yaml").write_text(yaml.safe_dump(tiny))
    # this test's repository records the digits runs (the project's records CIFAR-10's)
    (repo / ".gitignore").write_text((ROOT / ".gitignore").read_text()
                                     + "!/results/digits/\n")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "code")
    target = "results/digits/default/summary/runs.csv"
    snakemake(repo, target, "--configfile", "config/tiny.yaml")
    index = json.loads((repo / record.INDEX).read_text())["files"]
    assert len([p for p in index if p.endswith("metrics.json")]) == 6
    assert "data/digits.json" in index and not list(repo.glob("results/**/*.pt"))
    assert (repo / record.MANIFESTS / "data/digits.json").read_text() == record.manifest_text(
        repo / "data/digits.json")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "record")

    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(repo), str(clone))
    assert not (clone / ".snakemake").exists() and not (clone / "data/digits.pt").exists()
    restored = _py(clone, "-m", "credit_assign.infra.record", "restore")
    assert restored.returncode == 0, restored.stderr
    counts = job_counts(snakemake(clone, target, "--configfile", "config/tiny.yaml",
                                  "-n").stdout)
    assert set(counts) == {"aggregate", "total"}  # the tables only: never in the record

    # a run's config changed: exactly its runs rerun (Snakemake's restored records)
    (clone / "config/bp3.yaml").write_text("training: {per_method: {bp: {epochs: 3}}}\n")
    counts = job_counts(snakemake(clone, target, "--configfile", "config/tiny.yaml",
                                  "config/bp3.yaml", "-n").stdout)
    assert counts["train"] == 2 and "fresh_b_null" not in counts  # bp × 2 seeds

    dfa = clone / "src/credit_assign/science/learning_rules/dfa.py"
    text = dfa.read_text()
    dfa.write_text(text + "\n# a comment: nothing DFA computes changed\n")
    counts = job_counts(snakemake(clone, target, "--configfile", "config/tiny.yaml",
                                  "-n").stdout)
    assert "train" not in counts and "fresh_b_null" not in counts  # digests of meaning
    dfa.write_text(text + "\nEDITED = True  # an edit to DFA's code\n")
    assert _py(clone, "-m", "credit_assign.science.learning_rules", "--write").returncode == 0
    counts = job_counts(snakemake(clone, target, "--configfile", "config/tiny.yaml",
                                  "-n").stdout)
    assert counts["train"] == 4 and counts["fresh_b_null"] == 4  # dfa: 2 λ × 2 seeds
    _git(clone, "checkout", "--", "src")

    bp = clone / "results/digits/default/train/bp/lam0/seed1/metrics.json"
    bp.write_text(bp.read_text().replace('"seed": 1', '"seed": 1 '))
    checked = _py(clone, "-m", "credit_assign.infra.record", "check")
    assert checked.returncode == 1
    assert "bp/lam0/seed1/metrics.json: does not match the record" in checked.stderr
    failed = snakemake(clone, target, "--configfile", "config/tiny.yaml", check=False)
    assert failed.returncode != 0
    assert "bp/lam0/seed1/metrics.json: does not match the record" in \
        failed.stdout + failed.stderr


def test_a_manifest_deleted_or_prepared_again_is_a_change_of_data(recorded):
    """Deleting data/<dataset>.json reruns what reads the data (README): no restore puts
    it back in a checkout in use, and check names no problem; a manifest its job wrote
    again here is a change of data, not an edit."""
    (recorded / "data/cifar10.json").unlink()
    assert record.check(recorded) == []
    assert record.restore(recorded)["files"] == 0
    assert not (recorded / "data/cifar10.json").exists()
    _job(recorded, "data/cifar10.json", {"digest": "other"}, 3e6)
    assert record.check(recorded) == []


def test_take_brings_another_checkouts_runs_with_their_job_records(recorded, tmp_path_factory):
    """record take: the runs a second checkout made (a clean worktree running a
    pre-registered study) come over with Snakemake's record of their jobs, as if run
    here; a file both hold with other bytes is taken when its job there is a later rerun
    (unedited here), kept when the one here is, and otherwise named, and nothing is
    taken."""
    here = tmp_path_factory.mktemp("here")
    first = f"{RUN}/metrics.json"
    _job(here, "data/cifar10.json", FILES["data/cifar10.json"], 1_000_000.0)
    _job(here, first, FILES[first], 1_000_001.0)
    record.save(here)
    taken = record.take(recorded, here)["taken"]
    assert sorted(taken) == sorted(set(FILES) - {"data/cifar10.json", first})
    assert record.check(here) == []
    mine = json.loads((here / record.INDEX).read_text())["files"]
    theirs = json.loads((recorded / record.INDEX).read_text())["files"]
    assert mine == theirs  # the same files, bytes and job end times
    for path in taken:
        meta = here / record.SNAKEMAKE_METADATA / record.record_name(path)
        assert json.loads(meta.read_text())["endtime"] == theirs[path]["endtime"]
    # taking again changes nothing
    assert record.take(recorded, here)["taken"] == []
    # a job there rerun later with other bytes (a model rebuilt for a null, newer code):
    # taken with its job's record, listed as a rerun
    _job(recorded, first, {"kind": "other"}, 2_000_000.0)
    assert record.take(recorded, here) == {"taken": [], "rerun": [first], "kept": []}
    assert json.loads((here / first).read_text()) == {"kind": "other"}
    assert record.check(here) == []
    # made here after it was made there (a later rerun here): kept, listed, nothing moves
    _job(here, first, {"kind": "mine"}, 3_000_000.0)
    record.save(here)
    index_here = (here / record.INDEX).read_bytes()
    assert record.take(recorded, here) == {"taken": [], "rerun": [], "kept": [first]}
    assert (here / record.INDEX).read_bytes() == index_here
    assert json.loads((here / first).read_text()) == {"kind": "mine"}
    _job(here, first, {"kind": "other"}, 2_000_000.0)
    record.save(here)
    (here / first).write_text(json.dumps({"kind": "edited here"}))
    with pytest.raises(record.RecordError, match=f"{first}: differs between"):
        record.take(recorded, here)
    # a later rerun there from code that does not follow this file's commit: named
    _job(here, first, {"kind": "mine", "provenance": {"git_commit": "b" * 40}}, 2_500_000.0)
    record.save(here)
    _job(recorded, first, {"kind": "theirs", "provenance": {"git_commit": "c" * 40}},
         4_000_000.0)
    with pytest.raises(record.RecordError, match=f"{first}: its rerun there was made from "
                       f"commit {'c' * 40}, which does not follow"):
        record.take(recorded, here)


def test_take_names_what_it_cannot_vouch_for(recorded, tmp_path_factory):
    """A file edited by hand in the other checkout, a run without its job's record, and
    data that differ from this checkout's: named, and nothing is taken."""
    here = tmp_path_factory.mktemp("here")
    null = "results/cifar10/default/fresh_b_null/dfa/lam0/seed42.json"
    (recorded / null).write_text(json.dumps({"kind": "null", "edited": True}))
    with pytest.raises(record.RecordError, match=f"{null}: does not match the record"):
        record.take(recorded, here)
    assert not (here / "results").exists()
    (recorded / null).write_text(json.dumps(FILES[null]))  # back as its job wrote it
    (here / "data").mkdir()
    (here / "data/cifar10.json").write_text(json.dumps({"digest": "d", "rebuild_from": "x"}))
    assert record._data_of(here / "data/cifar10.json") == record._data_of(
        recorded / "data/cifar10.json")  # the same data from another copy
    (here / "data/cifar10.json").write_text(json.dumps({"digest": "another"}))
    with pytest.raises(record.RecordError, match="data/cifar10.json: the data the runs"):
        record.take(recorded, here)
    (here / "data/cifar10.json").unlink()
    (recorded / record.METADATA / record.record_name(null)).unlink()
    (recorded / record.SNAKEMAKE_METADATA / record.record_name(null)).unlink()
    with pytest.raises(record.RecordError, match="no record of its job"):
        record.take(recorded, here)


def test_an_edit_without_its_jobs_record_keeps_the_entry(recorded):
    """A record file edited where Snakemake has no record of its job (a clone before its
    restore): the index keeps the job's entry, and check names the file."""
    entry = json.loads((recorded / record.INDEX).read_text())["files"][f"{RUN}/metrics.json"]
    (recorded / record.SNAKEMAKE_METADATA / record.record_name(f"{RUN}/metrics.json")).unlink()
    (recorded / f"{RUN}/metrics.json").write_text(json.dumps({"kind": "TRAIN"}))
    assert record.save(recorded)["changed"] == 1
    assert json.loads((recorded / record.INDEX).read_text())["files"][
        f"{RUN}/metrics.json"] == entry
    assert any("does not match the record" in p for p in record.check(recorded))
