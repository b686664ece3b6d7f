"""Rule fig_claims: findings.json → paper/figures/fig_claims.{pdf,png,svg}."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.studies.claims import figure

    figure.make(snakemake.input.findings, snakemake.output)
