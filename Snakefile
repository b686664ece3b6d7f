# Credit assignment without backpropagation: DFA penalty rescue and friends.
# Full rebuild:  snakemake --cores N            (config/config.yaml, paper scale)
# Quick run:     snakemake --cores 2 --configfile config/quick.yaml
# One figure:    snakemake --cores 2 paper/figures/fig4_penalty_rescue.pdf
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import min_version, update_config

min_version("9.0")

sys.path.insert(0, str(Path(workflow.basedir) / "src"))
from credit_assign.infra import paths  # noqa: E402 (stdlib only)
from credit_assign.planning import ConfigError  # noqa: E402 (torch-free)
from credit_assign.planning.checks import (  # noqa: E402
    check_default_loaded,
    prepare,
    typed_overrides,
)


# The paper config, found from the Snakefile's folder wherever Snakemake runs
# (--directory, --snakefile from a subfolder), and laid under every --configfile.
configfile: str(Path(workflow.basedir) / paths.DEFAULT_CONFIG)


# The one parse sequence (credit_assign.planning.checks.prepare), before any job: what
# YAML would read silently (a duplicate key, a seed like 042: octal 34), the schema (its
# defaults filled in), what the schema cannot say (the methods' options filled in).
# --config's nested numbers arrive as strings (Snakemake's YAML base loader): typed as
# a config file's are, then laid over the config again (checks.typed_overrides)
update_config(config, typed_overrides(dict(workflow.config_settings.config)))

# Snakemake runs each script step through a shell command with the interpreter's path
# unquoted: a path with a space fails at the first such job, after the dry run passed.
# Refused here, before any job, naming the path.
for _where, _path in (
    ("the workflow's folder", workflow.basedir),
    ("the Python interpreter", sys.executable),
):
    if any(c.isspace() for c in str(_path)):
        raise WorkflowError(
            f"{_where} has a space in its path ({_path}): Snakemake's script steps "
            "cannot run from it. Clone (and make the environment) in a folder whose "
            "path has no spaces."
        )

# The record (results/README.md) read as its jobs wrote it: on a fresh clone (or after
# .snakemake/ was deleted) Snakemake's records of the recorded jobs are put back and
# the files dated in job order before the DAG is built, so nothing recorded reruns
# (infra.record.restore_if_fresh; nothing is read where every record is there).
if workflow.is_main_process:
    from credit_assign.infra import record as _record

    try:
        _restored = _record.restore_if_fresh(workflow.basedir)
    except _record.RecordError as err:
        raise WorkflowError(str(err)) from None
    if _restored:
        print(
            f"record: {_restored['files']} files read as their jobs wrote them, "
            f"{_restored['metadata']} Snakemake records put back (a fresh checkout)",
            file=sys.stderr,
        )

try:
    check_default_loaded(workflow.configfiles, workflow.basedir)
    prepare(config, workflow.configfiles, workflow.basedir)
except ConfigError as err:
    raise WorkflowError(str(err)) from None

# A data source other than the one the record's results were made from: said, since
# nothing recorded reruns for it (planning.checks.source_note).
if workflow.is_main_process:
    from credit_assign.planning.checks import source_note

    if _note := source_note(config, workflow.basedir):
        print(_note, file=sys.stderr)

# A grid far beyond the paper's (sweep.seeds of thousands) takes Snakemake minutes and
# gigabytes to plan before it says anything: said first, with the count.
LARGE_GRID = 2000
if workflow.is_main_process:
    from credit_assign.planning.matrix import run_table

    _n_runs = len(run_table(config))
    if _n_runs > LARGE_GRID:
        print(
            f"config: {_n_runs} training runs (sweep: methods × λ × seeds); planning them "
            "takes Snakemake minutes and GBs before the first job. Their cost: "
            "python -m credit_assign.planning.estimate config/config.yaml <your config>",
            file=sys.stderr,
        )


report: "workflow/report/workflow.rst"


# The record (results/README.md): after every successful run, the index of the results
# kept in git and Snakemake's record of the jobs that wrote them (infra.record).
onsuccess:
    from credit_assign.infra import record

    record.save()


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/primer.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/ep_stack.smk"
include: "workflow/rules/claims.smk"
include: "workflow/rules/dose.smk"
include: "workflow/rules/ep_estimator.smk"
include: "workflow/rules/ep_question2.smk"
include: "workflow/rules/paper.smk"


rule all:
    default_target: True
    input:
        per_job.all_targets,
