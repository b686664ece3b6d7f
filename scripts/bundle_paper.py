"""Step arxiv: ms.tex + numbers.tex + figure PDFs → paper/arxiv.tar.gz."""
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.reporting.tex_build import bundle

    i = snakemake.input
    bundle(i.tex, i.numbers, i.figures, snakemake.output[0])
