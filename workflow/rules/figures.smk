rule fig4_penalty_rescue:
    """Penalty rescue: ‖h_L‖ per epoch, deep cosines against the null, accuracy."""
    input:
        runs=per_job.summary(paths.RUNS),
        epochs=per_job.summary(paths.EPOCHS),
        nulls=per_job.summary(paths.NULLS),
    output:
        **figure_outputs("fig4_penalty_rescue"),
    log:
        paths.figure_log("fig4_penalty_rescue"),
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        penalty_lambda=matrix.figure_lam(config),
        dataset=config["dataset"],
        methods=job_params.method_styles(),
        expect=per_job.table_expect,
        code=digests.report_digest("fig4_penalty_rescue"),
    script:
        "../../scripts/figure.py"


rule fig_primer_phases:
    """The primer schematic: needs no results."""
    output:
        **figure_outputs("fig_primer_phases"),
    log:
        paths.figure_log("fig_primer_phases"),
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        code=digests.report_digest("fig_primer_phases"),
    script:
        "../../scripts/figure.py"


rule fig_primer_check:
    """Error of the EP estimate vs β, one-sided and symmetric."""
    input:
        paths.PRIMER_CHECK,
    output:
        **figure_outputs("fig_primer_check"),
    log:
        paths.figure_log("fig_primer_check"),
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        code=digests.report_digest("fig_primer_check"),
    script:
        "../../scripts/figure.py"


rule fig_alignment_probes:
    """Cosine of each rule's signal with the true gradient, per layer and across training."""
    input:
        alignment=per_job.summary(paths.PROBE_ALIGNMENT),
        ratios=per_job.summary(paths.PROBE_RATIOS),
    output:
        **figure_outputs("fig_alignment_probes"),
    log:
        paths.figure_log("fig_alignment_probes"),
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        network=config["probes"]["network"],
        methods=job_params.method_styles(),
        expect=per_job.runs_expect,
        code=digests.report_digest("fig_alignment_probes"),
    script:
        "../../scripts/figure.py"
