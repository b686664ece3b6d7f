"""Rule paper_claims: findings.json (where the config has claims; the published findings
while the claims' runs are not all in the record) + config/history.yaml → paper/claims.tex."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.reporting.claims_page import write_tex

    i = snakemake.input
    write_tex(i.get("findings"), i.history, snakemake.output[0],
              root=snakemake.scriptdir + "/..", published=i.get("published"),
              spec_path=i.get("spec"))
