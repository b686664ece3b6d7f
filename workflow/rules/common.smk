# The workflow's input functions: wildcards -> a function of the config in
# credit_assign.pipeline (torch-free, unit-tested in tests/test_pipeline.py). The paths
# are in credit_assign.infra.paths, the checks in .checks, the targets in .targets,
# each job's params in .params; the Snakefile checks the config (checks.prepare).
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

sys.path.insert(0, str(Path(workflow.basedir) / "src"))
from credit_assign.infra import paths  # noqa: E402
from credit_assign.pipeline import catalog, targets  # noqa: E402
from credit_assign.pipeline import params as job_params  # noqa: E402

# The learning rules (their catalogue; the Snakefile's checks.prepare has read it).
METHODS = catalog.methods()

DATASET = config["dataset"]


wildcard_constraints:
    dataset="[a-z0-9]+(@[a-z0-9_]+)?",
    method="|".join(METHODS),
    lam="[0-9.e+-]+",
    seed="[0-9]+",
    fmt="|".join(paths.FIG_FORMATS),
    corpus="|".join(targets.CORPORA),
    precision="|".join(targets.PRECISIONS),


def repo_file(path):
    """A file of the workflow itself (config/history.yaml, ...), found from the
    Snakefile's folder wherever Snakemake runs (--directory, a subfolder)."""
    return str(Path(workflow.basedir) / path)


def summary(pattern):
    """A summary table of the config's dataset (paths.RUNS, paths.VARIANTS_GAP, …)."""
    return targets.summary(config, pattern)


# ---- data
def dataset_manifest(wildcards):
    """What a job that reads the decoded data depends on: the data's manifest (its info
    and digest), which rule prepare_data rewrites when the source changes, so that every
    job reading the data reruns in the same run. Not the cache: a deleted cache is
    rebuilt by the first job that reads it (credit_assign.infra.data.load), so it reruns
    nothing. (A variant reads its base dataset's.)"""
    return paths.fill(
        paths.DATA_MANIFEST, dataset=targets.base_dataset(wildcards.dataset)
    )


def dataset_cache_path(wildcards):
    return paths.fill(paths.DATA_CACHE, dataset=targets.base_dataset(wildcards.dataset))


def data_source(wildcards):
    return job_params.data_source(
        config, wildcards.get("dataset") or wildcards.get("corpus")
    )


def source_stamp(wildcards):
    # a dry run reads the digest cache but writes nothing
    return job_params.source_stamp(
        config,
        wildcards.get("dataset") or wildcards.get("corpus"),
        remember=not workflow.dryrun,
    )


# ---- training and the jobs that read a trained model
def run_config(wildcards):
    w = wildcards
    return job_params.run_config(config, w.dataset, w.method, w.lam, w.seed)


def train_priority(wildcards):
    return job_params.train_priority(config, wildcards.dataset, wildcards.method)


def probe_settings(wildcards):
    return job_params.probe_settings(config)


def train_metrics(wildcards):
    return targets.train_metrics(config, wildcards.dataset)


def train_timings(wildcards):
    return targets.train_timings(config, wildcards.dataset)


def null_results(wildcards):
    return targets.null_results(config, wildcards.dataset)


def probe_results(wildcards):
    return targets.probe_results(config, wildcards.dataset)


def measure_results(wildcards):
    return targets.measure_results(config, wildcards.dataset)


def reproduction_config(wildcards):
    return job_params.reproduction_config(config, wildcards.dataset)


def dataset_expect(wildcards):
    return targets.table_expect(config, wildcards.dataset)


# ---- the EP stack probe
def corpus_version(wildcards):
    return job_params.corpus_version(wildcards.corpus)


def ep_settings(wildcards):
    return job_params.ep_settings(config, wildcards.precision)


def ep_settle(wildcards):
    return job_params.ep_settle(config)


# ---- the paper
def findings_inputs(wildcards):
    inputs = targets.findings_inputs(config)
    if "history" in inputs:
        inputs["history"] = repo_file(inputs["history"])
    return inputs


def paper_number_inputs(wildcards):
    return targets.paper_number_inputs(config)


def paper_number_config(wildcards):
    return job_params.paper_number_config(config)


def paper_sources(wildcards):
    return targets.paper_sources(config)


def paper_build_inputs(wildcards):
    """paper_sources, after checking for a TeX engine: without one, asking for the PDF
    fails at once (before any job runs) with what to install."""
    from credit_assign.reporting.tex_build import missing_tex

    if problem := missing_tex():
        raise WorkflowError(f"{paths.PAPER_PDF}: {problem}")
    return targets.paper_sources(config)
