"""Rule variants_gap_map: every recipe's reproduction table → variants_gap.csv + fig_variants."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.runtime import job  # noqa: E402

with job(snakemake):
    from credit_assign.reproduction import write_gap_map

    names = ["default", *snakemake.params.variants]
    write_gap_map(dict(zip(names, snakemake.input)), snakemake.output.csv,
                  [snakemake.output.pdf, snakemake.output.png, snakemake.output.svg])
