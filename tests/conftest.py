"""Shared test setup: src/ first on sys.path, one torch thread, the common fixtures, and
the helpers more than one test module uses (``from conftest import ...``; pytest puts
tests/ on sys.path)."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)


# ---- test tiers ----------------------------------------------------------------------
# What a test starts, as its marker (pyproject.toml lists them); each of these is also
# `slow`, so `pytest -m "not slow"` (make test-fast) runs the tests that start nothing.
TIERS = ("workflow", "cluster", "build", "compile", "process", "figure", "job")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if any(item.get_closest_marker(t) for t in TIERS):
            item.add_marker(pytest.mark.slow)


# TeX for the paper tests: CI installs it and sets CREDIT_ASSIGN_REQUIRE_TEX (a missing
# TeX then fails the test instead of skipping it)
TEX_PROGRAMS = ("latexmk", "pdflatex", "pdftoppm", "pdftotext")
HAVE_TEX = all(shutil.which(t) for t in TEX_PROGRAMS)


def needs_tex(test):
    """A test that builds a PDF with TeX: marked ``build``, skipped without TeX."""
    skip = pytest.mark.skipif(not HAVE_TEX and not os.environ.get("CREDIT_ASSIGN_REQUIRE_TEX"),
                              reason=f"needs {', '.join(TEX_PROGRAMS)} (CI installs them)")
    return pytest.mark.build(skip(test))


# ---- fixtures ------------------------------------------------------------------------

@pytest.fixture
def small_model():
    from credit_assign.science.model import ResidualMLP

    torch.manual_seed(0)
    return ResidualMLP(in_features=12, width=8, depth=3, n_classes=4).double()


@pytest.fixture
def batch():
    g = torch.Generator().manual_seed(1)
    return torch.randn(16, 12, generator=g, dtype=torch.float64), torch.randint(0, 4, (16,),
                                                                                 generator=g)


# ---- the workflow in a temporary copy of the repo ------------------------------------

# What fresh_copy copies: the workflow's files, as a fresh clone has them.
COPY = ("Snakefile", "workflow", "scripts", "src", "config", "profiles", "envs", "paper/ms.tex")

# The tiny digits config the workflow tests run (seconds per job).
TINY = {
    "dataset": "digits",
    "model": {"width": 16, "depth": 2},
    "training": {"epochs": 2, "batch_size": 256, "augmentation": "none"},
    "sweep": {"seeds": [1, 2], "dfa": [0, {"fig4": 1.0e-2}], "bp": [0, 1.0e-2], "frozen": [0],
              "fa": [], "np": [0]},
    "methods": {"np": {"directions": 4}},
    "probes": {"epochs": [1, 2], "n_samples": 64, "directions": 8},
    "diagnostics": {"n_samples": 100},
    "fresh_b_null": {"draws": 3},
    "reproduction": {"reference": "config/tiny_reference.yaml"},
    "claims": {"file": None},  # the paper's claims need CIFAR-10's seeds (a test sets one)
    "ep_stack": {"corpora": ["pydoc"], "seeds": [0], "compare_precisions": ["bfloat16"],
                 "model": {"blocks": 2, "width": 16, "heads": 2, "context": 16},
                 "batch_size": 4, "pretrain": {"steps": 3, "relax_steps": 20},
                 "probe": {"batches": 1, "reference_steps": 40, "free_steps": [20, 40],
                           "nudged_steps_max": 30, "check_every": 5}},
}


def snakemake(workdir: Path, *args: str, check: bool = True, env: dict | None = None
              ) -> subprocess.CompletedProcess:
    """Run ``snakemake --cores 2 ARGS`` in ``workdir``; with ``check``, a failure raises
    with its output."""
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2", *args],
                          cwd=workdir, capture_output=True, text=True, timeout=900, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc


def job_counts(text: str) -> dict[str, int]:
    """Rule → number of jobs, from the "Job stats:" table of Snakemake's output."""
    block = text.split("Job stats:")[1]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", block, re.M)}


