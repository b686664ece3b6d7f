"""Rule fig_primer_phases: the primer schematic (a drawing, no inputs)."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.script import snakemake_script  # noqa: E402

with snakemake_script(snakemake):
    from credit_assign.reporting.figures import primer_phases

    primer_phases.make(snakemake.output)
