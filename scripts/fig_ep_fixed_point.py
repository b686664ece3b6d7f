"""Rule fig_ep_fixed_point: the EP question's findings → paper/figures/fig_ep_fixed_point.*."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.studies.ep_question import figure

    figure.make(snakemake.input, snakemake.output)
