"""Rule fig_primer_check: primer_check.json → paper/figures/fig_primer_check.{pdf,png,svg}."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.studies.primer import primer_check

    primer_check.make(snakemake.input[0], snakemake.output)
