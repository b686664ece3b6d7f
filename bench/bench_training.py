"""Where the time goes: training steps, diagnostics, data, threads, the workflow.

Run by hand (never in CI; nothing here asserts a time):

    .venv/bin/python bench/bench_training.py --out docs/performance.json
    .venv/bin/python bench/bench_training.py --quick-pipeline   # + the quick run end to end

Every ratio is measured in the same run as the numbers it compares. Sizes are the
paper's: CIFAR-10 inputs (3072), d=256, L=4, C=10, batch 128, random data (the
arithmetic does not depend on the pixel values).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

D, L, C, IN, BATCH = 256, 4, 10, 3072, 128


def flops_per_sample(method: str) -> int:
    """Multiply-add FLOPs (×2) of one training step per sample, counted by hand.

    forward: embed, 2 d×d per block, head. BP adds every weight gradient and every
    input gradient except the embedding's (its input is data). DFA cuts the graph
    between blocks, but in this model that saves no matmul: each block's pre-LN has
    trainable gain and bias, so fc1's input gradient (W1ᵀδ) is still needed for them,
    and LN_out's parameters need the head's input gradient. What DFA skips is only the
    elementwise LN backward into the residual stream; it adds the signals e·B_lᵀ.
    So DFA/BP ≈ 1.00 here (a plain MLP without LN would give ≈ 0.8–0.9), and FA adds
    its d×d chain of signals.
    """
    embed, block, head = IN * D, 2 * D * D, D * C
    fwd = 2 * (embed + L * block + head)
    if method == "bp":
        return 2 * fwd + 2 * (L * block + head)
    if method in ("dfa", "fa"):
        signals = (L + 1) * D * C if method == "dfa" else D * C + L * D * D
        return 2 * fwd + 2 * (L * block + head) + 2 * signals
    if method == "frozen":  # BP through frozen blocks: no block weight gradients
        return fwd + 2 * (embed + head) + 2 * (L * block + head)
    raise ValueError(method)


def timed(fn, repeats: int, warmup: int = 3) -> float:
    """Median wall time of ``fn`` over ``repeats`` calls after ``warmup`` calls."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def step_times(threads: int, steps: int, methods=("bp", "dfa", "fa", "frozen"),
               optimizer_variants: bool = True) -> dict:
    """Median step time of each rule and of a large matmul, interleaved round-robin
    (one step of each per round) so that a noisy machine biases none of them. The
    optimiser is the pipeline's (``science.training.adamw``, fused); with ``optimizer_variants``
    also BP with torch's default CPU AdamW (a Python loop over parameters) and the
    optimiser steps alone, to show what the fused kernel saves, and BP with every block
    through ``torch.compile`` (fused LayerNorm/GELU work, forward and backward)."""
    import torch

    from credit_assign.science.learning_rules import make_rule
    from credit_assign.science.model import ResidualMLP
    from credit_assign.science.training import adamw

    torch.set_num_threads(threads)
    x = torch.randn(BATCH, IN)
    y = torch.randint(0, C, (BATCH,))
    a, b = torch.randn(256, 3072), torch.randn(3072, 1000)
    work = {"matmul": lambda: a @ b}
    variants = [(m, m, False) for m in methods]
    if optimizer_variants:
        variants += [("bp, for-loop AdamW", "bp", True), ("bp, compiled blocks", "bp", False)]
    for name, method, loop in variants:
        torch.manual_seed(0)
        model = ResidualMLP(IN, D, L, C)
        if name == "bp, compiled blocks":
            for block in model.blocks:
                block.compile(dynamic=False)
        rule = make_rule(method, model, 0.0, generator=torch.Generator().manual_seed(0))
        params = rule.trainable(model)
        if loop:
            opt = torch.optim.AdamW(params.values(), lr=1e-3, weight_decay=0.01, foreach=False)
        else:
            opt = adamw(params.values(), 1e-3, 0.01)

        def step(rule=rule, model=model, params=params, opt=opt):
            o = rule.update(model, model(x, local=rule.local), y)
            for n, p in params.items():
                p.grad = o.grads[n]
            opt.step()

        work[name] = step
        if optimizer_variants and method == "bp":
            work[f"optimizer step ({'for-loop' if loop else 'fused'})"] = opt.step
    samples = {k: [] for k in work}
    for i in range(steps + 3):
        for name, fn in work.items():
            t0 = time.perf_counter()
            fn()
            if i >= 3:  # warm-up rounds
                samples[name].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in samples.items()}
    peak = 2 * 256 * 3072 * 1000 / med["matmul"] / 1e9
    out = {"matmul_gflops": peak,
           **{k: {"step_s": v} for k, v in med.items() if k.startswith("optimizer")}}
    for method, name in [(m, m) for m in methods] + (
            [("bp", "bp, for-loop AdamW"), ("bp", "bp, compiled blocks")]
            if optimizer_variants else []):
        fl = flops_per_sample(method) * BATCH
        out[name] = {"step_s": med[name], "gflops": fl / med[name] / 1e9,
                     "flops_per_step": fl, "fraction_of_peak": fl / med[name] / 1e9 / peak}
    return out


