rule fig4_penalty_rescue:
    """Penalty rescue: ‖h_L‖ per epoch, deep cosines against the null, accuracy."""
    input:
        runs=f"results/{config['dataset']}/summary/runs.csv",
        epochs=f"results/{config['dataset']}/summary/epochs.csv",
        nulls=f"results/{config['dataset']}/summary/nulls.csv",
    output:
        figure("fig4_penalty_rescue"),
    params:
        penalty_lambda=config["figures"]["penalty_lambda"],
        dataset=config["dataset"],
    log:
        "logs/figures/fig4_penalty_rescue.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/figures.yaml"
    script:
        "../../scripts/fig4_penalty_rescue.py"
