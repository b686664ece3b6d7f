"""Result files, reproducibility and resume of a training job."""

import json
import math

import pytest

from credit_assign import data
from credit_assign.results import ResultError, read_result, validate_result
from credit_assign.runtime import sanitize
from credit_assign.train import train


def tiny_run(method="dfa", lam=0.01, epochs=3, **training):
    return {
        "dataset": "digits", "method": method, "lam": lam, "seed": 7,
        "model": {"width": 16, "depth": 2, "branch_init_std": 0.01, "final_norm": True},
        "training": {"epochs": epochs, "batch_size": 128, "lr": 1e-3, "weight_decay": 0.01,
                     "schedule_step": "batch", "augmentation": "crop_flip", "crop_padding": 1,
                     "nonfinite_policy": "continue", "device": "cpu", **training},
        "rule": {"feedback_scale": "unit", "error_reduction": "mean", "train_embedding": True,
                 "frozen_embedding_signal": "bp"},
        "diagnostics": {"n_samples": 200, "seed": 0, "eval_batch_size": 256},
    }


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
    run = tiny_run(method)
    first = train(run, digits, tmp_path / "a.json", tmp_path / "a.pt", threads=1)
    second = train(run, digits, tmp_path / "b.json", tmp_path / "b.pt", threads=1)
    read_result(tmp_path / "a.json", "train")
    assert first == second
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert first["config"] == run and first["provenance"]["device"]["type"] == "cpu"
    assert first["history"]["epoch"] == [1, 2, 3]
    assert len(first["history"]["cosine"][0]) == 3  # h_0, h_1, h_2
    if method in ("bp", "frozen"):
        assert first["final"]["deep_cosine"] == pytest.approx(1.0, abs=1e-9)


def test_interrupted_training_resumes_to_the_same_result(tmp_path, digits, monkeypatch):
    run = tiny_run("dfa", epochs=4)
    train(run, digits, tmp_path / "ref.json", tmp_path / "ref.pt", threads=1)

    import credit_assign.train as train_module

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


def test_resume_state_from_another_config_is_ignored(tmp_path, digits):
    resume = tmp_path / "resume.pt"
    import torch

    torch.save({"run": tiny_run(lam=0.5)}, resume)
    train(tiny_run(epochs=1), digits, tmp_path / "m.json", tmp_path / "m.pt",
          resume_path=resume, timings_out=tmp_path / "t.json")
    assert read_result(tmp_path / "t.json", "train_timings")["resumed_from_epoch"] is None


def test_truncated_result_is_named_in_the_error(tmp_path, digits):
    train(tiny_run(epochs=1), digits, tmp_path / "m.json", tmp_path / "m.pt")
    text = (tmp_path / "m.json").read_text()
    (tmp_path / "m.json").write_text(text[: len(text) // 2])
    with pytest.raises(ResultError, match=r"m\.json: not valid JSON"):
        read_result(tmp_path / "m.json", "train")


def test_hand_edited_result_fails_schema_with_the_key(tmp_path, digits):
    result = train(tiny_run(epochs=2), digits, tmp_path / "m.json", tmp_path / "m.pt")
    broken = json.loads(json.dumps(result))
    broken["history"]["test_acc"][1] = "high"
    with pytest.raises(ResultError, match="history/test_acc/1"):
        validate_result(broken, "train", source="m.json")
    broken = json.loads(json.dumps(result))
    broken["history"]["deep_cosine"].pop()
    with pytest.raises(ResultError, match="one entry per epoch"):
        validate_result(broken, "train", source="m.json")


def test_fresh_b_null_differs_from_trained_feedback(tmp_path, digits):
    from credit_assign.nulls import fresh_b_null_job

    train(tiny_run(epochs=2), digits, tmp_path / "m.json", tmp_path / "m.pt")
    null = fresh_b_null_job(tmp_path / "m.pt", digits, 4, tmp_path / "null.json")
    read_result(tmp_path / "null.json", "fresh_b_null")
    draws = null["fresh"]["deep_cosine"]
    assert len(set(draws)) == 4
    import numpy as np

    assert null["fresh"]["deep_cosine_std"] == pytest.approx(np.std(draws, ddof=1))
    metrics = json.loads((tmp_path / "m.json").read_text())
    assert null["trained"]["deep_cosine"] == pytest.approx(metrics["final"]["deep_cosine"])
