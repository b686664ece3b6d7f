"""Rule fig_dose: the dose study's per-run table → paper/figures/fig_dose.{pdf,png,svg}."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.studies.dose import figure

    figure.make(snakemake.input.runs, snakemake.output)
