"""The study's compute estimate (credit_assign.planning.estimate), from a hand-made config."""

import json

import pytest
import yaml

from credit_assign.planning import catalog, estimate

ESTIMATE = {
    "jobs": [
        {"step": "train", "job": "dfa/lam0/seed1", "seconds": 60.0, "epochs": 10},
        {"step": "train", "job": "dfa/lam0/seed2", "seconds": 80.0, "epochs": 10},
        {"step": "train", "job": "fa/lam0/seed1", "seconds": 120.0, "epochs": 10},
        {"step": "fresh_b_null", "job": "dfa/lam0/seed1", "seconds": 5.0},
    ]
}
# A checked config's shape (every registered rule in the sweep, as checks.prepare fills it)
CONFIG = {
    "dataset": "cifar10",
    "training": {"epochs": 30, "per_method": {"fa": {"epochs": 100}}},
    "sweep": {m: [] for m in catalog.methods()}
    | {"seeds": [1, 2, 3], "dfa": [0, 0.01], "fa": [0], "bp": []},
    "study": {"seeds": [1, 2, 3]},
    "variants": {
        "long": {"kind": "departs", "methods": ["dfa"], "overrides": {"training": {"epochs": 60}}},
        "fa_x": {"kind": "open", "methods": ["fa"], "overrides": {}},
    },
}


def test_core_minutes_are_epochs_times_the_recorded_seconds_per_epoch(tmp_path):
    per_epoch = estimate.per_epoch_seconds(ESTIMATE)
    assert per_epoch == {"dfa": pytest.approx(7.0), "fa": pytest.approx(12.0)}
    est = estimate.core_minutes(CONFIG, per_epoch)
    # default: dfa 2 λ × 3 seeds × 30 epochs × 7 s; fa 3 seeds × 100 epochs × 12 s
    assert est["by_recipe"]["default"] == pytest.approx((6 * 30 * 7 + 3 * 100 * 12) / 60)
    assert est["by_recipe"]["long"] == pytest.approx(6 * 60 * 7 / 60)  # its own epochs
    assert est["by_recipe"]["fa_x"] == pytest.approx(3 * 100 * 12 / 60)
    assert est["runs"] == 6 + 3 + 6 + 3 and est["missing"] == []
    path = tmp_path / "estimate.json"
    path.write_text(json.dumps(ESTIMATE))
    assert f"{est['total']:.0f} core-minutes" in estimate.statement(CONFIG, path)
    assert "not estimated" in estimate.statement(CONFIG, tmp_path / "none.json")


def test_an_estimate_written_with_the_old_job_key_reads_the_same(tmp_path):
    """A job's step was recorded as ``rule`` before the key was renamed ``step`` (as in
    the committed bench/rebuild_estimate.json): the estimate and the report read both."""
    old = {"jobs": [{("rule" if k == "step" else k): v for k, v in job.items()}
                    for job in ESTIMATE["jobs"]]}
    assert all("step" not in job for job in old["jobs"])
    assert estimate.per_epoch_seconds(old) == estimate.per_epoch_seconds(ESTIMATE)
    assert [estimate.job_step(j) for j in old["jobs"]] == [
        "train", "train", "train", "fresh_b_null"]
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    (tmp_path / "old/estimate.json").write_text(json.dumps(old))
    (tmp_path / "new/estimate.json").write_text(json.dumps(ESTIMATE))
    assert estimate.statement(CONFIG, tmp_path / "old/estimate.json") == \
        estimate.statement(CONFIG, tmp_path / "new/estimate.json")
    committed = json.loads((estimate.ROOT / "bench/rebuild_estimate.json").read_text())
    bench = _rebuild_estimate()
    table = {"by_step": committed.get("by_step", committed.get("by_rule"))}
    text = bench.report(committed)
    assert "| step | jobs |" in text
    assert text == bench.report({k: v for k, v in committed.items()
                                 if k not in ("by_rule", "by_step")} | table)
    assert text == (estimate.ROOT / "docs/rebuild_estimate.md").read_text()


