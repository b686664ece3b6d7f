"""Rule variants_gap_map: every recipe's reproduction table → variants_gap.csv,
reproduction_variants.md, fig_variants and fig_variants_key."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.studies.variants import gap_key, gap_map
    from credit_assign.studies.variants.page import write_gap_map

    i, o = snakemake.input, snakemake.output
    names = ["default", *snakemake.params.about]
    # measurement_tables(): the default's measurements.csv, then each variant's, in order
    measured = dict(zip(names, i.measurements, strict=True)) if i.measurements else None
    gaps = write_gap_map(dict(zip(names, i.tables, strict=True)), o.csv,
                         reference_path=i.reference, measurements=measured,
                         default_md=i.default_md, out_md=o.md, about=snakemake.params.about,
                         expect=snakemake.params.expect, study=snakemake.params.study)
    gap_map.make(gaps, [o.pdf, o.png, o.svg], study=snakemake.params.study)
    gap_key.make_key(gaps, [o.key_pdf, o.key_png, o.key_svg], study=snakemake.params.study)
