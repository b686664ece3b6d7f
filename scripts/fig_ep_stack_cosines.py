"""Rule fig_ep_stack_cosines: summary tables → paper/figures/fig_ep_stack_cosines.*."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.studies.ep_probe import figure

    figure.make(snakemake.input, snakemake.output)
