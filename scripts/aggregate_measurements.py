"""Step aggregate_measurements: every measure result → summary/measurements.csv."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.analysis.aggregate import write_measurement_table

    write_measurement_table(snakemake.input, snakemake.output[0])
