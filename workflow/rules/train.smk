rule train:
    """One (method, λ, seed) training run: per-epoch metrics and the final model."""
    input:
        data=per_job.dataset_manifest,
    output:
        metrics=paths.METRICS,
        # the weights are not part of the record (results/README.md): deleted once the
        # jobs that read them are done, rebuilt when one needs them again;
        # `snakemake --notemp` keeps them
        model=temp(paths.MODEL),
        timings=paths.TIMINGS,
        snapshots=temp(paths.SNAPSHOTS),
    log:
        paths.LOGS["train"],
    priority: per_job.train_priority
    conda:
        "../../envs/pytorch.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        cache=per_job.dataset_cache_path,
        run=per_job.run_config,
        # the science it computes with (credit_assign.planning.code): its rule's edit reruns it
        code=per_job.code("train"),
        snapshot_epochs=config["probes"]["epochs"],
        # per-epoch state, outside the declared outputs so a rerun can resume from it
        resume=paths.RESUME,
    script:
        "../../scripts/train.py"


rule fresh_b_null:
    """Deep cosine of a trained DFA model with K fresh feedback draws (the chance level)."""
    input:
        model=paths.MODEL,
        data=per_job.dataset_manifest,
    output:
        paths.NULL,
    log:
        paths.LOGS["fresh_b_null"],
    conda:
        "../../envs/pytorch.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=30,
    params:
        cache=per_job.dataset_cache_path,
        draws=config["fresh_b_null"]["draws"],
        code=per_job.code("fresh_b_null"),
        device=config["training"]["device"],
    script:
        "../../scripts/fresh_b_null.py"


rule alignment_probe:
    """Every rule's alignment with the true gradient at a run's saved checkpoints."""
    input:
        snapshots=paths.SNAPSHOTS,
        data=per_job.dataset_manifest,
    output:
        paths.PROBE,
    log:
        paths.LOGS["alignment_probe"],
    conda:
        "../../envs/pytorch.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        cache=per_job.dataset_cache_path,
        settings=per_job.probe_settings,
        code=per_job.code("alignment_probe"),
    script:
        "../../scripts/alignment_probe.py"


rule measure:
    """||h_L|| and the cosines of a trained model (the default's or a variant's: any
    {dataset}), measured the ways a paper might have (credit_assign.science.measurement).
    """
    input:
        model=paths.MODEL,
        data=per_job.dataset_manifest,
    output:
        paths.MEASURE,
    log:
        paths.LOGS["measure"],
    conda:
        "../../envs/pytorch.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        cache=per_job.dataset_cache_path,
        batch=config["measurements"]["batch"],
        code=per_job.code("measure"),
        batch_sizes=config["measurements"]["batch_sizes"],
        device=config["training"]["device"],
    script:
        "../../scripts/measure.py"
