rule primer_check:
    """Numerical check of the primer schematic: free phase = forward pass, EP → BP as β → 0."""
    output:
        paths.PRIMER_CHECK,
    log:
        paths.LOGS["primer_check"],
    conda:
        "../../envs/pytorch.yaml"
    threads: 1
    resources:
        **REPORT_JOB,
    params:
        settings=config["primer_check"],
        code=digests.report_digest("primer_check"),
    script:
        "../../scripts/primer_check.py"
