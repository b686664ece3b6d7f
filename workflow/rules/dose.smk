# What carries the penalty's rescue (config/claims_dose.yaml, issue #56): the λ dose and
# its arms. `snakemake --cores 2 dose_runs --configfile config/config.yaml config/dose.yaml`
# trains what the record lacks (from committed code only: a clean worktree, as
# results/README.md says); `snakemake dose` with the same two configs (the arms are its
# recipes) judges and draws what the record holds, each table once all its runs are here.
from credit_assign.studies.dose import plan as dose_plan


rule dose_tables:
    """The dose study's runs → per-run and per-epoch tables, findings, page."""
    input:
        plan=dose_plan.plan_file,
        results=dose_plan.present,
    output:
        runs=dose_plan.OUT["runs"],
        epochs=dose_plan.OUT["epochs"],
        findings=dose_plan.OUT["findings"],
        md=dose_plan.OUT["md"],
    log:
        dose_plan.LOGS["dose_tables"],
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        code=digests.report_digest("dose_tables"),
    script:
        "../../scripts/dose_tables.py"


rule fig_dose:
    """Accuracy, norms and alignment against λ, and the arms, at print size."""
    input:
        runs=dose_plan.OUT["runs"],
    output:
        **figure_outputs("fig_dose"),
    log:
        paths.figure_log("fig_dose"),
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        code=digests.report_digest("fig_dose"),
    script:
        "../../scripts/figure.py"


rule paper_dose:
    """The dose study's numbers and guards for the paper's section (paper/dose.tex)."""
    input:
        findings=dose_plan.OUT["findings"],
        runs=dose_plan.OUT["runs"],
    output:
        dose_plan.OUT["tex"],
    log:
        dose_plan.LOGS["paper_dose"],
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        code=digests.report_digest("paper_dose"),
    script:
        "../../scripts/paper_dose.py"


rule dose:
    """The dose study's page and figure from the record."""
    input:
        dose_plan.OUT["md"],
        paths.figure("fig_dose", "pdf"),


rule dose_runs:
    """Every run the dose study reads (lay config/dose.yaml over the paper config)."""
    input:
        dose_plan.all_inputs,
