rule prepare_data:
    """Decode a dataset once into a tensor cache: epochs never touch image files."""
    output:
        # the manifest (the data's info and digest) is what jobs depend on; the cache
        # beside it (DATA_CACHE) is not an output, so that a deleted cache reruns no job:
        # the first job that reads it rebuilds it (credit_assign.infra.data.load)
        manifest=paths.DATA_MANIFEST,
    log:
        paths.LOGS["prepare_data"],
    conda:
        "../../envs/pytorch.yaml"
    threads: 1
    resources:
        mem_mb=6000,
        runtime=60,
    params:
        cache=paths.DATA_CACHE,
        source=per_job.data_source,
        source_stamp=per_job.source_stamp,
    script:
        "../../scripts/prepare_data.py"
