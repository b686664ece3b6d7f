"""Every file the workflow reads or writes, as one table of patterns: the workflow's
steps (workflow/rules/*.smk: their inputs, outputs and logs), the target lists
(credit_assign.planning.targets) and the library (the data and corpus manifests, the text
the reports generate) take their paths from here and never spell one (a test scans the
code for a spelled path). ``{name}`` fields are Snakemake wildcards where a step's output
leaves them open, else ``.format``-ted by the caller (``fill``).

Wildcards: dataset (``cifar10``, ``digits``), recipe (``default``, the stated recipe, or a
recipe variant's name: config/variants.yaml), method, lam (λ as ``planning.matrix.lam_str``
writes it), seed, corpus, precision, fmt (a figure format).

In the infrastructure layer, so that every layer may import it; stdlib only.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from string import Formatter

# ---- data: the manifest is what jobs depend on; the cache beside it is no step's output
DATA_MANIFEST = "data/{dataset}.json"
DATA_CACHE = "data/{dataset}.pt"
SOURCE_DIGESTS = "data/.source-digests.json"  # credit_assign.infra.sources' cache of digests
CORPUS_MANIFEST = "data/corpus/{corpus}.json"
CORPUS_CACHE = "data/corpus/{corpus}.pt"

# ---- beside every summary table, the record of what it was made from (analysis.tables)
DIGEST_SUFFIX = ".digest.json"

# ---- the record (infra.record, results/README.md): the index of the results kept in git
# and Snakemake's record of each job that wrote one
RECORD = "results/.record"

# ---- a recipe's results: the stated recipe's folder is DEFAULT_RECIPE, a variant's its name
DEFAULT_RECIPE = "default"
RECIPE = "results/{dataset}/{recipe}"

# ---- one training run's folder, and what it holds
RUN_DIR = "results/{dataset}/{recipe}/train/{method}/lam{lam}/seed{seed}"
# what a training job writes that the record keeps (results/README.md): its metrics and
# timings; its weights (model.pt, snapshots.pt) are temp(): rebuilt on demand, kept
# with `snakemake --notemp`
TRAIN_OUTPUTS = ("metrics.json", "timings.json")
METRICS = f"{RUN_DIR}/metrics.json"
MODEL = f"{RUN_DIR}/model.pt"
TIMINGS = f"{RUN_DIR}/timings.json"
SNAPSHOTS = f"{RUN_DIR}/snapshots.pt"
RESUME = f"{RUN_DIR}/resume.pt"  # per-epoch state, outside the outputs: a rerun resumes

# ---- per-run results of the jobs that read a trained model
NULL = "results/{dataset}/{recipe}/fresh_b_null/{method}/lam{lam}/seed{seed}.json"
PROBE = "results/{dataset}/{recipe}/probes/{method}/lam{lam}/seed{seed}.json"
MEASURE = "results/{dataset}/{recipe}/measure/{method}/lam{lam}/seed{seed}.json"

# ---- a dataset's summary tables (each written with a `.digest.json` record beside it)
SUMMARY = "results/{dataset}/{recipe}/summary"
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
FINDINGS = f"{SUMMARY}/findings.json"  # every verdict and the notes' findings (step findings)

# ---- the claims (config/claims.yaml), judged on runs of the stated recipe: their runs'
# tables, the verdicts, the page
CLAIMS = f"results/{{dataset}}/{DEFAULT_RECIPE}/claims"
CLAIMS_RUNS = f"{CLAIMS}/runs.csv"
CLAIMS_EPOCHS = f"{CLAIMS}/epochs.csv"
CLAIMS_NULLS = f"{CLAIMS}/null_layers.csv"
CLAIMS_EP = f"{CLAIMS}/ep_by_seed.csv"
CLAIMS_PROVENANCE = f"{CLAIMS}/provenance.csv"  # every result's code: the order check
CLAIMS_VERDICTS = f"{CLAIMS}/claims.csv"
CLAIMS_BY_SEED = f"{CLAIMS}/claims_by_seed.csv"
CLAIMS_FINDINGS = f"{CLAIMS}/findings.json"
CLAIMS_MD = f"{CLAIMS}/claims.md"

# ---- the primer check
PRIMER_CHECK = "results/primer_check/primer_check.json"

# ---- the EP stack probe: one result per (corpus, pretraining precision, seed)
EP_RESULT = "results/ep_stack/{corpus}/{precision}/seed{seed}.json"
EP_TIMINGS = "results/ep_stack/{corpus}/{precision}/seed{seed}.timings.json"
EP_RESUME = "results/ep_stack/{corpus}/{precision}/seed{seed}.resume.pt"
# EP against the fixed-point gradient (ep_stack.implicit): one result per (corpus, seed)
EP_FIXED_POINT = "results/ep_stack/{corpus}/{precision}/seed{seed}.fixed_point.json"
EP_FIXED_POINT_TIMINGS = "results/ep_stack/{corpus}/{precision}/seed{seed}.fixed_point.timings.json"
EP_FIXED_POINT_RESUME = "results/ep_stack/{corpus}/{precision}/seed{seed}.fixed_point.resume.pt"
# EP's estimator and its precision (issue #55, step ep_estimator): one file per seed
EP_ESTIMATOR_STUDY = "config/ep_estimator.yaml"  # its seeds and settings (not a configfile)
EP_ESTIMATOR = "results/ep_stack/{corpus}/float32/seed{seed}.estimator.json"
EP_ESTIMATOR_RESUME = "results/ep_stack/{corpus}/float32/seed{seed}.estimator.resume.pt"
# EP's second question (studies/ep_question2; config/claims_ep2.yaml): one file per seed,
# here because the record (infra.record) lists every result it keeps
EP_QUESTION2 = "results/ep_stack/{corpus}/float32/seed{seed}.question2.json"
EP_SUMMARY = "results/ep_stack/summary"
EP_COSINES = f"{EP_SUMMARY}/cosines.csv"
EP_INCREMENTS = f"{EP_SUMMARY}/increments.csv"
EP_PRETRAIN = f"{EP_SUMMARY}/pretrain.csv"
EP_TIMINGS_TABLE = f"{EP_SUMMARY}/timings.csv"
EP_BY_SEED = f"{EP_SUMMARY}/by_seed.csv"
EP_REPORT = f"{EP_SUMMARY}/report.md"
# the EP question judged (config/claims_ep.yaml): its findings and the tables they rest on
EP_QUESTION = f"{EP_SUMMARY}/ep_question"
EP_QUESTION_FINDINGS = f"{EP_QUESTION}/findings.json"
EP_QUESTION_BATCHES = f"{EP_QUESTION}/batches.csv"
EP_QUESTION_COSINES = f"{EP_QUESTION}/cosines.csv"
EP_QUESTION_MD = f"{EP_QUESTION}/ep_question.md"

# ---- figures (one file per format) and the paper
FIG_FORMATS = ("pdf", "png", "svg")
FIGURE = "paper/figures/{name}.{fmt}"
PAPER_TEX = "paper/ms.tex"
PAPER_NUMBERS = "paper/numbers.tex"
PAPER_CLAIMS = "paper/claims.tex"
PAPER_FINDINGS = "paper/findings.tex"  # the findings' outcomes and values (step paper_numbers)
# what make publish writes: one findings file, a section per published group
# (infra.findings_file); never read by the workflow, but its first version in git is what the
# claims page compares a rerun with (analysis.history.earlier_runs)
PUBLISHED_FINDINGS = "docs/findings.json"
# the claims' findings as published before one findings file: their first publication is
# in its git history (migrations.claims_findings)
PUBLISHED_CLAIMS_BEFORE = "docs/claims_findings.json"
PAPER_PDF = "paper/ms.pdf"
ARXIV = "paper/arxiv.tar.gz"

# ---- each workflow step's log, by step name (a test checks every step's log: is its entry)
LOGS = {
    # data
    "prepare_data": "logs/prepare_data/{dataset}.log",
    "prepare_corpus": "logs/prepare_corpus/{corpus}.log",
    # training and the jobs that read a trained model
    "train": "logs/train/{dataset}/{recipe}/{method}_lam{lam}_seed{seed}.log",
    "fresh_b_null": "logs/fresh_b_null/{dataset}/{recipe}/{method}_lam{lam}_seed{seed}.log",
    "alignment_probe": "logs/alignment_probe/{dataset}/{recipe}/{method}_lam{lam}_seed{seed}.log",
    "measure": "logs/measure/{dataset}/{recipe}/{method}_lam{lam}_seed{seed}.log",
    # a dataset's summary tables and the variants' pages
    "aggregate": "logs/aggregate/{dataset}/{recipe}.log",
    "reproduction": "logs/aggregate/{dataset}/{recipe}_reproduction.log",
    "aggregate_alignment_probes": "logs/aggregate/{dataset}/{recipe}_probes.log",
    "aggregate_measurements": "logs/aggregate/{dataset}/{recipe}_measurements.log",
    "reproduction_notes": "logs/aggregate/reproduction_notes.log",
    "findings": "logs/aggregate/findings.log",
    # the claims
    "claims_tables": "logs/claims/{dataset}_tables.log",
    "claims_verdicts": "logs/claims/{dataset}_verdicts.log",
    # the primer check
    "primer_check": "logs/primer_check/primer_check.log",
    # the EP stack probe
    "ep_stack_probe": "logs/ep_stack/{corpus}_{precision}_seed{seed}.log",
    "ep_fixed_point": "logs/ep_stack/{corpus}_{precision}_seed{seed}_fixed_point.log",
    "ep_estimator": "logs/ep_stack/{corpus}_seed{seed}_estimator.log",
    "ep_stack_summary": "logs/ep_stack/summary.log",
    "ep_question_findings": "logs/ep_stack/ep_question.log",
    # the paper (a figure's log: figure_log)
    "paper_numbers": "logs/paper/numbers.log",
    "paper_claims": "logs/paper/claims.log",
    "paper": "logs/paper/ms.log",
    "arxiv": "logs/paper/arxiv.log",
}


def figure_log(name: str) -> str:
    """The log of the step that draws figure ``name`` (the first it draws, where two)."""
    return f"logs/figures/{name}.log"


# ---- inputs that are not outputs of any step
DEFAULT_CONFIG = "config/config.yaml"  # the Snakefile's configfile (paper scale)
STUDY_CONFIGS = (DEFAULT_CONFIG, "config/variants.yaml")  # the variant study's (make study)
# the dose study's arms as recipes (laid over the paper config to train them); the paper
# config reads their recorded results without laying it over (planning.matrix.arm_recipe)
DOSE_ARMS = "config/dose.yaml"
# the configs no published file is made from (make publish's stamp leaves them out)
UNPUBLISHED_CONFIGS = ("config/quick.yaml", "config/ep_precision.yaml")
CONFIG_SCHEMA = "workflow/schemas/config.schema.yaml"
# per-epoch times (credit_assign.planning.estimate)
REBUILD_ESTIMATE = "bench/rebuild_estimate.json"
HISTORY = "config/history.yaml"  # what was fixed when: events found in git (analysis.history)

# ---- no workflow's file: the config's rule-options table, rewritten from the rules'
# code by ``python -m credit_assign.science.learning_rules --write``
RULE_OPTIONS_README = "config/README.md"

# ---- a cache and the manifest beside it: the same folder, the same name but its suffix
MANIFESTS = {DATA_CACHE: DATA_MANIFEST, CORPUS_CACHE: CORPUS_MANIFEST}


def fill(pattern: str, **wildcards) -> str:
    """``pattern`` with the given wildcards filled in (all of them: a KeyError names one
    left open)."""
    return pattern.format(**wildcards)


def figure(name: str, fmt: str) -> str:
    return FIGURE.format(name=name, fmt=fmt)


def figures(name: str) -> list[str]:
    """A figure's files, one per format (pdf, png, svg)."""
    return [figure(name, fmt) for fmt in FIG_FORMATS]


