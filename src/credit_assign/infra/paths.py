"""Every file the workflow reads or writes, as one table of patterns: the rules
(workflow/rules/*.smk) and the target lists (credit_assign.pipeline.targets) take their
paths from here and never spell one. ``{name}`` fields are Snakemake wildcards where a
rule's output leaves them open, else ``.format``-ted by the caller (``fill``).

Wildcards: dataset (``cifar10``, or ``cifar10@<variant>`` for a recipe variant), method,
lam (λ as ``lam_str`` writes it), seed, corpus, precision, fmt (a figure format).
"""

from __future__ import annotations

# ---- data: the manifest is what jobs depend on; the cache beside it is no rule's output
DATA_MANIFEST = "data/{dataset}.json"
DATA_CACHE = "data/{dataset}.pt"
SOURCE_DIGESTS = "data/.source-digests.json"  # credit_assign.infra.sources' cache of digests
CORPUS_MANIFEST = "data/corpus/{corpus}.json"
CORPUS_CACHE = "data/corpus/{corpus}.pt"

# ---- one training run's folder, and what it holds
RUN_DIR = "results/{dataset}/train/{method}/lam{lam}/seed{seed}"
TRAIN_OUTPUTS = ("metrics.json", "model.pt", "timings.json", "snapshots.pt")
METRICS = f"{RUN_DIR}/metrics.json"
MODEL = f"{RUN_DIR}/model.pt"
TIMINGS = f"{RUN_DIR}/timings.json"
SNAPSHOTS = f"{RUN_DIR}/snapshots.pt"
RESUME = f"{RUN_DIR}/resume.pt"  # per-epoch state, outside the outputs: a rerun resumes

# ---- per-run results of the jobs that read a trained model
NULL = "results/{dataset}/fresh_b_null/{method}/lam{lam}/seed{seed}.json"
PROBE = "results/{dataset}/probes/{method}/lam{lam}/seed{seed}.json"
MEASURE = "results/{dataset}/measure/{method}/lam{lam}/seed{seed}.json"

# ---- a dataset's summary tables (each written with a `.digest.json` record beside it)
SUMMARY = "results/{dataset}/summary"
RUNS = f"{SUMMARY}/runs.csv"
EPOCHS = f"{SUMMARY}/epochs.csv"
LAYERS = f"{SUMMARY}/layers.csv"
NULLS = f"{SUMMARY}/nulls.csv"
REPRODUCTION = f"{SUMMARY}/reproduction.csv"
REPRODUCTION_MD = f"{SUMMARY}/reproduction.md"
PROBE_ALIGNMENT = f"{SUMMARY}/probe_alignment.csv"
PROBE_RATIOS = f"{SUMMARY}/probe_ratios.csv"
MEASUREMENTS = f"{SUMMARY}/measurements.csv"
VARIANTS_GAP = f"{SUMMARY}/variants_gap.csv"
REPRODUCTION_VARIANTS = f"{SUMMARY}/reproduction_variants.md"
REPRODUCTION_NOTES = f"{SUMMARY}/reproduction_notes.md"

# ---- the primer check
PRIMER_CHECK = "results/primer_check/primer_check.json"

# ---- the EP stack probe: one result per (corpus, pretraining precision, seed)
EP_RESULT = "results/ep_stack/{corpus}/{precision}/seed{seed}.json"
EP_TIMINGS = "results/ep_stack/{corpus}/{precision}/seed{seed}.timings.json"
EP_RESUME = "results/ep_stack/{corpus}/{precision}/seed{seed}.resume.pt"
EP_SUMMARY = "results/ep_stack/summary"
EP_COSINES = f"{EP_SUMMARY}/cosines.csv"
EP_INCREMENTS = f"{EP_SUMMARY}/increments.csv"
EP_PRETRAIN = f"{EP_SUMMARY}/pretrain.csv"
EP_TIMINGS_TABLE = f"{EP_SUMMARY}/timings.csv"
EP_BY_SEED = f"{EP_SUMMARY}/by_seed.csv"
EP_REPORT = f"{EP_SUMMARY}/report.md"

# ---- figures (one file per format) and the paper
FIG_FORMATS = ("pdf", "png", "svg")
FIGURE = "paper/figures/{name}.{fmt}"
PAPER_TEX = "paper/ms.tex"
PAPER_NUMBERS = "paper/numbers.tex"
PAPER_PDF = "paper/ms.pdf"
ARXIV = "paper/arxiv.tar.gz"

# ---- inputs that are not outputs of any rule
CONFIG_SCHEMA = "workflow/schemas/config.schema.yaml"
REBUILD_ESTIMATE = "docs/rebuild_estimate.json"  # per-epoch times (credit_assign.pipeline.compute)


def fill(pattern: str, **wildcards) -> str:
    """``pattern`` with the given wildcards filled in (all of them: a KeyError names one
    left open)."""
    return pattern.format(**wildcards)


def figure(name: str, fmt: str) -> str:
    return FIGURE.format(name=name, fmt=fmt)


def figures(name: str) -> list[str]:
    """A figure's files, one per format (pdf, png, svg)."""
    return [figure(name, fmt) for fmt in FIG_FORMATS]
