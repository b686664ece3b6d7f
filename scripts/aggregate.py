"""Step aggregate: validated result files → tidy CSV tables."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.analysis.aggregate import write_tables

    i = snakemake.input
    write_tables(i.train, i.nulls, dict(snakemake.output.items()), timing_paths=i.timings)