def manifest(cache: str | Path) -> Path:
    """The manifest beside ``cache``, named as the table names it: a cache named as
    DATA_CACHE names it (``<folder>/<dataset>.pt``) has DATA_MANIFEST's name in the same
    folder (``<folder>/<dataset>.json``), and the same for CORPUS_CACHE and
    CORPUS_MANIFEST. By the cache's file name only: a cache in another folder (a test's,
    a benchmark's) has its manifest beside it."""
    cache = Path(cache)
    for cache_pattern, manifest_pattern in MANIFESTS.items():
        fields = _match(PurePosixPath(cache_pattern).name, cache.name)
        if fields is not None:
            return cache.with_name(PurePosixPath(manifest_pattern).name.format(**fields))
    raise ValueError(f"{cache}: not a cache's name ({', '.join(MANIFESTS)})")


# what each wildcard matches, as the workflow constrains it (workflow/rules/common.smk);
# any other field: one path part
WILDCARD_REGEX = {"seed": "[0-9]+", "lam": "[0-9.e+-]+"}


def regex(pattern: str) -> re.Pattern:
    """A path pattern as a regular expression over whole relative paths, each wildcard a
    named group (its match as the workflow's wildcards constrain it)."""
    parts = []
    for text, field, _, _ in Formatter().parse(pattern):
        parts.append(re.escape(text))
        if field:
            parts.append(f"(?P<{field}>{WILDCARD_REGEX.get(field, '[^/]+')})")
    return re.compile("".join(parts))


