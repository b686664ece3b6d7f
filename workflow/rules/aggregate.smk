rule aggregate:
    """Validate every result file and write tidy tables (one row per observation)."""
    input:
        train=train_metrics(),
        nulls=null_results(),
    output:
        runs="results/{dataset}/summary/runs.csv",
        epochs="results/{dataset}/summary/epochs.csv",
        layers="results/{dataset}/summary/layers.csv",
        nulls="results/{dataset}/summary/nulls.csv",
    log:
        "logs/aggregate/{dataset}.log",
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../../scripts/aggregate.py"
