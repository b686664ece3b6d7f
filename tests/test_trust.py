"""What a rerun builds after a change, and what it refuses to trust: the data a job
read, the tables a figure reads, the strings that reach TeX, the values a config means.
The workflow tests run on a tiny CIFAR-10 layout (a few 8×8 images per class)."""

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image
from test_workflow import fresh_copy, job_counts, snakemake

TINY_CIFAR = {
    "dataset": "cifar10",
    "model": {"width": 8, "depth": 1},
    "training": {"epochs": 1, "batch_size": 16, "augmentation": "none"},
    "sweep": {"seeds": [1], "dfa": [0], "bp": [0], "frozen": [], "fa": [], "np": []},
    "diagnostics": {"n_samples": 10},
    "fresh_b_null": {"draws": 2},
    "reproduction": {"reference": ""},
    "ep_stack": {"corpora": []},
    "probes": {"epochs": []},
}
FIG4 = "paper/figures/fig4_penalty_rescue.pdf"


def image_folder(root: Path, per_class: int, seed: int,
                 classes=("cat", "dog", "frog")) -> Path:
    """A CIFAR-10-like image folder: train/<class>/*.png, test/<class>/*.png, 8×8 RGB."""
    rng = np.random.default_rng(seed)
    for split in ("train", "test"):
        for cls in classes:
            d = root / split / cls
            d.mkdir(parents=True, exist_ok=True)
            for i in range(per_class):
                pixels = rng.integers(0, 255, (8, 8, 3), dtype=np.uint8)
                Image.fromarray(pixels).save(d / f"{i}.png")
    return root


def write_config(repo: Path, source: Path, **changes) -> str:
    cfg = json.loads(json.dumps(TINY_CIFAR))
    cfg["data"] = {"cifar10": {"source": str(source)}}
    for key, value in changes.items():
        section, option = key.split("__")
        cfg[section][option] = value
    (repo / "config" / "tiny_cifar.yaml").write_text(yaml.safe_dump(cfg))
    return "config/tiny_cifar.yaml"


@pytest.fixture
def cifar_run(tmp_path):
    """A finished tiny CIFAR-10 workflow, its image folder and its config."""
    repo = fresh_copy(tmp_path / "repo")
    first = image_folder(tmp_path / "images_a", per_class=6, seed=0)
    cfg = write_config(repo, first)
    snakemake(repo, "--configfile", cfg)
    return repo, tmp_path


def n_train(repo: Path) -> set[int]:
    runs = repo.glob("results/cifar10/train/*/*/*/metrics.json")
    return {json.loads(p.read_text())["data"]["n_train"] for p in runs}


@pytest.mark.slow
def test_a_changed_data_source_reruns_its_readers_in_one_run(cifar_run):
    """Round three, case 1: a changed data.cifar10.source with a figure asked for used to
    run prepare_data alone ("1 of 1 steps done", rc 0, no figure, models of the old data)."""
    repo, tmp = cifar_run
    (repo / FIG4).unlink()
    second = image_folder(tmp / "images_b", per_class=8, seed=1)
    cfg = write_config(repo, second)
    out = snakemake(repo, FIG4, "--configfile", cfg)
    assert job_counts(out.stdout + out.stderr) == {
        "prepare_data": 1, "train": 2, "fresh_b_null": 1, "aggregate": 1,
        "fig4_penalty_rescue": 1, "total": 6}
    assert (repo / FIG4).exists() and n_train(repo) == {24}
    again = snakemake(repo, FIG4, "--configfile", cfg, "-n")
    assert "Nothing to be done" in again.stdout + again.stderr


@pytest.mark.slow
def test_a_source_changed_in_place_reruns_its_readers(cifar_run):
    repo, tmp = cifar_run
    extra = tmp / "images_a" / "train" / "cat" / "extra.png"
    Image.fromarray(np.zeros((8, 8, 3), dtype=np.uint8)).save(extra)
    out = snakemake(repo, "--configfile", "config/tiny_cifar.yaml")
    counts = job_counts(out.stdout + out.stderr)
    assert counts["prepare_data"] == 1 and counts["train"] == 2
    assert n_train(repo) == {19}
    again = snakemake(repo, "--configfile", "config/tiny_cifar.yaml", "-n")
    assert "Nothing to be done" in again.stdout + again.stderr


@pytest.mark.slow
def test_a_deleted_cache_reruns_nothing_and_is_rebuilt_by_the_next_reader(cifar_run):
    """The property round two needed: a deleted cache whose source is unchanged retrains
    nothing; with a λ added at the same time, exactly the new λ's jobs run (the first of
    them rebuilds the cache) and the old models stay."""
    repo, _ = cifar_run
    cache = repo / "data" / "cifar10.pt"
    old_model = repo / "results/cifar10/train/dfa/lam0/seed1/model.pt"
    stamp = old_model.stat().st_mtime_ns
    cache.unlink()
    out = snakemake(repo, "--configfile", "config/tiny_cifar.yaml", "-n")
    assert "Nothing to be done" in out.stdout + out.stderr
    cfg = write_config(repo, Path(yaml.safe_load((repo / "config/tiny_cifar.yaml").read_text())
                                  ["data"]["cifar10"]["source"]), sweep__dfa=[0, 1.0e-2])
    out = snakemake(repo, "--configfile", cfg)
    counts = job_counts(out.stdout + out.stderr)
    assert counts["train"] == 1 and counts["fresh_b_null"] == 1 and "prepare_data" not in counts
    assert cache.exists() and old_model.stat().st_mtime_ns == stamp
    again = snakemake(repo, "--configfile", cfg, "-n")
    assert "Nothing to be done" in again.stdout + again.stderr
