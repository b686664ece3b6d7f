rule train:
    """One (method, λ, seed) training run: per-epoch metrics and the final model."""
    input:
        data="data/{dataset}.pt",
    output:
        metrics="results/{dataset}/train/{method}/lam{lam}/seed{seed}/metrics.json",
        model="results/{dataset}/train/{method}/lam{lam}/seed{seed}/model.pt",
    params:
        run=run_config,
        # per-epoch state, outside the declared outputs so a rerun can resume from it
        resume="results/{dataset}/train/{method}/lam{lam}/seed{seed}/resume.pt",
    log:
        "logs/train/{dataset}/{method}_lam{lam}_seed{seed}.log",
    threads: 1
    resources:
        mem_mb=3000,
        runtime=120,
    conda:
        "../../envs/pytorch.yaml"
    script:
        "../../scripts/train.py"


rule fresh_b_null:
    """Deep cosine of a trained DFA model with K fresh feedback draws (the chance level)."""
    input:
        model="results/{dataset}/train/{method}/lam{lam}/seed{seed}/model.pt",
        data="data/{dataset}.pt",
    output:
        "results/{dataset}/fresh_b_null/{method}/lam{lam}/seed{seed}.json",
    params:
        draws=config["fresh_b_null"]["draws"],
        device=config["training"]["device"],
    log:
        "logs/fresh_b_null/{dataset}/{method}_lam{lam}_seed{seed}.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=15,
    conda:
        "../../envs/pytorch.yaml"
    script:
        "../../scripts/fresh_b_null.py"
