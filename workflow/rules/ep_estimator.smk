# EP's estimator and its precision (issue #55; exploratory): config/ep_estimator.yaml's
# seeds, each one job (pretraining, then every probe batch). `snakemake --cores 2
# ep_estimator_study` runs them; each result joins the record when its job ends.


rule ep_estimator:
    """One seed: its stack remade, EP at every r and precision against float64."""
    input:
        per_job.ep_estimator_manifest,
    output:
        paths.EP_ESTIMATOR,
    log:
        paths.LOGS["ep_estimator"],
    priority: job_params.EP_PRIORITY
    conda:
        "../../envs/pytorch.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=240,
    params:
        settings=per_job.ep_estimator_settings,
        study=per_job.ep_estimator_params,
        code=per_job.code("ep_estimator"),
        resume=paths.EP_ESTIMATOR_RESUME,
        cache=paths.CORPUS_CACHE,
    script:
        "../../scripts/ep_estimator.py"


rule ep_estimator_study:
    """Every seed of config/ep_estimator.yaml."""
    input:
        per_job.ep_estimator_targets,


# the study's table and figure from the results here (each seed as its job ends)
from credit_assign.studies.ep_estimator import files as ep_estimator_files


rule ep_estimator_tables:
    """The precision study's results here → one table, and each remade stack beside the
    first question's."""
    input:
        results=per_job.ep_estimator_present,
        recorded=per_job.ep_estimator_recorded,
    output:
        table=ep_estimator_files.TABLE,
        remade=ep_estimator_files.REMADE,
    log:
        ep_estimator_files.LOGS["ep_estimator_tables"],
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        code=digests.report_digest("ep_estimator_tables"),
    script:
        "../../scripts/ep_estimator_tables.py"


rule fig_ep_estimator:
    """1 − cos against r per precision and stencil, and the nudge in float32 units."""
    input:
        ep_estimator_files.TABLE,
    output:
        **figure_outputs("fig_ep_estimator"),
    log:
        paths.figure_log("fig_ep_estimator"),
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        code=digests.report_digest("fig_ep_estimator"),
    script:
        "../../scripts/figure.py"
