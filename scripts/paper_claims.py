"""Rule paper_claims: the claims' findings (where the config has claims: those their
runs make) + config/history.yaml → paper/claims.tex."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.studies.claims.page import write_tex

    write_tex(snakemake.input.get("findings"), snakemake.input.history, snakemake.output[0],
              root=snakemake.scriptdir + "/..")
