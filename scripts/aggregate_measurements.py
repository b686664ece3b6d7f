"""Rule aggregate_measurements: every measure result → summary/measurements.csv."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.runtime import job  # noqa: E402

with job(snakemake):
    from credit_assign.aggregate import write_measurement_table

    write_measurement_table(snakemake.input, snakemake.output[0])
