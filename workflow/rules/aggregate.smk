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
        info=dataset_manifest,
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
        config=reproduction_config,
        expect=dataset_expect,
    script:
        "../../scripts/reproduction.py"


rule aggregate_alignment_probes:
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
        "../../scripts/aggregate_alignment_probes.py"


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


rule variants_gap_map:
    """Every paper number under the default recipe and each variant, and each recipe's
    models under each measurement variant, in tolerance units; the default's
    reproduction.md with the study after it; fig_variants (the recipes' own numbers:
    the measurements are rule variants_measured_map's figure).
    """
    input:
        reference=config["reproduction"]["reference"] or [],
        default_md=f"results/{config['dataset']}/summary/reproduction.md",
        tables=[f"results/{config['dataset']}/summary/reproduction.csv"]
        + [f"results/{ds}/summary/reproduction.csv" for ds in variant_datasets()],
        measurements=measurement_tables(),
    output:
        csv=f"results/{config['dataset']}/summary/variants_gap.csv",
        md=f"results/{config['dataset']}/summary/reproduction_variants.md",
        pdf="paper/figures/fig_variants.pdf",
        png=report(
            "paper/figures/fig_variants.png",
            caption="../report/fig_variants.rst",
            category="Figures",
        ),
        svg="paper/figures/fig_variants.svg",
    log:
        "logs/figures/fig_variants.log",
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        about={
            name: {k: v.get(k, []) for k in ("kind", "description", "methods")}
            | {"seeds": study_seeds()}
            for name, v in config["variants"].items()
        },
        study=config["study"],
        expect=gap_map_expect(),
    script:
        "../../scripts/variants_gap_map.py"


rule variants_measured_map:
    """The gap map's measurement row sets on a page of their own: one panel per
    measurement variant (the numbers it remeasures under every recipe).
    """
    input:
        gaps=f"results/{config['dataset']}/summary/variants_gap.csv",
    output:
        pdf="paper/figures/fig_variants_measured.pdf",
        png=report(
            "paper/figures/fig_variants_measured.png",
            caption="../report/fig_variants_measured.rst",
            category="Figures",
        ),
        svg="paper/figures/fig_variants_measured.svg",
    log:
        "logs/figures/fig_variants_measured.log",
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../../scripts/variants_measured_map.py"


rule variants:
    """The recipe-variant study (run on purpose): every variant's runs and tables, the gap map."""
    input:
        variant_targets(),


rule reproduction_notes:
    """docs/reproduction-notes.md, generated from the study's tables (no typed number)."""
    input:
        info=DATA_MANIFEST.format(dataset=config["dataset"]),
        runs=f"results/{config['dataset']}/summary/runs.csv",
        epochs=f"results/{config['dataset']}/summary/epochs.csv",
        layers=f"results/{config['dataset']}/summary/layers.csv",
        nulls=f"results/{config['dataset']}/summary/nulls.csv",
        gaps=f"results/{config['dataset']}/summary/variants_gap.csv",
        variant_runs=[f"results/{ds}/summary/runs.csv" for ds in variant_datasets()],
        measurements=(
            [f"results/{config['dataset']}/summary/measurements.csv"]
            if config["measurements"]["run"]
            else []
        ),
    output:
        f"results/{config['dataset']}/summary/reproduction_notes.md",
    log:
        "logs/aggregate/reproduction_notes.log",
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        variants=list(config["variants"]),
        study=config["study"],
        penalty=config["figures"]["penalty_lambda"],
        compute=study_compute(),
        expect=notes_expect(),
    script:
        "../../scripts/reproduction_notes.py"