def bp_matmuls(n: int, seeds: int = 1):
    """The matmuls of one BP step of the paper model at batch n, as (a, b) pairs:
    forward, weight gradients, input gradients. With ``seeds > 1`` each is a batched
    matmul over that many stacked models (what vmap over seeds would run)."""
    import torch

    def mm(m, k, j):
        shape = (seeds,) if seeds > 1 else ()
        return torch.randn(*shape, m, k), torch.randn(*shape, k, j)

    pairs = [mm(n, IN, D)] + [mm(n, D, D) for _ in range(2 * L)] + [mm(n, D, C)]  # forward
    pairs += [mm(IN, n, D)] + [mm(D, n, D) for _ in range(2 * L)] + [mm(D, n, C)]  # dW
    pairs += [mm(n, D, D) for _ in range(2 * L)] + [mm(n, C, D)]  # input gradients
    flops = seeds * sum(2 * a.shape[-2] * a.shape[-1] * b.shape[-1] for a, b in pairs)
    return pairs, flops


def matmul_ceiling(threads: int, rounds: int) -> dict:
    """GFLOP/s of a BP step's matmuls alone (no elementwise work, no optimiser): the
    most a training step can reach, against the reference matmul, interleaved."""
    import torch

    torch.set_num_threads(threads)
    a, b = torch.randn(256, 3072), torch.randn(3072, 1000)
    work, flops = {"matmul": lambda: a @ b}, {"matmul": 2 * 256 * 3072 * 1000}
    for name, n, seeds in (("batch 128", BATCH, 1), ("batch 128, 3 seeds stacked", BATCH, 3),
                           ("batch 384", 3 * BATCH, 1)):
        pairs, flops[name] = bp_matmuls(n, seeds)
        work[name] = lambda pairs=pairs: [x @ y for x, y in pairs]
    samples = {k: [] for k in work}
    for i in range(rounds + 3):
        for name, fn in work.items():
            t0 = time.perf_counter()
            fn()
            if i >= 3:
                samples[name].append(time.perf_counter() - t0)
    gflops = {k: flops[k] / statistics.median(v) / 1e9 for k, v in samples.items()}
    peak = gflops.pop("matmul")
    return {"matmul_gflops": peak,
            **{k: {"gflops": v, "fraction_of_peak": v / peak} for k, v in gflops.items()}}


def epoch_parts(threads: int) -> dict:
    """Diagnostics and data loading (with crop + flip) against a training epoch."""
    import torch

    from credit_assign.infra import data as datasets
    from credit_assign.science import inputs
    from credit_assign.science.diagnostics import evaluate
    from credit_assign.science.learning_rules import make_rule
    from credit_assign.science.model import ResidualMLP
    from credit_assign.science.training import Batches

    torch.set_num_threads(threads)
    info = {"scale": 255.0, "mean": list(datasets.CIFAR10_MEAN), "std": list(datasets.CIFAR10_STD)}
    norm = inputs.Normalizer(info, "cpu")
    train_x = torch.randint(0, 256, (50_000, 3, 32, 32), dtype=torch.uint8)
    train_y = torch.randint(0, C, (50_000,))
    test_x = torch.randint(0, 256, (10_000, 3, 32, 32), dtype=torch.uint8)
    test_y = torch.randint(0, C, (10_000,))
    batches = Batches(train_x, train_y, BATCH, norm, "crop_flip", 4,
                      torch.Generator().manual_seed(0))
    t0 = time.perf_counter()
    for _ in batches:
        pass
    loading = time.perf_counter() - t0
    model = ResidualMLP(IN, D, L, C)
    rule = make_rule("dfa", model, 0.0, generator=torch.Generator().manual_seed(0))
    diag_x, diag_y = norm(test_x[:2048]), test_y[:2048]

    def test_batches():
        for s in range(0, 10_000, 1000):
            yield norm(test_x[s:s + 1000]), test_y[s:s + 1000]

    diag = timed(lambda: evaluate(rule, model, diag_x, diag_y, test_batches), 3, warmup=1)
    return {"loading_with_augmentation_s": loading, "diagnostics_s": diag,
            "steps_per_epoch": len(batches)}


