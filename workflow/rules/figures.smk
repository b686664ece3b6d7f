rule fig4_penalty_rescue:
    """Penalty rescue: ‖h_L‖ per epoch, deep cosines against the null, accuracy."""
    input:
        runs=f"results/{config['dataset']}/summary/runs.csv",
        epochs=f"results/{config['dataset']}/summary/epochs.csv",
        nulls=f"results/{config['dataset']}/summary/nulls.csv",
    output:
        pdf="paper/figures/fig4_penalty_rescue.pdf",
        png=report(
            "paper/figures/fig4_penalty_rescue.png",
            caption="../report/fig4_penalty_rescue.rst",
            category="Figures",
        ),
        svg="paper/figures/fig4_penalty_rescue.svg",
    log:
        "logs/figures/fig4_penalty_rescue.log",
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        penalty_lambda=config["figures"]["penalty_lambda"],
        dataset=config["dataset"],
        methods=method_styles(),
        expect=table_expect(),
    script:
        "../../scripts/fig4_penalty_rescue.py"


rule fig_primer_phases:
    """The primer schematic: needs no results."""
    output:
        pdf="paper/figures/fig_primer_phases.pdf",
        png=report(
            "paper/figures/fig_primer_phases.png",
            caption="../report/fig_primer_phases.rst",
            category="Figures",
        ),
        svg="paper/figures/fig_primer_phases.svg",
    log:
        "logs/figures/fig_primer_phases.log",
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../../scripts/fig_primer_phases.py"


rule fig_primer_check:
    """Error of the EP estimate vs β, one-sided and symmetric."""
    input:
        "results/primer_check/primer_check.json",
    output:
        pdf="paper/figures/fig_primer_check.pdf",
        png=report(
            "paper/figures/fig_primer_check.png",
            caption="../report/fig_primer_check.rst",
            category="Figures",
        ),
        svg="paper/figures/fig_primer_check.svg",
    log:
        "logs/figures/fig_primer_check.log",
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../../scripts/fig_primer_check.py"


rule fig_alignment_probes:
    """Cosine of each rule's signal with the true gradient, per layer and across training."""
    input:
        alignment=f"results/{config['dataset']}/summary/probe_alignment.csv",
        ratios=f"results/{config['dataset']}/summary/probe_ratios.csv",
    output:
        pdf="paper/figures/fig_alignment_probes.pdf",
        png=report(
            "paper/figures/fig_alignment_probes.png",
            caption="../report/fig_alignment_probes.rst",
            category="Figures",
        ),
        svg="paper/figures/fig_alignment_probes.svg",
    log:
        "logs/figures/fig_alignment_probes.log",
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        network=config["probes"]["network"],
        methods=method_styles(),
        expect=table_expect()["runs"],
    script:
        "../../scripts/fig_alignment_probes.py"
