"""Rule measure: measurement variants of one trained model (no retraining)."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.script import snakemake_script  # noqa: E402

with snakemake_script(snakemake) as threads:
    from credit_assign.jobs import measure

    measure(snakemake.input.model, snakemake.params.cache, snakemake.params.batch,
            snakemake.output[0], device=snakemake.params.device, threads=threads,
            batch_sizes=snakemake.params.batch_sizes)
