# EP's second question (issue #55; config/claims_ep2.yaml, pre-registered): one job per
# fresh seed, from committed code only; `snakemake --cores 2 ep_question2_runs` makes
# what the record lacks, `snakemake ep_question2_judged` judges what it holds.
from credit_assign.studies.ep_question2 import plan as ep2_plan


rule ep_question2:
    """One fresh seed: the stack, its fixed point, the implicit gradient, EP's cells."""
    input:
        ep2_plan.manifest,
    output:
        ep2_plan.RESULT,
    log:
        ep2_plan.LOGS["ep_question2"],
    priority: job_params.EP_PRIORITY
    conda:
        "../../envs/pytorch.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=240,
    params:
        settings=per_job.ep_estimator_settings,
        estimator=ep2_plan.estimator,
        code=per_job.code("ep_question2"),
        resume=ep2_plan.RESUME,
        cache=paths.CORPUS_CACHE,
    script:
        "../../scripts/ep_question2.py"


rule ep_question2_runs:
    """Every fresh seed's run of the plan."""
    input:
        ep2_plan.targets,


rule ep_question2_findings:
    """The runs here → findings (the verdict once all are here), seed table, page."""
    input:
        plan=ep2_plan.PLAN,
        results=ep2_plan.present,
    output:
        findings=ep2_plan.OUT["findings"],
        seeds=ep2_plan.OUT["seeds"],
        md=ep2_plan.OUT["md"],
    log:
        ep2_plan.LOGS["ep_question2_findings"],
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        code=digests.report_digest("ep_question2_findings"),
    script:
        "../../scripts/ep_question2_findings.py"


rule ep_question_page:
    """Both EP questions and the precision study on one page, and their numbers and
    guards for the paper."""
    input:
        first_findings=paths.EP_QUESTION_FINDINGS,
        first_md=paths.EP_QUESTION_MD,
        table=ep_estimator_files.TABLE,
        remade=ep_estimator_files.REMADE,
        q2_findings=ep2_plan.OUT["findings"],
        q2_md=ep2_plan.OUT["md"],
    output:
        page=ep2_plan.OUT["page"],
        tex=ep2_plan.OUT["tex"],
        findings=ep2_plan.OUT["all_findings"],
    log:
        ep2_plan.LOGS["ep_question_page"],
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        code=digests.report_digest("ep_question_page"),
    script:
        "../../scripts/ep_question_page.py"


rule ep_question2_judged:
    """The second EP question's findings, and the page of both, from the record."""
    input:
        ep2_plan.OUT["page"],
        paths.figure("fig_ep_estimator", "png"),
