"""Rule aggregate: validated result files → tidy CSV tables."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.runtime import job  # noqa: E402

with job(snakemake):
    from credit_assign.aggregate import write_tables

    i = snakemake.input
    write_tables(i.train, i.nulls, dict(snakemake.output.items()), timing_paths=i.timings)
