"""Rule ep_fixed_point: pretrain the stack, EP against the fixed-point gradient → JSON."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake) as threads:
    from credit_assign.jobs import ep_fixed_point

    w = snakemake.wildcards
    ep_fixed_point(snakemake.params.cache, w.corpus, int(w.seed), snakemake.params.settings,
                   snakemake.output.result, snakemake.output.timings,
                   resume=snakemake.params.resume, threads=threads)
