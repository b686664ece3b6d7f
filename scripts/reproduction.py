"""Rule reproduction: summary tables + reference file → reproduction.{csv,md}."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.runtime import job  # noqa: E402

with job(snakemake):
    from credit_assign.reproduction import context, write

    i, o = snakemake.input, snakemake.output
    write(i.reference, i.runs, i.layers, i.nulls, o.csv, o.md, context(snakemake.params.config))
