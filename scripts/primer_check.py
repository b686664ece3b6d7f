"""Step primer_check: EP estimate vs BP over a β grid (float64) → JSON."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake) as threads:
    from credit_assign.jobs import primer_check

    primer_check(snakemake.params.settings, snakemake.output[0], threads=threads)
