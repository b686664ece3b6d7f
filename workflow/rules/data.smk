rule prepare_data:
    """Decode a dataset once into a tensor cache: epochs never touch image files."""
    output:
        # the cache, and a small manifest (its info) that consumers depend on: a deleted
        # cache is rebuilt without retraining anything (see dataset_cache in common.smk)
        cache="data/{dataset}.pt",
        manifest="data/{dataset}.json",
    log:
        "logs/prepare_data/{dataset}.log",
    conda:
        "../../envs/pytorch.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        source=data_source,
    script:
        "../../scripts/prepare_data.py"
