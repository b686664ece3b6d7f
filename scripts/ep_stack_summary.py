"""Rule ep_stack_summary: every EP stack probe → long CSV tables and report.md, with
each estimate flagged settled or not under config ep_stack.settle."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.studies.ep_probe.page import write_summary

    write_summary(snakemake.input.results, snakemake.input.timings, snakemake.output,
                  snakemake.params.settle)
