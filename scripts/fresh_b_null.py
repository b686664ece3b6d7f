"""Step fresh_b_null: deep cosine of a trained DFA model under K fresh feedback draws."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake) as threads:
    from credit_assign.jobs import fresh_b_null

    fresh_b_null(snakemake.input.model, snakemake.params.cache, snakemake.params.draws,
                 snakemake.output[0], device=snakemake.params.device, threads=threads)
