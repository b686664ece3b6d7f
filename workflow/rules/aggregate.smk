rule aggregate:
    """Validate every result file and write tidy tables (one row per observation)."""
    input:
        train=train_metrics,
        timings=train_timings,
        nulls=null_results,
    output:
        runs=report(
            "results/{dataset}/summary/runs.csv",
            caption="../report/table.rst",
            category="Tables",
        ),
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


rule reproduction:
    """Our numbers beside the paper's (config reproduction.reference), same tables as the figures."""
    input:
        reference=config["reproduction"]["reference"] or [],
        runs="results/{dataset}/summary/runs.csv",
        layers="results/{dataset}/summary/layers.csv",
        nulls="results/{dataset}/summary/nulls.csv",
    output:
        csv=report(
            "results/{dataset}/summary/reproduction.csv",
            caption="../report/table.rst",
            category="Tables",
        ),
        md="results/{dataset}/summary/reproduction.md",
    log:
        "logs/aggregate/{dataset}_reproduction.log",
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        config=config,
    script:
        "../../scripts/reproduction.py"


rule aggregate_probes:
    """Probe results → tidy tables: per-layer alignment, loss-decrease ratios."""
    input:
        probe_results,
    output:
        alignment="results/{dataset}/summary/probe_alignment.csv",
        ratios="results/{dataset}/summary/probe_ratios.csv",
    log:
        "logs/aggregate/{dataset}_probes.log",
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../../scripts/aggregate_probes.py"


rule aggregate_measurements:
    """Measurement variants of every trained model → one tidy table."""
    input:
        measure_results,
    output:
        "results/{dataset}/summary/measurements.csv",
    log:
        "logs/aggregate/{dataset}_measurements.log",
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../../scripts/aggregate_measurements.py"
