# The workflow's input functions: wildcards -> a function of the config, the methods of
# credit_assign.planning.wildcards.JobFunctions (torch-free, unit-tested in
# tests/test_planning.py). The paths
# are in credit_assign.infra.paths, the checks in .checks, the targets in .targets,
# each job's params in .params; the Snakefile checks the config (checks.prepare).
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

sys.path.insert(0, str(Path(workflow.basedir) / "src"))
from credit_assign.infra import paths  # noqa: E402
from credit_assign.planning import catalog, matrix, targets  # noqa: E402
from credit_assign.planning import code as digests  # noqa: E402
from credit_assign.planning import params as job_params  # noqa: E402
from credit_assign.planning.wildcards import JobFunctions  # noqa: E402

# The learning rules (their catalogue; the Snakefile's checks.prepare has read it).
METHODS = catalog.methods()

# What a report step's job asks of a machine (tables, pages, figures, the paper: one
# thread, a few seconds to minutes), written once; a computing step states its own.
REPORT_JOB = {"mem_mb": 1000, "runtime": 10}


wildcard_constraints:
    dataset="[a-z0-9]+",
    recipe="[a-z][a-z0-9_]*",
    method="|".join(METHODS),
    lam="[0-9.e+-]+",
    seed="[0-9]+",
    fmt="|".join(paths.FIG_FORMATS),
    corpus="|".join(targets.CORPORA),
    precision="|".join(targets.PRECISIONS),


# every input, params and priority function of a job's wildcards, bound to the config
per_job = JobFunctions(config, workflow.basedir, dryrun=lambda: workflow.dryrun)


def paper_build_inputs(wildcards):
    """paper_sources, after checking for a TeX engine: without one, asking for the PDF
    fails at once (before any job runs) with what to install."""
    from credit_assign.reporting.tex_build import missing_tex

    if problem := missing_tex():
        raise WorkflowError(f"{paths.PAPER_PDF}: {problem}")
    return paper_sources(wildcards)


def paper_sources(wildcards):
    """The manuscript's sources: the config's (per_job.paper_sources) and, for the
    paper's dataset, the dose study's section (paper/dose.tex and its figure; the study
    reads the record alone, whatever else the config runs) and, with the EP question,
    the section of its two questions (paper/ep2.tex and the precision figure)."""
    from credit_assign.studies.dose.plan import OUT

    from credit_assign.studies.ep_question2 import plan as ep2

    sources = per_job.paper_sources(wildcards)
    if config["dataset"] != "cifar10":
        return sources
    sources = sources | {
        "numbers": [*sources["numbers"], OUT["tex"]],
        "figures": [*sources["figures"], paths.figure("fig_dose", "pdf")],
    }
    if not config["claims"].get("ep"):
        return sources
    # EP's two questions and the precision study (paper/ep2.tex, its figure)
    return sources | {
        "numbers": [*sources["numbers"], ep2.OUT["tex"]],
        "figures": [*sources["figures"], paths.figure("fig_ep_estimator", "pdf")],
    }


def figure_outputs(name, prefix=""):
    """A figure step's three files — PDF, PNG (in the report, with its caption: <name>.rst
    in its study's room, src/credit_assign/studies/<study>/) and SVG — as named outputs
    (``prefix``: for a step that draws two figures):
    ``output: **figure_outputs("fig4_penalty_rescue")``."""
    rooms = Path(workflow.basedir) / "src" / "credit_assign" / "studies"
    found = sorted(rooms.glob(f"*/{name}.rst"))
    if len(found) != 1:
        raise WorkflowError(
            f"figure {name!r}: its caption {name}.rst must be in exactly one "
            f"study room under {rooms.relative_to(workflow.basedir)}/; "
            f"found {len(found)}"
        )
    return {
        f"{prefix}pdf": paths.figure(name, "pdf"),
        f"{prefix}png": report(
            paths.figure(name, "png"),
            caption=f"../../{found[0].relative_to(workflow.basedir).as_posix()}",
            category="Figures",
        ),
        f"{prefix}svg": paths.figure(name, "svg"),
    }
