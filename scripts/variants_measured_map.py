"""Rule variants_measured_map: variants_gap.csv → paper/figures/fig_variants_measured.*
(the recipes' models measured the other ways, one panel per measurement)."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.reporting.figures import variants

    variants.make_measured(snakemake.input.gaps, snakemake.output)
