"""Step measure: measurement variants of one trained model (no retraining)."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake) as threads:
    from credit_assign.jobs import measure

    measure(snakemake.input.model, snakemake.params.cache, snakemake.params.batch,
            snakemake.output[0], device=snakemake.params.device, threads=threads,
            batch_sizes=snakemake.params.batch_sizes)