def _match(pattern: str, name: str) -> dict[str, str] | None:
    """The fields of ``pattern`` (``{dataset}.pt``) that make it ``name``, or None."""
    regex = "".join(re.escape(text) + (f"(?P<{field}>.+)" if field else "")
                    for text, field, _, _ in Formatter().parse(pattern))
    found = re.fullmatch(regex, name)
    return found.groupdict() if found else None


def beside(path: str | Path, pattern: str) -> Path:
    """The file of ``pattern`` in ``path``'s folder, where the two patterns share their
    folder and ``pattern``'s file name has no wildcard: TIMINGS beside a METRICS."""
    name = PurePosixPath(pattern).name
    if any(field for _, field, _, _ in Formatter().parse(name)):
        raise ValueError(f"{pattern}: its file name has a wildcard")
    return Path(path).with_name(name)


def braced(patterns: list[str] | tuple[str, ...], **wildcards) -> str:
    """Files of one folder and suffix as one shell brace expression, filled in:
    ``results/ep_stack/summary/{cosines,by_seed}.csv`` (what a generated page names)."""
    files = [PurePosixPath(fill(p, **wildcards)) for p in patterns]
    folders, suffixes = {f.parent for f in files}, {f.suffix for f in files}
    if len(folders) != 1 or len(suffixes) != 1:
        raise ValueError(f"not one folder and suffix: {patterns}")
    names = ",".join(f.stem for f in files)
    return f"{folders.pop()}/{{{names}}}{suffixes.pop()}"
