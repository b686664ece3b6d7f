rule fig4_penalty_rescue:
    """Penalty rescue: ‖h_L‖ per epoch, deep cosines against the null, accuracy."""
    input:
        runs=f"results/{config['dataset']}/summary/runs.csv",
        epochs=f"results/{config['dataset']}/summary/epochs.csv",
        nulls=f"results/{config['dataset']}/summary/nulls.csv",
    output:
        figure("fig4_penalty_rescue"),
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
    script:
        "../../scripts/fig4_penalty_rescue.py"
