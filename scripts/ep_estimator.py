"""Rule ep_estimator: a seed's stack remade, EP's estimate at every r and precision → JSON."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake) as threads:
    from credit_assign.ep_stack.estimator import ep_estimator
    from credit_assign.jobs import ensure_data

    w = snakemake.wildcards
    ensure_data(snakemake.params.cache)  # a fresh clone's corpus, from this config
    ep_estimator(snakemake.params.cache, w.corpus, int(w.seed), snakemake.params.settings,
                 snakemake.params.study, snakemake.output[0],
                 resume=snakemake.params.resume, threads=threads)
