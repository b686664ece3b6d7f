# The reproduction paper: numbers.tex from the summary tables, then latexmk. Not part
# of `all` (TeX is optional): ask for paper/ms.pdf or paper/arxiv.tar.gz. Helpers
# (per_job.paper_number_inputs, per_job.paper_sources, ...) are in common.smk.


rule paper_numbers:
    """Every number the manuscript states, as a TeX macro, from the summary tables, and
    the findings' outcomes and values its hand-written sentences assert and quote."""
    input:
        unpack(per_job.paper_number_inputs),
    output:
        numbers=paths.PAPER_NUMBERS,
        findings=paths.PAPER_FINDINGS,
    log:
        paths.LOGS["paper_numbers"],
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        config=per_job.paper_number_config,
        expect=per_job.table_expect,
        code=digests.report_digest("paper_numbers"),
    script:
        "../../scripts/paper_numbers.py"


rule paper_claims:
    """The claims' verdicts (where the config has claims) and what was fixed when, as
    TeX macros (studies/claims/claims.tex.j2)."""
    input:
        unpack(per_job.paper_claims_inputs),
    output:
        paths.PAPER_CLAIMS,
    log:
        paths.LOGS["paper_claims"],
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        code=digests.report_digest("paper_claims"),
    script:
        "../../scripts/paper_claims.py"


rule paper:
    """paper/ms.pdf: latexmk + pdflatex on ms.tex, numbers.tex and the figure PDFs.
    pdflatex runs with -no-shell-escape and kpathsea's openin_any=p (no file read by an
    absolute or parent path), so a string in numbers.tex can neither run a program nor
    read a file; every such string is escaped (credit_assign.reporting.render.tex_escape) too.
    """
    input:
        unpack(paper_build_inputs),
    output:
        paths.PAPER_PDF,
    log:
        paths.LOGS["paper"],
    conda:
        "../../envs/paper.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        code=digests.report_digest("build_paper"),
    script:
        "../../scripts/build_paper.py"


rule arxiv:
    """paper/arxiv.tar.gz: ms.tex, numbers.tex and the figures, compilable on their own."""
    input:
        unpack(paper_sources),
    output:
        paths.ARXIV,
    log:
        paths.LOGS["arxiv"],
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        code=digests.report_digest("bundle_paper"),
    script:
        "../../scripts/bundle_paper.py"
