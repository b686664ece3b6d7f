"""Rule fig_ep_estimator: the precision study's table → paper/figures/fig_ep_estimator."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.studies.ep_estimator import figure

    figure.make(snakemake.input[0], snakemake.output)
