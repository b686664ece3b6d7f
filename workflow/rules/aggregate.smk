rule aggregate:
    """Validate every result file and write tidy tables (one row per observation)."""
    input:
        train=per_job.train_metrics,
        timings=per_job.train_timings,
        nulls=per_job.null_results,
    output:
        runs=report(
            paths.RUNS,
            caption="../report/table.rst",
            category="Tables",
        ),
        epochs=paths.EPOCHS,
        layers=paths.LAYERS,
        nulls=paths.NULLS,
    log:
        paths.LOGS["aggregate"],
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        code=digests.report_digest("aggregate"),
    script:
        "../../scripts/aggregate.py"


rule reproduction:
    """Our numbers beside the paper's (config reproduction.reference), same tables as the figures."""
    input:
        reference=per_job.reference,
        info=per_job.dataset_manifest,
        runs=paths.RUNS,
        layers=paths.LAYERS,
        nulls=paths.NULLS,
    output:
        csv=report(
            paths.REPRODUCTION,
            caption="../report/table.rst",
            category="Tables",
        ),
        md=paths.REPRODUCTION_MD,
    log:
        paths.LOGS["reproduction"],
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        config=per_job.reproduction_config,
        expect=per_job.dataset_expect,
        code=digests.report_digest("reproduction"),
    script:
        "../../scripts/reproduction.py"


rule aggregate_alignment_probes:
    """Probe results → tidy tables: per-layer alignment, loss-decrease ratios."""
    input:
        per_job.probe_results,
    output:
        alignment=paths.PROBE_ALIGNMENT,
        ratios=paths.PROBE_RATIOS,
    log:
        paths.LOGS["aggregate_alignment_probes"],
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        code=digests.report_digest("aggregate_alignment_probes"),
    script:
        "../../scripts/aggregate_alignment_probes.py"


rule aggregate_measurements:
    """Measurement variants of every trained model → one tidy table."""
    input:
        per_job.measure_results,
    output:
        paths.MEASUREMENTS,
    log:
        paths.LOGS["aggregate_measurements"],
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        code=digests.report_digest("aggregate_measurements"),
    script:
        "../../scripts/aggregate_measurements.py"


rule variants_gap_map:
    """Every paper number under the default recipe and each variant, and each recipe's
    models under each measurement variant, in tolerance units; the default's
    reproduction.md with the study after it; fig_variants (the recipes' own numbers:
    the measurements are rule variants_measured_map's figure) and fig_variants_key (the
    paper's: the key recipes only).
    """
    input:
        reference=per_job.reference,
        default_md=per_job.summary(paths.REPRODUCTION_MD),
        tables=per_job.variant_reproduction_tables,
        measurements=per_job.measurement_tables,
    output:
        **figure_outputs("fig_variants"),
        **figure_outputs("fig_variants_key", prefix="key_"),
        csv=per_job.summary(paths.VARIANTS_GAP),
        md=per_job.summary(paths.REPRODUCTION_VARIANTS),
    log:
        paths.figure_log("fig_variants"),
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        about=job_params.variants_about(config),
        study=config["study"],
        expect=per_job.gap_map_expect,
        code=digests.report_digest("variants_gap_map"),
    script:
        "../../scripts/variants_gap_map.py"


rule variants_measured_map:
    """The gap map's measurement row sets on two pages of their own: one panel per
    measurement variant (the numbers it remeasures under every recipe); the epsilon
    cosines on the second.
    """
    input:
        gaps=per_job.summary(paths.VARIANTS_GAP),
    output:
        **figure_outputs("fig_variants_measured"),
        **figure_outputs("fig_variants_measured_eps", prefix="eps_"),
    log:
        paths.figure_log("fig_variants_measured"),
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        study=config["study"],
        code=digests.report_digest("variants_measured_map"),
    script:
        "../../scripts/variants_measured_map.py"


rule variants:
    """The recipe-variant study (run on purpose): every variant's runs and tables, the gap map."""
    input:
        per_job.variant_targets,


rule findings:
    """Every finding, computed once (credit_assign.analysis.findings): the paper's
    verdicts and, with the variant study, what the notes state; validated, then read by
    rules paper_numbers and reproduction_notes."""
    input:
        unpack(per_job.findings_inputs),
    output:
        per_job.summary(paths.FINDINGS),
    log:
        paths.LOGS["findings"],
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        variants=list(config["variants"]),
        study=config["study"],
        penalty=matrix.figure_lam(config),
        compute=(
            job_params.study_compute(config, workflow.basedir)
            if config["variants"]
            else ""
        ),
        expect=per_job.notes_expect,
        code=digests.report_digest("findings"),
    script:
        "../../scripts/findings.py"


rule reproduction_notes:
    """docs/reproduction-notes.md: findings.json's notes in templates/notes.md.j2's words
    (no typed number)."""
    input:
        per_job.summary(paths.FINDINGS),
    output:
        per_job.summary(paths.REPRODUCTION_NOTES),
    log:
        paths.LOGS["reproduction_notes"],
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        code=digests.report_digest("reproduction_notes"),
    script:
        "../../scripts/reproduction_notes.py"
