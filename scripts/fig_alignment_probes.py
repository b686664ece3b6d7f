"""Rule fig_alignment_probes: probe tables → paper/figures/fig_alignment_probes.*"""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.studies.penalty_rescue import alignment_probes

    alignment_probes.make(snakemake.input.alignment, snakemake.input.ratios, snakemake.output,
                          **snakemake.params.network, methods=snakemake.params.methods,
                          expect=snakemake.params.expect)
