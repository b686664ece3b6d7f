"""Rule claims_from_published: docs/findings.json's claims section (as published) judged
again with today's code against the claims file →
results/<dataset>/default/claims/findings_from_published.json."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.reporting.claims_page import write_rejudged

    i = snakemake.input
    write_rejudged(i.published, i.spec, i.history, snakemake.output[0],
                   root=snakemake.scriptdir + "/..")
