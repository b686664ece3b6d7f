"""Rule aggregate_alignment_probes: probe results → tidy CSVs."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.analysis.aggregate import write_probe_tables

    write_probe_tables(snakemake.input, dict(snakemake.output.items()))
