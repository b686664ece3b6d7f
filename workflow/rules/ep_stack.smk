# The EP stack probe (docs/method.md): one job per (corpus, seed), summary tables, a figure.
# Input functions (per_job.ep_settings, per_job.corpus_version, ...) are in common.smk.


rule prepare_corpus:
    """Read or fetch a character corpus once (sha256 checked) and encode it."""
    output:
        # the manifest (name, sha256 of the text) is what the probes depend on; the cache
        # is no output: a deleted one reruns nothing (CharCorpus.load rebuilds it)
        manifest=paths.CORPUS_MANIFEST,
    log:
        paths.LOGS["prepare_corpus"],
    conda:
        "../../envs/pytorch.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        cache=paths.CORPUS_CACHE,
        text_version=per_job.corpus_version,
    script:
        "../../scripts/prepare_corpus.py"


rule ep_stack_probe:
    """Pretrain the spring-coupled stack by BPTT, then EP vs BPTT per parameter group."""
    input:
        per_job.corpus_manifest,
    output:
        result=paths.EP_RESULT,
        timings=paths.EP_TIMINGS,
    log:
        paths.LOGS["ep_stack_probe"],
    priority: job_params.EP_PRIORITY
    conda:
        "../../envs/pytorch.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        settings=per_job.ep_settings,
        code=per_job.code("ep_stack_probe"),
        # pretraining and probe state, outside the declared outputs so a rerun resumes
        resume=paths.EP_RESUME,
        cache=paths.CORPUS_CACHE,
    script:
        "../../scripts/ep_stack_probe.py"


rule ep_fixed_point:
    """EP against the gradient it estimates: the fixed point's (ep_stack.implicit)."""
    input:
        per_job.fixed_point_manifest,
    output:
        result=paths.EP_FIXED_POINT,
        timings=paths.EP_FIXED_POINT_TIMINGS,
    log:
        paths.LOGS["ep_fixed_point"],
    priority: job_params.EP_PRIORITY
    conda:
        "../../envs/pytorch.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        settings=per_job.ep_fixed_point_settings,
        code=per_job.code("ep_fixed_point"),
        resume=paths.EP_FIXED_POINT_RESUME,
        cache=paths.CORPUS_CACHE,
    script:
        "../../scripts/ep_fixed_point.py"


rule ep_stack_summary:
    """Every probe's cosines (per batch, T1, group) and timings as one long table."""
    input:
        results=per_job.ep_results,
        timings=per_job.ep_timings,
    output:
        cosines=paths.EP_COSINES,
        increments=paths.EP_INCREMENTS,
        pretrain=paths.EP_PRETRAIN,
        timings=paths.EP_TIMINGS_TABLE,
        by_seed=paths.EP_BY_SEED,
        report=paths.EP_REPORT,
    log:
        paths.LOGS["ep_stack_summary"],
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        # the settling criterion is read here only: changing it reruns no probe
        settle=per_job.ep_settle,
        code=digests.report_digest("ep_stack_summary"),
    script:
        "../../scripts/ep_stack_summary.py"


rule ep_question_findings:
    """The EP question judged (config/claims_ep.yaml): its seeds' fixed-point results."""
    input:
        results=per_job.ep_question_runs,
        timings=per_job.ep_question_timings,
        spec=per_job.ep_question_file,
    output:
        findings=paths.EP_QUESTION_FINDINGS,
        batches=paths.EP_QUESTION_BATCHES,
        cosines=paths.EP_QUESTION_COSINES,
        page=paths.EP_QUESTION_MD,
    log:
        paths.LOGS["ep_question_findings"],
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        spec=per_job.ep_question_file,
        code=digests.report_digest("ep_question"),
    script:
        "../../scripts/ep_question.py"


rule fig_ep_fixed_point:
    """EP against the gradient it estimates: block 0's cosine, residual and verdict."""
    input:
        findings=paths.EP_QUESTION_FINDINGS,
        cosines=paths.EP_QUESTION_COSINES,
    output:
        **figure_outputs("fig_ep_fixed_point"),
    log:
        paths.figure_log("fig_ep_fixed_point"),
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        code=digests.report_digest("fig_ep_fixed_point"),
    script:
        "../../scripts/figure.py"


rule ep_question:
    """The EP question in one command: its seeds' runs (from committed code), findings
    and figure."""
    input:
        paths.EP_QUESTION_FINDINGS,
        paths.figures("fig_ep_fixed_point"),


rule fig_ep_stack_cosines:
    """EP against BPTT per parameter group: did the tension reach block 0?"""
    input:
        cosines=paths.EP_COSINES,
        increments=paths.EP_INCREMENTS,
        pretrain=paths.EP_PRETRAIN,
    output:
        **figure_outputs("fig_ep_stack_cosines"),
    log:
        paths.figure_log("fig_ep_stack_cosines"),
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        code=digests.report_digest("fig_ep_stack_cosines"),
    script:
        "../../scripts/figure.py"
