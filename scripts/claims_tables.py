"""Rule claims_tables: the runs the claims read → runs, epochs, per-layer null, EP tables."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.studies.claims.page import write_claims_tables

    i = snakemake.input
    write_claims_tables(i.train, i.timings, i.nulls, i.ep, i.ep_timings, snakemake.output,
                        snakemake.params.settle)
