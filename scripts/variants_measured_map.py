"""Rule variants_measured_map: variants_gap.csv → paper/figures/fig_variants_measured.* and
fig_variants_measured_eps.* (the recipes' models measured the other ways, one panel per
measurement; the epsilon cosines on the second page)."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.studies.variants import gap_measured

    out = snakemake.output
    gap_measured.make_measured(snakemake.input.gaps, {
        "fig_variants_measured": [out.pdf, out.png, out.svg],
        "fig_variants_measured_eps": [out.eps_pdf, out.eps_png, out.eps_svg]},
        study=snakemake.params.study)
