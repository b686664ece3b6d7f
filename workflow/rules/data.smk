rule prepare_data:
    """Decode a dataset once into a tensor cache: epochs never touch image files."""
    output:
        "data/{dataset}.pt",
    params:
        source=data_source,
    log:
        "logs/prepare_data/{dataset}.log",
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    conda:
        "../../envs/pytorch.yaml"
    script:
        "../../scripts/prepare_data.py"
