"""Result files, reproducibility and resume of a training job."""

import json
import math

import pytest
from conftest import tiny_run_config

from credit_assign.infra import data
from credit_assign.infra.files import sanitize
from credit_assign.infra.results import ResultError, read_result, validate_result
from credit_assign.jobs import train


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "digits.pt"
    data.prepare("digits", None, path.parent, path)
    return path


def test_sanitize_turns_nonfinite_into_null_with_a_flag():
    clean, flags = sanitize({"a": [1.0, math.nan], "b": {"c": math.inf}, "d": 2})
    assert clean == {"a": [1.0, None], "b": {"c": None}, "d": 2}
    assert flags == [{"path": "a[1]", "value": "nan"}, {"path": "b.c", "value": "inf"}]


@pytest.mark.parametrize("method", ["bp", "dfa", "fa", "frozen"])
def test_training_writes_a_valid_result_and_the_same_json_twice(tmp_path, digits, method):
    run = tiny_run_config(method)
    first = train(run, digits, tmp_path / "a.json", tmp_path / "a.pt", threads=1)
    second = train(run, digits, tmp_path / "b.json", tmp_path / "b.pt", threads=1)
    read_result(tmp_path / "a.json", "train")
    assert first == second
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert first["config"] == run and first["provenance"]["device"]["type"] == "cpu"
    assert first["history"]["epoch"] == [1, 2, 3]
    assert len(first["history"]["cosine"][0]) == 3  # h_0, h_1, h_2
    if method == "bp":
        assert first["final"]["deep_cosine"] == pytest.approx(1.0, abs=1e-9)
    if method == "frozen":  # its blocks get no teaching signal: not applicable, not 1
        assert first["final"]["deep_cosine"] is None
        assert first["final"]["cosine"][1:] == [None, None] and not first["nonfinite"]


def test_a_model_saved_with_its_options_under_the_old_key_still_loads(tmp_path, digits):
    """A run config written before the method's options were named ``options`` holds them
    as ``rule`` (metrics.json's config, model.pt's and snapshots.pt's run): the one
    reader, assemble.method_options, takes either, so an old model loads as it trained."""
    import torch

    from credit_assign.infra.checkpoints import atomic_torch_save, load_checkpoint
    from credit_assign.science.assemble import load_trained, method_options

    run = tiny_run_config("dfa", epochs=1)
    run["options"] = {"feedback_scale": "fan_in", "error_reduction": "sum"}
    train(run, digits, tmp_path / "m.json", tmp_path / "m.pt", threads=1)
    saved = load_checkpoint(tmp_path / "m.pt", "trained model")
    old_run = {("rule" if k == "options" else k): v for k, v in saved["run"].items()}
    assert "options" not in old_run
    atomic_torch_save({**saved, "run": old_run}, tmp_path / "old.pt")

    assert method_options(old_run) == method_options(saved["run"]) == run["options"]
    _, new_model, new_rule, _ = load_trained(tmp_path / "m.pt", "cpu")
    got_run, old_model, old_rule, _ = load_trained(tmp_path / "old.pt", "cpu")
    assert got_run == old_run
    assert old_rule.options == new_rule.options
    assert old_rule.options.feedback_scale == "fan_in"
    assert all(torch.equal(a, b) for a, b in zip(old_rule.feedback, new_rule.feedback,
                                                  strict=True))
    assert all(torch.equal(a, b) for a, b in zip(old_model.state_dict().values(),
                                                  new_model.state_dict().values(), strict=True))


