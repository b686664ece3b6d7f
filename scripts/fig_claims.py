"""Rule fig_claims: findings.json → paper/figures/fig_claims.{pdf,png,svg}."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.script import snakemake_script  # noqa: E402

with snakemake_script(snakemake):
    from credit_assign.reporting.figures import claims

    claims.make(snakemake.input.findings, snakemake.output)
