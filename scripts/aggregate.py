"""Rule aggregate: validated result files → tidy CSV tables."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.runtime import job  # noqa: E402

with job(snakemake):
    from credit_assign.aggregate import write_tables

    write_tables(snakemake.input.train, snakemake.input.nulls, dict(snakemake.output.items()))