def test_interrupted_training_resumes_to_the_same_result(tmp_path, digits, monkeypatch):
    run = tiny_run_config("dfa", epochs=4)
    train(run, digits, tmp_path / "ref.json", tmp_path / "ref.pt", threads=1)

    import credit_assign.science.training as train_module

    calls = {"n": 0}
    real_evaluate = train_module.evaluate

    def dies_in_epoch_3(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt("simulated kill")
        return real_evaluate(*args, **kwargs)

    resume = tmp_path / "resume.pt"
    monkeypatch.setattr(train_module, "evaluate", dies_in_epoch_3)
    with pytest.raises(KeyboardInterrupt):
        train(run, digits, tmp_path / "r.json", tmp_path / "r.pt", resume_path=resume)
    assert resume.exists() and not (tmp_path / "r.json").exists()
    monkeypatch.setattr(train_module, "evaluate", real_evaluate)
    train(run, digits, tmp_path / "r.json", tmp_path / "r.pt", resume_path=resume,
          timings_out=tmp_path / "t.json")
    assert read_result(tmp_path / "t.json", "train_timings")["resumed_from_epoch"] == 2
    assert (tmp_path / "r.json").read_bytes() == (tmp_path / "ref.json").read_bytes()
    assert not resume.exists()  # removed once the outputs are complete


def _killed_in_epoch(n, run, digits, out, monkeypatch):
    """Train ``run`` until evaluate() is called the n-th time, then die: (resume path)."""
    import credit_assign.science.training as train_module

    calls = {"n": 0}
    real_evaluate = train_module.evaluate

    def dies(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == n:
            raise KeyboardInterrupt("simulated kill")
        return real_evaluate(*args, **kwargs)

    monkeypatch.setattr(train_module, "evaluate", dies)
    with pytest.raises(KeyboardInterrupt):
        train(run, digits, out / "m.json", out / "m.pt", resume_path=out / "resume.pt")
    monkeypatch.setattr(train_module, "evaluate", real_evaluate)
    return out / "resume.pt"


def _break_truncate(resume):
    resume.write_bytes(resume.read_bytes()[:1000])


def _break_pickle(resume):  # bytes from elsewhere: a pickle that would run code
    import pickle

    class Payload:
        def __reduce__(self):
            return (print, ("PAYLOAD",))

    resume.write_bytes(pickle.dumps(Payload()))


def _break_other_code(resume, monkeypatch=None):
    import torch

    state = torch.load(resume, weights_only=True)
    state["written_for"]["code"] = "0" * 64  # written by another version of the library
    torch.save(state, resume)


def _break_other_snapshots(resume):
    import torch

    state = torch.load(resume, weights_only=True)
    state["written_for"]["snapshot_epochs"] = [1]
    torch.save(state, resume)


def _break_old_format(resume):
    import torch

    torch.save({"run": tiny_run_config(lam=0.5)}, resume)  # before resume states said what for


@pytest.mark.parametrize("damage, reason", [
    (_break_truncate, "unreadable"), (_break_pickle, "unreadable"),
    (_break_other_code, "another code"), (_break_other_snapshots, "another snapshot_epochs"),
    (_break_old_format, "another code, run, snapshot_epochs"),
])
def test_unusable_resume_state_is_moved_aside_and_the_job_completes(
        tmp_path, digits, monkeypatch, caplog, capsys, damage, reason):
    run = tiny_run_config("dfa", epochs=3)
    train(run, digits, tmp_path / "ref.json", tmp_path / "ref.pt")
    resume = _killed_in_epoch(2, run, digits, tmp_path, monkeypatch)
    damage(resume)
    train(run, digits, tmp_path / "m.json", tmp_path / "m.pt", resume_path=resume,
          timings_out=tmp_path / "t.json")
    assert read_result(tmp_path / "t.json", "train_timings")["resumed_from_epoch"] is None
    assert (tmp_path / "m.json").read_bytes() == (tmp_path / "ref.json").read_bytes()
    assert f"not resuming from {resume}" in caplog.text and reason in caplog.text
    assert (tmp_path / "resume.pt.rejected").exists() and not resume.exists()
    assert "PAYLOAD" not in capsys.readouterr().out


def test_corrupt_model_checkpoint_is_named_with_what_to_do(tmp_path, digits):
    from credit_assign.infra.files import CorruptFileError
    from credit_assign.jobs import fresh_b_null as fresh_b_null_job

    train(tiny_run_config(epochs=1), digits, tmp_path / "m.json", tmp_path / "m.pt")
    (tmp_path / "m.pt").write_bytes((tmp_path / "m.pt").read_bytes()[:500])
    with pytest.raises(CorruptFileError, match=r"trained model .*m\.pt .*Delete it and rerun"):
        fresh_b_null_job(tmp_path / "m.pt", digits, 2, tmp_path / "null.json")
    with pytest.raises(FileNotFoundError, match=r"missing\.pt is missing: rerun snakemake"):
        fresh_b_null_job(tmp_path / "missing.pt", digits, 2, tmp_path / "null.json")


def test_full_disk_names_the_file_and_keeps_the_last_good_one(tmp_path, monkeypatch):
    import errno
    import os

    from credit_assign.infra import checkpoints, files

    target = tmp_path / "state.pt"
    checkpoints.atomic_torch_save({"ok": 1}, target)
    good = target.read_bytes()

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(files.WriteError,
                       match=r"cannot write .*state\.pt: the disk is full"):
        checkpoints.atomic_torch_save({"ok": 2}, target)
    with pytest.raises(files.WriteError, match=r"cannot write .*m\.json: the disk is full"):
        files.atomic_write_text(tmp_path / "m.json", "{}")
    assert target.read_bytes() == good
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.pt"]  # no temp files left
    # what the block reads is not the write: a missing input names itself (errors=()),
    # and the file written before is still there
    monkeypatch.undo()
    with pytest.raises(FileNotFoundError, match="missing.pdf"), \
            files.atomic_open(target, "wb", errors=()) as fh:
        fh.write((tmp_path / "missing.pdf").read_bytes())
    assert target.read_bytes() == good
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.pt"]


def test_truncated_result_is_named_in_the_error(tmp_path, digits):
    train(tiny_run_config(epochs=1), digits, tmp_path / "m.json", tmp_path / "m.pt")
    text = (tmp_path / "m.json").read_text()
    (tmp_path / "m.json").write_text(text[: len(text) // 2])
    with pytest.raises(ResultError, match=r"m\.json: not valid JSON"):
        read_result(tmp_path / "m.json", "train")


def test_hand_edited_result_fails_schema_with_the_key(tmp_path, digits):
    result = train(tiny_run_config(epochs=2), digits, tmp_path / "m.json", tmp_path / "m.pt")
    broken = json.loads(json.dumps(result))
    broken["history"]["test_acc"][1] = "high"
    with pytest.raises(ResultError, match="history/test_acc/1"):
        validate_result(broken, "train", source="m.json")
    broken = json.loads(json.dumps(result))
    broken["history"]["deep_cosine"].pop()
    with pytest.raises(ResultError, match="one entry per epoch"):
        validate_result(broken, "train", source="m.json")


def test_fresh_b_null_differs_from_trained_feedback(tmp_path, digits):
    from credit_assign.jobs import fresh_b_null as fresh_b_null_job

    train(tiny_run_config(epochs=2), digits, tmp_path / "m.json", tmp_path / "m.pt")
    null = fresh_b_null_job(tmp_path / "m.pt", digits, 4, tmp_path / "null.json")
    read_result(tmp_path / "null.json", "fresh_b_null")
    draws = null["fresh"]["deep_cosine"]
    assert len(set(draws)) == 4
    import numpy as np

    assert null["fresh"]["deep_cosine_std"] == pytest.approx(np.std(draws, ddof=1))
    metrics = json.loads((tmp_path / "m.json").read_text())
    assert null["trained"]["deep_cosine"] == pytest.approx(metrics["final"]["deep_cosine"])


def test_a_failure_that_repeats_on_retry_says_retrying_cannot_help(tmp_path):
    from types import SimpleNamespace

    from credit_assign.infra.snakejob import snakemake_job

    log = tmp_path / "logs" / "train.log"

    def attempt(n, error):
        smk = SimpleNamespace(log=[str(log)], threads=1, attempt=n)
        with pytest.raises(type(error)):
            with snakemake_job(smk):
                raise error

    attempt(1, ValueError("bad data in x.png"))
    attempt(2, ValueError("bad data in x.png"))
    text = log.read_text()
    assert "attempt 1" in text and "---- attempt 2 of this job ----" in text  # both kept
    assert "failed exactly as the one before" in text
    with snakemake_job(SimpleNamespace(log=[str(log)], threads=1, attempt=3)):
        pass
    assert not (tmp_path / "logs" / "train.log.failures").exists()


def test_evaluation_jobs_fall_back_to_the_cpu_where_training_may_not(monkeypatch, caplog):
    import torch

    from credit_assign.infra.device import resolve_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("cuda", cpu_fallback=True).type == "cpu"
    assert "no CUDA device" in caplog.text
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        resolve_device("cuda")


def test_temp_files_of_a_killed_write_are_removed_when_the_job_reruns(tmp_path):
    from types import SimpleNamespace

    from credit_assign.infra.snakejob import snakemake_job

    out = tmp_path / "r" / "metrics.json"
    out.parent.mkdir()
    left = [out.parent / ".metrics.json.abc123.tmp", out.parent / ".resume.pt.x1.tmp"]
    other = out.parent / ".other.json.zz.tmp"  # not this job's
    for p in (*left, other):
        p.write_text("partial")
    smk = SimpleNamespace(log=[], threads=1, attempt=1, output=[str(out)],
                          params=SimpleNamespace(resume=str(out.parent / "resume.pt")))
    with snakemake_job(smk):
        pass
    assert not any(p.exists() for p in left) and other.exists()


def test_measurement_variants_reproduce_the_reported_numbers_and_differ_as_defined(
        tmp_path, digits):
    import torch

    from credit_assign.analysis.aggregate import measurement_table
    from credit_assign.jobs import measure as measure_job
    from credit_assign.science.measurement import measurement_names

    metrics = train(tiny_run_config("dfa", epochs=2), digits, tmp_path / "m.json",
                    tmp_path / "m.pt")
    result = measure_job(tmp_path / "m.pt", digits, 64, tmp_path / "measure.json",
                         batch_sizes=[100, 16])
    read_result(tmp_path / "measure.json", "measure")  # validates against the schema
    v, sets = result["variants"], result["sets"]
    assert list(v) == measurement_names([100, 16])
    # the stratified variant is what training reported for the final epoch
    assert v["stratified"]["h_L_norm"] == pytest.approx(metrics["final"]["h_L_norm_median"])
    assert v["stratified"]["deep_cosine"] == pytest.approx(metrics["final"]["deep_cosine"])
    assert v["stratified"]["n"] == v["mixed_n"]["n"] == 200 and v["one_batch"]["n"] == 64
    # the sets are recorded: the mixed draw covers every digit, one_batch is its start
    assert sets["mixed_n"]["classes"] == sets["mixed_n"]["classes_in_test_set"] == 10
    assert sets["one_batch"]["seed"] == sets["mixed_n"]["seed"] == 0
    # the one-batch norm is a Frobenius norm: about √batch × the per-sample median
    ratio = v["one_batch"]["h_L_norm"] / v["stratified"]["h_L_norm"]
    assert 0.5 * 64 ** 0.5 < ratio < 2 * 64 ** 0.5
    # the epsilon cosines at each batch size, on the stratified set; ‖h_L‖ not remeasured
    assert v["eps_cos_b16"]["batch_sizes_used"] == [8, 16]  # 200 = 12 × 16 + 8
    assert v["eps_cos_b100"]["batch_sizes_used"] == [100]
    assert v["eps_cos_b16"]["h_L_norm"] is None and v["flat"]["set"] == "stratified"
    assert len(v["eps_den_b16"]["cosine"]) == 3  # l0, l1, l2
    frame = measurement_table([result])
    assert list(frame.measurement) == measurement_names([100, 16])
    assert {"cosine_l0", "cosine_l2"} <= set(frame.columns)
    assert not torch.isnan(torch.tensor(frame.deep_cosine.to_numpy(float))).any()


def test_a_result_records_the_code_its_job_started_with(tmp_path, monkeypatch):
    """A job's provenance is the code version read when it started (the code it
    imported), not when it finished: a commit, or an edit, made while it ran is not
    the code that ran."""
    from credit_assign import jobs

    versions = iter([{"git_commit": "a" * 40, "git_dirty": False},
                     {"git_commit": "b" * 40, "git_dirty": True}])
    monkeypatch.setattr(jobs, "code_version", lambda: next(versions))
    job = jobs.Job("primer_check", tmp_path / "x.json")
    seen = {}
    monkeypatch.setattr(jobs, "write_result", lambda result, *a, **k: seen.update(result))
    job.finish({"body": 1}, timings=False)
    assert seen["provenance"]["code"] == {"git_commit": "a" * 40, "git_dirty": False}
