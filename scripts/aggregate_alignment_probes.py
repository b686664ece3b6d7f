"""Rule aggregate_probes: probe results → tidy CSVs."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.script import snakemake_script  # noqa: E402

with snakemake_script(snakemake):
    from credit_assign.reporting.aggregate import write_probe_tables

    write_probe_tables(snakemake.input, dict(snakemake.output.items()))
