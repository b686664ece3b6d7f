"""Rule ep_question: the EP question's fixed-point results → its findings, tables and page."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.studies.ep_question.page import write_question

    write_question(snakemake.input.results, snakemake.input.timings, snakemake.params.spec,
                   snakemake.output)
