"""Rule fig_primer_phases: the primer schematic (a drawing, no inputs)."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.studies.primer import primer_phases

    primer_phases.make(snakemake.output)