def fresh_copy(dest: Path) -> Path:
    """The workflow's files, as a fresh clone has them (no results, no data)."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in COPY:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dest / name)
    return dest


# ---- the paper -----------------------------------------------------------------------

def pdf_text(path: Path) -> str:
    """The text of a PDF, by pdftotext."""
    return subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True,
                          check=True).stdout


# ---- a training job's run config -----------------------------------------------------

def tiny_run_config(method="dfa", lam=0.01, epochs=3, **training):
    """A small digits run config for one training job (``training`` overrides its
    training section)."""
    return {
        "dataset": "digits", "method": method, "lam": lam, "seed": 7,
        "model": {"width": 16, "depth": 2, "branch_init_std": 0.01, "final_norm": True},
        "training": {"epochs": epochs, "batch_size": 128, "lr": 1e-3, "weight_decay": 0.01,
                     "schedule_step": "batch", "augmentation": "crop_flip", "crop_padding": 1,
                     "nonfinite_policy": "continue", "device": "cpu", **training},
        "options": {},  # the method's defaults
        "diagnostics": {"n_samples": 200, "seed": 0, "eval_batch_size": 256},
    }


# ---- gap tables by hand (the reproduction ranking) -----------------------------------

def hand_gaps(cells: dict[str, list[float]], kinds: dict[str, str], verified=None,
              seeds: dict | None = None) -> pd.DataFrame:
    """A gap table by hand: recipe → its gaps on the same paper numbers (in order), the
    i-th number keyed as method ``n<i>``, λ = 0, metric ``m`` (labelled "n0, λ=0: m");
    ``seeds``: recipe → (gap on each seed alone, gap without each seed), per number."""
    rows = []
    for recipe, gaps in cells.items():
        for i, gap in enumerate(gaps):
            alone, without = ({}, {}) if not seeds else (seeds[recipe][0][i],
                                                         seeds[recipe][1][i])
            rows.append({"method": f"n{i}", "lam": 0.0, "seed": None, "metric": "m",
                         "layer": None, "recipe": recipe,
                         "kind": kinds[recipe], "gap": gap, "within": abs(gap) <= 1,
                         "verified": True if verified is None else verified[i],
                         "inherited": False, "gap_seed": json.dumps(alone),
                         "gap_without_seed": json.dumps(without)})
    return pd.DataFrame(rows)


# Recipe → gaps where the count within tolerance and the clipped Σ|gap| disagree: "many"
# has more numbers within tolerance, "close" the smaller clipped sum (its misses are near
# misses, "many"'s one miss is far off).
DISAGREE = {"default": [3.0, 3.0, 3.0, 3.0],
            "many": [0.5, 0.5, 0.5, 9.0],       # 3 within, Σ clipped 6.5
            "close": [0.5, 0.5, 1.5, 1.5],      # 2 within, Σ clipped 4.0
            "off": [0.0, 0.0, 0.0, 0.0],        # departs: 4 within
            "bad": [8.0, 8.0, 8.0, 8.0]}
# Each recipe of DISAGREE → its kind.
KINDS = {"default": "stated", "many": "open", "close": "open", "off": "departs",
         "bad": "departs"}


# ---- a small spring-coupled stack at its fixed point (tests/test_ep_*.py)
SPRING_EPS = 0.1


@pytest.fixture(scope="module")
def small_spring_stack():
    """A small spring-coupled transformer stack in float64, a batch and its fixed point
    (relaxed at ε = SPRING_EPS to a residual below 1e-14)."""
    from credit_assign.ep_stack import dynamics
    from credit_assign.ep_stack.implicit import relax_to_convergence

    g = torch.Generator().manual_seed(0)
    stack = dynamics.SpringStack(vocab=7, blocks=2, width=8, heads=2, context=4,
                                 generator=g).double()
    idx = torch.randint(0, 7, (2, 4), generator=g)
    y = torch.randint(0, 7, (2, 4), generator=g)
    x = stack.embed(idx).detach()
    relaxed = relax_to_convergence(stack, x, SPRING_EPS, tol=1e-14, cap=20_000)
    assert relaxed.converged, relaxed.log[-3:]
    return stack, idx, y, x, relaxed
