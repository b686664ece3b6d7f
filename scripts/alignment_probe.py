"""Step alignment_probe: alignment of every learning rule at a run's saved checkpoints → JSON."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake) as threads:
    from credit_assign.jobs import alignment_probe

    alignment_probe(snakemake.input.snapshots, snakemake.params.cache, snakemake.params.settings,
                    snakemake.output[0], threads=threads)
