"""Rule ep_stack_probe: pretrain the stack, probe EP against BPTT → JSON + timings."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.runtime import job  # noqa: E402

with job(snakemake) as threads:
    from credit_assign.ep_stack.probe import ep_probe_job

    ep_probe_job(snakemake.params.cache, snakemake.wildcards.corpus, int(snakemake.wildcards.seed),
                 snakemake.params.settings, snakemake.output.result, snakemake.output.timings,
                 resume=snakemake.params.resume, threads=threads)
