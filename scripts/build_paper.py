"""Step paper: latexmk + pdflatex → paper/ms.pdf (latexmk's output: paper/build/)."""
import logging
import sys

sys.path.insert(0, f"{snakemake.scriptdir}/../src")
from credit_assign.infra.snakejob import snakemake_job  # noqa: E402

with snakemake_job(snakemake):
    from credit_assign.reporting.tex_build import build_pdf

    latexmk_log = build_pdf(snakemake.input.tex, snakemake.output[0])
    logging.getLogger("credit_assign").info("built %s (latexmk's output: %s)",
                                            snakemake.output[0], latexmk_log)
