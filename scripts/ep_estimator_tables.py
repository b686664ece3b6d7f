"""Rule ep_estimator_tables: the precision study's results here → one table (a row per
seed, batch, precision, stencil, r and parameter group)."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    import json

    from credit_assign.infra.files import atomic_write_text
    from credit_assign.studies.ep_estimator.table import table

    results = [json.loads(open(p, encoding="utf-8").read()) for p in snakemake.input]
    atomic_write_text(snakemake.output[0], table(results).to_csv(index=False))
