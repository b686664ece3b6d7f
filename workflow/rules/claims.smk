# The paper's claims judged on fresh seeds (config claims.file, config/claims.yaml):
# the claims' runs as tables, the verdicts with their intervals, the page and a figure.
# `snakemake --cores 2 claims` builds them (the training runs included).


rule claims_tables:
    """The runs the claims read → runs, epochs, per-layer null and EP per-seed tables."""
    input:
        # refused from a checkout with uncommitted code (the runs are pre-registered)
        train=per_job.claims_train,
        timings=per_job.claims_timings,
        nulls=per_job.claims_nulls,
        ep=per_job.claims_ep,
        ep_timings=per_job.claims_ep_timings,
    output:
        runs=paths.CLAIMS_RUNS,
        epochs=paths.CLAIMS_EPOCHS,
        nulls=paths.CLAIMS_NULLS,
        ep=paths.CLAIMS_EP,
        provenance=paths.CLAIMS_PROVENANCE,
    log:
        paths.LOGS["claims_tables"],
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        settle=per_job.ep_settle,
        code=digests.report_digest("claims_tables"),
    script:
        "../../scripts/claims_tables.py"


rule claims_verdicts:
    """Each claim's effect per seed, its interval and verdict; the claims page."""
    input:
        spec=per_job.claims_file,
        runs=paths.CLAIMS_RUNS,
        epochs=paths.CLAIMS_EPOCHS,
        nulls=paths.CLAIMS_NULLS,
        ep=paths.CLAIMS_EP,
        provenance=paths.CLAIMS_PROVENANCE,
        # what was fixed when: events found in git (and the rebuild record in bench/,
        # where the checkout has one)
        history=per_job.repo_file(paths.HISTORY),
    output:
        verdicts=report(
            paths.CLAIMS_VERDICTS,
            caption="../report/table.rst",
            category="Tables",
        ),
        by_seed=paths.CLAIMS_BY_SEED,
        findings=paths.CLAIMS_FINDINGS,
        md=paths.CLAIMS_MD,
    log:
        paths.LOGS["claims_verdicts"],
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        expect=per_job.claims_expect,
        code=digests.report_digest("claims_verdicts"),
    script:
        "../../scripts/claims_verdicts.py"


rule fig_claims:
    """One row per judged effect: its interval against the threshold, the verdict."""
    input:
        spec=per_job.claims_file,
        findings=per_job.claims_findings,
    output:
        **figure_outputs("fig_claims"),
    log:
        paths.figure_log("fig_claims"),
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        code=digests.report_digest("fig_claims"),
    script:
        "../../scripts/figure.py"


rule claims:
    """The claims judged on fresh seeds (config/claims.yaml), in one command."""
    input:
        per_job.claims_targets,
