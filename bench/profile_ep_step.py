"""Where a pretraining step of the EP stack spends its time (run by hand, 1 thread):

    .venv/bin/python bench/profile_ep_step.py --out docs/ep_stack_step_profile.json

1. The matmul rate of this machine at the block's shapes, float32 against bfloat16.
2. The matmul FLOPs of one BPTT pretraining step at the seed's size, and the floor
   they set on a float32 step at this machine's best float32 matmul rate.
3. One such step (120 relaxation steps, compiled), float32 and bfloat16 autocast,
   under ``torch.profiler``: the share of its time in matmuls
   (``aten::mm``/``bmm``/``addmm``) against everything else (the compiled elementwise
   kernels, autograd). Nothing here is asserted anywhere.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

MATMUL_OPS = ("aten::mm", "aten::bmm", "aten::addmm", "aten::baddbmm")


def matmul_rates(repeats: int = 200) -> dict:
    import torch

    out = {}
    # (rows, inner, cols) of the block's matmuls at B·T = 1024 tokens, C = 128
    for m, k, n in ((1024, 128, 384), (1024, 128, 512), (1024, 512, 128)):
        for dtype in (torch.float32, torch.bfloat16):
            a, b = torch.randn(m, k, dtype=dtype), torch.randn(k, n, dtype=dtype)
            for _ in range(5):
                a @ b
            samples = []
            for _ in range(repeats):
                t = time.perf_counter()
                a @ b
                samples.append(time.perf_counter() - t)
            out[f"{m}x{k}x{n} {str(dtype).removeprefix('torch.')}"] = (
                2 * m * k * n / statistics.median(samples) / 1e9)
    return out


def step_matmul_flops(relax_steps: int = 120, B: int = 16, T: int = 64, C: int = 128,
                      H: int = 4, K: int = 2) -> float:
    """Matmul FLOPs of one BPTT pretraining step: per relaxation step and block the
    forward's QKV, scores, scores·V, W_O, MLP in and out; the backward computes two
    products (input and weight gradient) per forward product, so 3× the forward."""
    bt, dh = B * T, C // H
    forward = 2 * bt * C * (3 * C + C + 4 * C + 4 * C) + 2 * 2 * B * H * T * T * dh
    return 3 * forward * K * relax_steps


def step_profile(relax_steps: int = 120, precision: str = "bfloat16") -> dict:
    import torch
    from torch.profiler import ProfilerActivity, profile

    from credit_assign.ep_stack import dynamics as eps

    g = torch.Generator().manual_seed(0)
    stack = eps.SpringStack(65, 2, 128, 4, 64, generator=g)
    idx, y = torch.randint(65, (16, 64), generator=g), torch.randint(65, (16, 64), generator=g)
    step = eps.make_step(stack, 0.1, precision, compile=True)

    def run():
        return eps.bptt_grads(stack, idx, y, relax_steps, 0.1, step=step)

    for _ in range(2):  # compile, warm up
        run()
    t = time.perf_counter()
    run()
    wall = time.perf_counter() - t
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        run()
    events = prof.key_averages()
    total = sum(e.self_cpu_time_total for e in events)
    matmul = sum(e.self_cpu_time_total for e in events if e.key in MATMUL_OPS)
    top = sorted(events, key=lambda e: -e.self_cpu_time_total)[:12]
    return {"wall_s": wall, "matmul_share": matmul / total,
            "top_ops": [{"name": e.key[:80], "self_share": e.self_cpu_time_total / total,
                         "calls": e.count} for e in top]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    import torch

    from credit_assign.infra.device import provenance

    torch.set_num_threads(1)
    rates = matmul_rates()
    flops = step_matmul_flops()
    fp32_peak = max(v for k, v in rates.items() if k.endswith("float32"))
    res = {"matmul_gflops": rates, "step_matmul_gflop": flops / 1e9,
           # the fastest a float32 step can be: its matmuls alone at the best fp32 rate
           "float32_step_floor_s": flops / (fp32_peak * 1e9),
           "fp32_compiled_step": step_profile(precision="float32"),
           "bf16_compiled_step": step_profile(precision="bfloat16"),
           "provenance": provenance(None, 1)}
    text = json.dumps(res, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
