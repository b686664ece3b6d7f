"""Rule claims_verdicts: the claims' tables → verdicts, effects per seed, findings, page."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.studies.claims.page import write

    write(snakemake.input.spec, snakemake.input, snakemake.params.expect, snakemake.output,
          root=snakemake.scriptdir + "/..")