def parallel_jobs(jobs: int, threads: int, steps: int) -> float:
    """Total training steps per second of `jobs` processes with `threads` threads each."""
    code = (f"import sys; sys.path.insert(0, {str(ROOT / 'src')!r}); "
            f"sys.argv=['x']; import bench_training as b; import time, torch; "
            f"r=b.step_times({threads}, {steps}, ('bp',), False); print(r['bp']['step_s'])")
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
           "PYTHONPATH": str(ROOT / "bench")}
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                              text=True) for _ in range(jobs)]
    outs = [float(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
    return sum(1.0 / t for t in outs)


def workflow_times(quick: bool) -> dict:
    out = {}
    snakemake = [sys.executable, "-m", "snakemake"]
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("Snakefile", "workflow", "scripts", "src", "config", "profiles", "envs"):
            src = ROOT / name
            (shutil.copytree if src.is_dir() else shutil.copy)(src, Path(tmp) / name)
        t0 = time.perf_counter()
        subprocess.run([*snakemake, "-n", "--config", "data={'cifar10': {'source': 'download'}}"],
                       cwd=tmp, check=True, capture_output=True)
        out["dry_run_paper_s"] = time.perf_counter() - t0
        if quick:
            t0 = time.perf_counter()
            subprocess.run([*snakemake, "--cores", "2", "--configfile", "config/quick.yaml"],
                           cwd=tmp, check=True, capture_output=True)
            out["quick_pipeline_s"] = time.perf_counter() - t0
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--quick-pipeline", action="store_true")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "performance.json")
    ap.add_argument("--ceiling-only", type=Path, default=None, metavar="JSON",
                    help="only the matmul ceiling of a training step, written to JSON")
    args = ap.parse_args()
    import torch

    if args.ceiling_only:
        res = {t: matmul_ceiling(t, args.steps) for t in (1, 2)}
        args.ceiling_only.write_text(json.dumps(res, indent=1) + "\n")
        print(json.dumps(res, indent=1))
        return

    res = {"machine": {"cpus": os.cpu_count(), "processor": platform.processor(),
                       "torch": torch.__version__, "python": platform.python_version()}}
    res["steps"] = {t: step_times(t, args.steps) for t in (1, 2)}
    res["matmul_ceiling"] = {t: matmul_ceiling(t, args.steps) for t in (1, 2)}
    res["epoch_parts_1thread"] = epoch_parts(1)
    res["throughput_steps_per_s"] = {
        "1 job x 2 threads": parallel_jobs(1, 2, args.steps),
        "2 jobs x 1 thread": parallel_jobs(2, 1, args.steps),
    }
    res["workflow"] = workflow_times(args.quick_pipeline)
    for t in (1, 2):
        s = res["steps"][t]
        s["dfa_bp_time_ratio"] = s["dfa"]["step_s"] / s["bp"]["step_s"]
        s["dfa_bp_flop_ratio"] = flops_per_sample("dfa") / flops_per_sample("bp")
        s["fa_bp_time_ratio"] = s["fa"]["step_s"] / s["bp"]["step_s"]
        s["fa_bp_flop_ratio"] = flops_per_sample("fa") / flops_per_sample("bp")
    ep = res["epoch_parts_1thread"]
    epoch_s = ep["steps_per_epoch"] * res["steps"][1]["bp"]["step_s"]
    ep["bp_epoch_s_estimate"] = epoch_s
    ep["diagnostics_share"] = ep["diagnostics_s"] / (epoch_s + ep["diagnostics_s"])
    ep["loading_share"] = ep["loading_with_augmentation_s"] / epoch_s
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=1) + "\n")
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