def test_cli_names_a_missing_config_file_and_prints_the_steps(capsys, tmp_path):
    """The command line: --help and a missing file are argparse's (exit 2, the file
    named), and --steps prints one line of targets per recipe."""
    with pytest.raises(SystemExit) as exc:
        estimate.main(["--help"])
    assert exc.value.code == 0
    assert "--steps" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        estimate.main([str(tmp_path / "nope.yaml")])
    assert exc.value.code == 2
    assert "nope.yaml does not exist" in capsys.readouterr().err
    assert estimate.main(["--steps", "config/config.yaml", "config/variants.yaml"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("results/cifar10/default/summary/")
    assert len(lines) == 1 + len(yaml.safe_load(open("config/variants.yaml"))["variants"])


def _rebuild_estimate():
    import importlib
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    return importlib.import_module("rebuild_estimate")


def test_rebuild_estimate_counts_a_stopped_epoch_at_its_runs_median():
    est = _rebuild_estimate()
    assert est.stalls([5.0, 5.2, 4.9, 5.1]) == {"epochs": 0, "excess_s": 0.0}
    # one epoch 200 s long in a run of ~5 s epochs: the process was stopped
    out = est.stalls([5.0, 5.0, 200.0, 5.0, 6.0])
    assert out["epochs"] == 1 and out["excess_s"] == pytest.approx(195.0)
    # slow but not stopped (another job beside it): counted as it was
    assert est.stalls([5.0, 5.0, 40.0, 5.0])["epochs"] == 0


def test_rebuild_report_sums_the_pieces_of_a_resumed_rebuild():
    est = _rebuild_estimate()
    piece = {
        "log": "a.snakemake.log",
        "start": "2026-12-01T10:00:00",
        "end": "2026-12-01T10:30:00",
        "wall_s": 1800.0,
        "jobs": {"train": 3, "total": 5},
        "finished": {"train": 2},
        "complete": False,
    }
    data = {
        "cores": 2,
        "recipes": "*",
        "work_s": 600.0,
        "bound_s": 300.0,
        "packed_s": 300.0,
        "by_step": {"train": {"jobs": 3, "seconds": 600.0, "longest_s": 200.0}},
        "measured": [piece, dict(piece, log="b.snakemake.log", wall_s=600.0, complete=True)],
    }
    text = est.report(data)
    assert "Measured in 2 pieces: 40.0 min" in text
    assert "config/variants.yaml" in text and "no (stopped" in text
    # the jobs a piece finished, not the ones it planned
    assert "| 30.0 | 2 | 0 | no (stopped" in text


def test_rebuild_measured_reads_a_snakemake_log(tmp_path):
    est = _rebuild_estimate()
    log = tmp_path / "run.snakemake.log"
    log.write_text(
        "Job stats:\njob      count\n-------  -------\ntrain          3\nall            1\n"
        "total          4\n\n"
        "[Tue Dec  1 10:00:00 2026]\nlocalrule train:\n"
        "[Tue Dec  1 10:10:00 2026]\nFinished jobid: 2 (Rule: train)\n1 of 4 steps (25%) done\n"
        "[Tue Dec  1 10:30:00 2026]\nFinished jobid: 3 (Rule: train)\n2 of 4 steps (50%) done\n"
    )
    run = est.measured(log)
    assert run["wall_s"] == 1800.0 and run["jobs"]["train"] == 3
    assert run["finished"] == {"train": 2} and run["complete"] is False


def test_rebuild_estimate_counts_every_epoch_of_a_resumed_job():
    """total_s holds only the last process; the job's time is every epoch it ran (a stopped
    one at the median) plus the last process's overhead — never negative."""
    est = _rebuild_estimate()
    train = [5.0] * 30
    train[3] = 200.0  # stopped, in an earlier process
    t = {"epoch_train_s": train, "epoch_diagnostics_s": [0.5] * 30,
         "epochs_this_process": 2, "resumed_from_epoch": 28, "total_s": 12.0}
    out = est.train_seconds(t)
    assert out["seconds"] == pytest.approx(30 * 5.5 + 1.0)  # 1 s of start-up overhead
    assert out["recorded_s"] == pytest.approx(30 * 5.5 + 195.0 + 1.0)
    assert out["stalled_epochs"] == 1 and out["resumed"] is True


def test_rebuild_measured_reads_the_job_stats_table_not_what_follows(tmp_path):
    est = _rebuild_estimate()
    log = tmp_path / "run.snakemake.log"
    log.write_text(
        "Building DAG of jobs...\nJob stats:\njob      count\n-------  -------\n"
        "train          2\ntotal          2\n\nSelect jobs to execute...\n\n"
        "[Tue Dec  1 10:00:00 2026]\nlocalrule train:\n    jobid: 1\n\n"
        "[Tue Dec  1 10:05:00 2026]\nFinished jobid: 1 (Rule: train)\n"
        "1 of 2 steps (50%) done\n\nwildcards 7\n\n"
    )
    assert est.measured(log)["jobs"] == {"train": 2, "total": 2}


def test_the_claims_compute_counts_their_runs_at_the_recorded_times(tmp_path):
    """The claims' runs (every run the claims file names, at the config's epochs per
    method) at the recorded per-epoch times, the EP probes at the median recorded probe."""
    spec = yaml.safe_load(open(estimate.ROOT / "config" / "claims.yaml"))
    spec["seeds"] = {"fresh": [5, 6], "study": [1], "ep_fresh": [7]}
    spec["decision"]["method"] = "t"  # a bootstrap on 2 seeds is refused (version 1)
    spec["runs"] = {"dfa": [0]}
    spec["claims"] = [c for c in spec["claims"] if c["id"] in ("fa_over_dfa", "ep_reaches_block0")]
    (tmp_path / "claims.yaml").write_text(yaml.safe_dump(spec, allow_unicode=True))
    recorded = {"jobs": ESTIMATE["jobs"] + [{"step": "ep_stack_probe", "seconds": 600.0},
                                            {"step": "ep_stack_probe", "seconds": 900.0}]}
    config = CONFIG | {"claims": {"file": str(tmp_path / "claims.yaml")},
                       "ep_stack": {"corpora": ["tinyshakespeare"],
                                    "pretrain": {"precision": "float32"},
                                    "probe": {"free_steps": [150, 400]}},
                       "model": {"depth": 4}}
    est = estimate.claims_core_minutes(config, recorded)
    # dfa λ=0 on seeds 5, 6, 1 (30 epochs at 7 s) and dfa λ=1e-2 + fa on seed 1 (FA's claim)
    assert est["runs"] == 5
    assert est["train"] == pytest.approx((4 * 30 * 7.0 + 100 * 12.0) / 60)
    assert (est["probes"], est["ep"]) == (1, pytest.approx(750.0 / 60))


def test_rebuild_estimate_reads_the_recipe_folders(tmp_path, monkeypatch):
    """--recipes picks results/<dataset>/<recipe> folders: default (the stated recipe)
    or '*' (the study's too); each job names its recipe. An estimate written before the
    recipe folders ("datasets": "cifar10*") still reads as the study's."""
    est = _rebuild_estimate()
    timings = {"epoch_train_s": [5.0] * 4, "epoch_diagnostics_s": [0.5] * 4,
               "epochs_this_process": 4, "resumed_from_epoch": None, "total_s": 23.0}
    monkeypatch.setattr(est, "read_result", lambda path, kind: timings)
    for recipe in ("default", "const_lr"):
        run = tmp_path / "results/cifar10" / recipe / "train/dfa/lam0/seed1"
        run.mkdir(parents=True)
        (run / "timings.json").write_text("{}")
    results = tmp_path / "results"
    stated = est.jobs(results, results)
    assert [(j["step"], j["recipe"], j["job"]) for j in stated] == [
        ("train", "default", "dfa/lam0/seed1")]
    assert {j["recipe"] for j in est.jobs(results, results, recipes="*")} == {
        "default", "const_lr"}
    data = {"cores": 2, "measured": {"log": "a.log", "start": "2026-12-01T10:00:00",
                                     "end": "2026-12-01T10:10:00", "wall_s": 600.0,
                                     "jobs": {"train": 2, "total": 2}, "complete": True}}
    assert "config/variants.yaml" not in est._measured_text(data)
    assert "config/variants.yaml" in est._measured_text(data | {"recipes": "*"})
    assert "config/variants.yaml" in est._measured_text(data | {"datasets": "cifar10*"})


def test_the_ep_question_is_timed_from_its_recorded_jobs(tmp_path):
    """estimate --ep-question: the recorded fixed-point jobs' minutes and the rest at
    their median (nothing typed: the timings in the record)."""
    import json

    from credit_assign.infra import paths
    from credit_assign.planning import estimate, targets

    config = {"claims": {"ep": "config/claims_ep.yaml"}}
    timings = targets.ep_question_runs(config, paths.EP_FIXED_POINT_TIMINGS)
    assert estimate.ep_question_core_minutes(config, tmp_path)["per_job"] is None
    for t, minutes in zip(timings[:3], (30, 50, 40), strict=False):
        (tmp_path / t).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / t).write_text(json.dumps({  # a resumed job: total is its last process's
            "total": 1.0, "threads": 1, "pretrain": minutes * 20,
            "probes": [{"batch": b, "total": minutes * 40 / 3} for b in range(3)]}))
    est = estimate.ep_question_core_minutes(config, tmp_path)
    assert (est["done"], est["per_job"]) == (3, 40)
    assert est["done_minutes"] == pytest.approx(120)
    assert est["todo_minutes"] == 40 * (len(timings) - 3)
