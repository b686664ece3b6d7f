"""Rule ep_question2: one fresh seed of the second EP question → JSON."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake) as threads:
    from credit_assign.ep_stack.question2 import ep_question2
    from credit_assign.jobs import ensure_data

    w = snakemake.wildcards
    ensure_data(snakemake.params.cache)  # a fresh clone's corpus, from this config
    ep_question2(snakemake.params.cache, w.corpus, int(w.seed), snakemake.params.settings,
                 snakemake.params.estimator, snakemake.output[0],
                 resume=snakemake.params.resume, threads=threads)
