"""docs/performance_training.md from docs/performance.json (bench/bench_training.py's
output): every number on that page is read from the JSON, nothing is typed.

    python bench/report_training.py docs/performance.json > docs/performance_training.md
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

RULES = ("bp", "dfa", "fa", "frozen")
VARIANTS = {"bp, for-loop AdamW": "bp with torch's default CPU AdamW (a Python loop over "
                                  "parameters)",
            "bp, compiled blocks": "bp with every block through `torch.compile`"}


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def steps_table(steps: dict) -> str:
    s1 = steps["1"]
    bp = s1["bp"]
    rows = []
    for name in (*RULES, *VARIANTS):
        r = s1[name]
        flop_ratio = r["flops_per_step"] / bp["flops_per_step"]
        rows.append(f"| {VARIANTS.get(name, name)} | {1e3 * r['step_s']:.2f} | "
                    f"{r['flops_per_step'] / 1e6:.0f} M | {r['gflops']:.1f} | "
                    f"{_pct(r['fraction_of_peak'])} | {r['step_s'] / bp['step_s']:.3f} | "
                    + (f"{flop_ratio:.3f} |" if name in RULES else " |"))
    opt = (f"| the optimiser step alone: fused AdamW / default AdamW | "
           f"{1e3 * s1['optimizer step (fused)']['step_s']:.2f} / "
           f"{1e3 * s1['optimizer step (for-loop)']['step_s']:.2f} | | | | | |")
    s2 = steps["2"]
    two = (f"At 2 threads (same run): matmul peak {s2['matmul_gflops']:.1f} GFLOP/s; bp "
           f"{1e3 * s2['bp']['step_s']:.2f} ms ({_pct(s2['bp']['fraction_of_peak'])}), dfa "
           f"{1e3 * s2['dfa']['step_s']:.2f} ms (time ratio {s2['dfa_bp_time_ratio']:.3f}), "
           f"default AdamW {1e3 * s2['bp, for-loop AdamW']['step_s']:.2f} ms, compiled blocks "
           f"{1e3 * s2['bp, compiled blocks']['step_s']:.2f} ms; optimiser step "
           f"{1e3 * s2['optimizer step (fused)']['step_s']:.2f} / "
           f"{1e3 * s2['optimizer step (for-loop)']['step_s']:.2f} ms.")
    return (f"| | step (ms) | FLOPs / step | GFLOP/s | of matmul peak "
            f"({s1['matmul_gflops']:.1f} GFLOP/s) | time ratio to BP | FLOP ratio to BP |\n"
            "|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n" + opt + "\n\n" + two)


def ceiling(data: dict) -> tuple[str, dict]:
    """The matmul ceiling table, and the best-case step share it implies per thread count."""
    rows, best = [], {}
    for threads, c in data["matmul_ceiling"].items():
        cells = [f"{c[k]['gflops']:.1f} ({_pct(c[k]['fraction_of_peak'])})"
                 for k in ("batch 128", "batch 128, 3 seeds stacked", "batch 384")]
        rows.append(f"| {threads} | {c['matmul_gflops']:.1f} | " + " | ".join(cells) + " |")
        s = data["steps"][threads]
        matmul_s = s["bp"]["flops_per_step"] / (c["batch 128"]["fraction_of_peak"]
                                                 * s["matmul_gflops"] * 1e9)
        opt_s = s["optimizer step (fused)"]["step_s"]
        best[threads] = {"matmul_ms": 1e3 * matmul_s, "optimizer_ms": 1e3 * opt_s,
                         "share": s["bp"]["flops_per_step"]
                         / ((matmul_s + opt_s) * s["matmul_gflops"] * 1e9)}
    table = ("| threads | reference matmul GFLOP/s | BP step's matmuls, batch 128 | "
             "3 seeds stacked (bmm) | batch 384 |\n|---|---|---|---|---|\n" + "\n".join(rows))
    return table, best


def targets(data: dict, best: dict) -> str:
    e, t = data["epoch_parts_1thread"], data["throughput_steps_per_s"]
    s1, s2 = data["steps"]["1"], data["steps"]["2"]
    gain = t["2 jobs x 1 thread"] / t["1 job x 2 threads"] - 1
    rows = [
        ("DFA/BP time within 5 % of the FLOP ratio",
         f"time {s1['dfa_bp_time_ratio']:.3f} vs FLOPs {s1['dfa_bp_flop_ratio']:.3f} "
         f"(1 thread); time {s2['dfa_bp_time_ratio']:.3f} (2 threads)"),
        ("training steps ≥ 70 % of the matmul peak",
         f"bp {_pct(s1['bp']['fraction_of_peak'])} (1 thread), "
         f"{_pct(s2['bp']['fraction_of_peak'])} (2 threads); best case for this model and "
         f"optimiser {_pct(best['1']['share'])} / {_pct(best['2']['share'])} (below)"),
        ("diagnostics ≤ 10 % of an epoch",
         f"{e['diagnostics_s']:.2f} s of {e['bp_epoch_s_estimate']:.2f} s = "
         f"{100 * e['diagnostics_share']:.1f} %"),
        ("data loading with crop + flip ≤ 10 % of an epoch",
         f"{e['loading_with_augmentation_s']:.2f} s per epoch = "
         f"{100 * e['loading_share']:.1f} %"),
        ("threads per job chosen from measurement",
         f"2 jobs × 1 thread: {t['2 jobs x 1 thread']:.1f} steps/s in total; 1 job × 2 "
         f"threads: {t['1 job x 2 threads']:.1f} ({gain:+.0%} for 1 thread per job)"),
        ("`snakemake -n` on the paper config", f"{data['workflow']['dry_run_paper_s']:.1f} s"),
    ]
    return "| target | measured |\n|---|---|\n" + "\n".join(f"| {a} | {b} |" for a, b in rows)


def report(data: dict) -> str:
    m = data["machine"]
    table, best = ceiling(data)
    b1, b2 = best["1"], best["2"]
    return f"""# Training-step performance (generated)

Generated by `bench/report_training.py` from [performance.json](performance.json)
(`bench/bench_training.py`): nothing on this page is typed. Machine: {m['cpus']} CPUs,
torch {m['torch']}, Python {m['python']}. The paper model: CIFAR-10 inputs (3072),
d = 256, L = 4, C = 10, batch 128; step timings interleaved round-robin (medians).

## Training steps (1 thread — the pipeline's setting)

{steps_table(data['steps'])}

## Targets

{targets(data, best)}

## The matmul ceiling of a training step

The matmuls of one BP step run alone with the same shapes (forward, weight and input
gradients; no elementwise work, no optimiser), interleaved with the reference matmul:

{table}

With zero time for everything else (LayerNorm, GELU, softmax-CE, autograd), a BP step
would take its matmuls at that rate plus the fused optimiser step: {b1['matmul_ms']:.2f} +
{b1['optimizer_ms']:.2f} ms at 1 thread ({_pct(b1['share'])} of the peak at best),
{b2['matmul_ms']:.2f} + {b2['optimizer_ms']:.2f} ms at 2 threads ({_pct(b2['share'])}).
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", type=Path)
    print(report(json.loads(ap.parse_args().json.read_text())), end="")


if __name__ == "__main__":
    main()
