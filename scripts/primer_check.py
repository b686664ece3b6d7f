"""Rule primer_check: EP estimate vs BP over a β grid (float64) → JSON."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.runtime import job  # noqa: E402

with job(snakemake) as threads:
    from credit_assign.primer_check import primer_check_job

    primer_check_job(snakemake.params.settings, snakemake.output[0], threads=threads)
