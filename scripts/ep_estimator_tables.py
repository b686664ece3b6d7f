"""Rule ep_estimator_tables: the precision study's results here → one table (a row per
seed, batch, precision, stencil, r and parameter group), and each remade stack beside the
one the first EP question recorded for its seed."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    import json

    import pandas as pd

    from credit_assign.infra.files import atomic_write_text
    from credit_assign.studies.ep_estimator.table import REMADE, remade, table

    def load(path):
        return json.loads(open(path, encoding="utf-8").read())

    results = [load(p) for p in snakemake.input.results]
    atomic_write_text(snakemake.output.table, table(results).to_csv(index=False))
    # each remade stack beside the one the first EP question recorded for its seed
    recorded = {load(p)["seed"]: load(p) for p in snakemake.input.recorded}
    rows = [remade(r, recorded[r["seed"]]) for r in results if r["seed"] in recorded]
    atomic_write_text(snakemake.output.remade,
                      pd.DataFrame(rows, columns=REMADE).to_csv(index=False))
