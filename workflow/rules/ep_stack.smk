# The EP stack probe (docs/method.md): one job per (corpus, seed), summary tables, a figure.
# Helpers (ep_results, ep_settings, data_source, ...) are in common.smk.


rule prepare_corpus:
    """Read or fetch a character corpus once (sha256 checked) and encode it."""
    output:
        # the manifest (name, sha256 of the text) is what the probes depend on; the cache
        # is no output: a deleted one reruns nothing (CharCorpus.load rebuilds it)
        manifest=CORPUS_MANIFEST,
    log:
        "logs/prepare_corpus/{corpus}.log",
    conda:
        "../../envs/pytorch.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        cache=CORPUS_CACHE,
        text_version=corpus_version,
    script:
        "../../scripts/prepare_corpus.py"


rule ep_stack_probe:
    """Pretrain the spring-coupled stack by BPTT, then EP vs BPTT per parameter group."""
    input:
        CORPUS_MANIFEST,
    output:
        result="results/ep_stack/{corpus}/{precision}/seed{seed}.json",
        timings="results/ep_stack/{corpus}/{precision}/seed{seed}.timings.json",
    log:
        "logs/ep_stack/{corpus}_{precision}_seed{seed}.log",
    priority: EP_PRIORITY
    conda:
        "../../envs/pytorch.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        settings=ep_settings,
        # pretraining and probe state, outside the declared outputs so a rerun resumes
        resume="results/ep_stack/{corpus}/{precision}/seed{seed}.resume.pt",
        cache=CORPUS_CACHE,
    script:
        "../../scripts/ep_stack_probe.py"


rule ep_stack_summary:
    """Every probe's cosines (per batch, T1, group) and timings as one long table."""
    input:
        results=ep_results(),
        timings=[p.replace(".json", ".timings.json") for p in ep_results()],
    output:
        cosines="results/ep_stack/summary/cosines.csv",
        increments="results/ep_stack/summary/increments.csv",
        pretrain="results/ep_stack/summary/pretrain.csv",
        timings="results/ep_stack/summary/timings.csv",
        by_seed="results/ep_stack/summary/by_seed.csv",
        report="results/ep_stack/summary/report.md",
    log:
        "logs/ep_stack/summary.log",
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        # the settling criterion is read here only: changing it reruns no probe
        settle=ep_settle,
    script:
        "../../scripts/ep_stack_summary.py"


rule fig_ep_stack_cosines:
    """EP against BPTT per parameter group: did the tension reach block 0?"""
    input:
        cosines="results/ep_stack/summary/cosines.csv",
        increments="results/ep_stack/summary/increments.csv",
        pretrain="results/ep_stack/summary/pretrain.csv",
    output:
        pdf="paper/figures/fig_ep_stack_cosines.pdf",
        png=report(
            "paper/figures/fig_ep_stack_cosines.png",
            caption="../report/fig_ep_stack_cosines.rst",
            category="Figures",
        ),
        svg="paper/figures/fig_ep_stack_cosines.svg",
    log:
        "logs/figures/fig_ep_stack_cosines.log",
    conda:
        "../../envs/figures.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../../scripts/fig_ep_stack_cosines.py"
