"""Rule fig4_penalty_rescue: summary tables → paper/figures/fig4_penalty_rescue.{pdf,png,svg}."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.studies.penalty_rescue import figure as penalty_rescue

    penalty_rescue.make(snakemake.input.runs, snakemake.input.epochs, snakemake.input.nulls,
                        snakemake.output, penalty_lambda=snakemake.params.penalty_lambda,
                        dataset=snakemake.params.dataset, methods=snakemake.params.methods,
                        expect=snakemake.params.expect)
