"""The study's compute estimate (credit_assign.pipeline.compute), from a hand-made config."""

import json

import pytest
import yaml

from credit_assign.pipeline import catalog, compute

ESTIMATE = {"jobs": [{"rule": "train", "job": "dfa/lam0/seed1", "seconds": 60.0, "epochs": 10},
                     {"rule": "train", "job": "dfa/lam0/seed2", "seconds": 80.0, "epochs": 10},
                     {"rule": "train", "job": "fa/lam0/seed1", "seconds": 120.0, "epochs": 10},
                     {"rule": "fresh_b_null", "job": "dfa/lam0/seed1", "seconds": 5.0}]}
# A checked config's shape (every registered rule in the sweep, as checks.prepare fills it)
CONFIG = {"dataset": "cifar10",
          "training": {"epochs": 30, "per_method": {"fa": {"epochs": 100}}},
          "sweep": {m: [] for m in catalog.methods()}
          | {"seeds": [1, 2, 3], "dfa": [0, 0.01], "fa": [0], "bp": []},
          "study": {"seeds": [1, 2, 3]},
          "variants": {"long": {"kind": "departs", "methods": ["dfa"],
                                "overrides": {"training": {"epochs": 60}}},
                       "fa_x": {"kind": "open", "methods": ["fa"], "overrides": {}}}}


def test_core_minutes_are_epochs_times_the_recorded_seconds_per_epoch(tmp_path):
    per_epoch = compute.per_epoch_seconds(ESTIMATE)
    assert per_epoch == {"dfa": pytest.approx(7.0), "fa": pytest.approx(12.0)}
    est = compute.core_minutes(CONFIG, per_epoch)
    # default: dfa 2 λ × 3 seeds × 30 epochs × 7 s; fa 3 seeds × 100 epochs × 12 s
    assert est["by_recipe"]["default"] == pytest.approx((6 * 30 * 7 + 3 * 100 * 12) / 60)
    assert est["by_recipe"]["long"] == pytest.approx(6 * 60 * 7 / 60)  # its own epochs
    assert est["by_recipe"]["fa_x"] == pytest.approx(3 * 100 * 12 / 60)
    assert est["runs"] == 6 + 3 + 6 + 3 and est["missing"] == []
    path = tmp_path / "estimate.json"
    path.write_text(json.dumps(ESTIMATE))
    assert f"{est['total']:.0f} core-minutes" in compute.statement(CONFIG, path)
    assert "not estimated" in compute.statement(CONFIG, tmp_path / "none.json")


def test_cli_names_a_missing_config_file_and_prints_the_steps(capsys, tmp_path):
    """The command line: --help and a missing file are argparse's (exit 2, the file
    named), and --steps prints one line of targets per recipe."""
    with pytest.raises(SystemExit) as exc:
        compute.main(["--help"])
    assert exc.value.code == 0
    assert "--steps" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        compute.main([str(tmp_path / "nope.yaml")])
    assert exc.value.code == 2
    assert "nope.yaml does not exist" in capsys.readouterr().err
    assert compute.main(["--steps", "config/config.yaml", "config/variants.yaml"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("results/cifar10/summary/")
    assert len(lines) == 1 + len(yaml.safe_load(open("config/variants.yaml"))["variants"])
