"""EP stack probe: our implementation against a faithful port of the seed's loop.

Run by hand (never in CI; nothing here asserts a time):

    .venv/bin/python bench/bench_ep_stack.py --corpus-path path/to/tinyshakespeare.txt \\
        --out docs/ep_stack_bench.json          # the seed's settings: about 35 min on 1 core
    .venv/bin/python bench/bench_ep_stack.py --small   # seconds, offline (pydoc corpus)

Both sides pretrain in float32, the seed's arithmetic (``--precision bfloat16`` puts
ours on CPU autocast, a departure). Compiling is part of our time, so ours runs twice:
first with an empty inductor cache of its own (a machine's first run: ``cold``), then
again with the cache that run filled (every later run: ``warm``); ``--no-cold`` skips
the first.

Each run is its own fresh process (so peak RSS is its own), one after the other, on
the same threads, with the same batches. Reported per phase:
pretraining (200 BPTT steps through 120 relaxation steps), the BPTT reference (400
steps) per probe batch, EP per (batch, T1) split into free phase, nudged phases and
the final parameter gradient; peak resident memory; and the probe cosines of both.

A same-state comparison follows: the seed port loads *our* weights at the end of our
pretraining (the operating point our probe ran at) and runs its own BPTT reference and
EP on the same probe batches at every T1. Per (batch, T1, parameter group) the two
implementations' cosines to their BPTT reference are paired; the report gives their
differences (mean, sd, paired t, largest) and the per-call times like for like.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

SEED_SETTINGS = {  # docs/method.md (EP stack probe): the seed script's settings
    "model": {"blocks": 2, "width": 128, "heads": 4, "context": 64, "gamma": 1.0, "leak": 1.0},
    "batch_size": 16, "eps": 0.1, "resume_every": 1000,
    "pretrain": {"steps": 200, "relax_steps": 120, "lr": 1.0e-3, "weight_decay": 1.0e-4,
                 "grad_clip": 5.0, "precision": "float32", "compile": True, "checkpoint_every": 0},
    "probe": {"batches": 3, "reference_steps": 400, "free_steps": [150, 400], "r": 0.02,
              "nudged_steps_max": 120, "check_every": 10, "exit_mult": 5.0, "aep": True,
              "checkpoint_every": 20, "compile": True},
}
SMALL_SETTINGS = {
    **SEED_SETTINGS,
    "model": {**SEED_SETTINGS["model"], "width": 32, "heads": 2, "context": 32},
    "batch_size": 8,
    "pretrain": {**SEED_SETTINGS["pretrain"], "steps": 10, "relax_steps": 30, "compile": False},
    "probe": {**SEED_SETTINGS["probe"], "batches": 1, "reference_steps": 60,
              "free_steps": [30, 60], "nudged_steps_max": 40, "checkpoint_every": 20,
              "compile": False},
}


def load_corpus(spec):
    from credit_assign.ep_stack.corpus import CharCorpus, encode, read_corpus

    if spec["corpus_path"]:
        text = read_corpus("tinyshakespeare", spec["corpus_path"])
        name = "tinyshakespeare"
    else:
        text, name = read_corpus("pydoc"), "pydoc"
    return CharCorpus({"name": name, **encode(text)})


def rss_mb():
    from credit_assign.ep_stack.probe import peak_rss_mb

    return peak_rss_mb()


# ---------------------------------------------------------------------------- workers
def worker_ours(spec) -> dict:
    import torch

    from credit_assign.ep_stack import dynamics as eps
    from credit_assign.ep_stack import probe as ep_probe

    corpus, s = load_corpus(spec), spec["settings"]
    t0 = time.perf_counter()
    # the resume file ends holding the final weights: the seed port's same-state input
    body, seconds = ep_probe.run_probe(corpus, s, spec["seed"], resume=spec.get("handoff"),
                                       progress=False)
    total = time.perf_counter() - t0
    peak = rss_mb()
    out = {"seconds": {**seconds, "total": total}, "peak_rss_mb": peak,
           "probes": body["probes"], "val_loss": body["pretrain"]["val_loss"],
           "final_train_loss": body["pretrain"]["loss"][-1]}
    if not spec["step_repeats"]:
        return out
    # pretraining step time: float32 / bfloat16, eager / compiled, on the same batches
    stack = ep_probe.build_stack(len(corpus.vocab), s, spec["seed"])
    gen = torch.Generator().manual_seed(0)
    batches = [corpus.get_batch("train", s["batch_size"], s["model"]["context"], gen)
               for _ in range(spec["step_repeats"])]
    step_s = {}
    variants = {f"{prec}{'+compile' if comp else ''}": eps.make_step(stack, s["eps"], prec, comp)
                for prec in ("float32", "bfloat16") for comp in (False, True)}
    for step in variants.values():  # warm-up (compiles)
        ep_probe.pretrain_step(stack, torch.optim.AdamW(stack.parameters(), lr=0.0),
                               *batches[0], s["pretrain"], step)
    for _ in range(2):
        for name, step in variants.items():
            opt = torch.optim.AdamW(stack.parameters(), lr=0.0)
            t = time.perf_counter()
            for idx, y in batches:
                ep_probe.pretrain_step(stack, opt, idx, y, s["pretrain"], step)
            step_s.setdefault(name, []).append((time.perf_counter() - t) / len(batches))
    out["pretrain_step_s"] = {k: min(v) for k, v in step_s.items()}
    return out


def worker_seed(spec) -> dict:
    import ep_stack_seed_port as sp
    import torch

    corpus, s = load_corpus(spec), spec["settings"]
    m, p = s["model"], s["pretrain"]
    torch.manual_seed(spec["seed"])
    st = sp.EQStack(len(corpus.vocab), m["blocks"], m["width"], m["heads"], m["context"],
                    m["gamma"], m["leak"])
    opt = torch.optim.AdamW(st.allp, lr=p["lr"], weight_decay=p["weight_decay"])
    gen = torch.Generator().manual_seed(spec["seed"] + 1)
    t0 = time.perf_counter()
    for _ in range(p["steps"]):
        idx, y = corpus.get_batch("train", s["batch_size"], m["context"], gen)
        g = sp.bptt_grads(st, idx, y, p["relax_steps"], s["eps"])
        opt.zero_grad(set_to_none=True)
        for q in st.allp:
            q.grad = g.get(id(q))
        torch.nn.utils.clip_grad_norm_(st.allp, p["grad_clip"])
        opt.step()
    seconds = {"pretrain": time.perf_counter() - t0}
    probes, seconds["probes"] = port_probes(st, corpus, spec, sp, torch, "seed port")
    seconds["total"] = time.perf_counter() - t0
    out = {"seconds": seconds, "peak_rss_mb": rss_mb(), "probes": probes}
    if spec.get("handoff") and Path(spec["handoff"]).exists():
        out["same_state"] = same_state_seed(st, corpus, spec, sp, torch)
    return out


def same_state_seed(st, corpus, spec, sp, torch) -> dict:
    """Load our final weights into the port; its BPTT reference and EP on our probe
    batches at every T1, with its own timings."""
    saved = torch.load(spec["handoff"], weights_only=True)
    sp.load_ours(st, saved["model"])
    probes, seconds = port_probes(st, corpus, spec, sp, torch, "seed port, same state")
    return {"probes": probes, "seconds": seconds}


def port_probes(st, corpus, spec, sp, torch, label: str) -> tuple[list, list]:
    """The port's BPTT reference and EP at every T1 on the probe batches (the stream
    ``ep_probe.run_probe`` draws them from): (results, seconds) per batch."""
    s, m, pr = spec["settings"], spec["settings"]["model"], spec["settings"]["probe"]
    probe_gen = torch.Generator().manual_seed(spec["seed"] + 3)
    groups = sp.groups(st)
    probes, seconds = [], []
    for b in range(pr["batches"]):
        idx, y = corpus.get_batch("train", s["batch_size"], m["context"], probe_gen)
        t = time.perf_counter()
        ref = sp.bptt_grads(st, idx, y, pr["reference_steps"], s["eps"])
        rec = {"batch": b, "reference": time.perf_counter() - t, "ep": []}
        res = {"batch": b, "ep": []}
        for t1 in pr["free_steps"]:
            t = time.perf_counter()
            gep, residual, tb = sp.ep_grads(st, idx, y, t1, s["eps"], pr["r"],
                                            pr["nudged_steps_max"])
            rec["ep"].append({"free_steps": t1, "total": time.perf_counter() - t})
            res["ep"].append({"free_steps": t1, "residual": residual, "t_best": tb,
                              "cosine": {k: sp.cos(gep, ref, ps) for k, ps in groups.items()}})
        probes.append(res)
        seconds.append(rec)
        print(f"{label}: batch {b} done", file=sys.stderr, flush=True)
    return probes, seconds


def paired_cosines(ours: list, port: list) -> dict:
    """Per group: our cosine to BPTT minus the port's, over every (batch, T1) pair."""
    import math

    diffs: dict[str, list] = {}
    rows = []
    for po, pp in zip(ours, port, strict=True):
        for eo, ep in zip(po["ep"], pp["ep"], strict=True):
            for g, co in eo["cosine"].items():
                cp = ep["cosine"].get(g)
                if co is None or cp is None:
                    continue
                diffs.setdefault(g, []).append(co - cp)
                rows.append({"batch": po["batch"], "free_steps": eo["free_steps"], "group": g,
                             "ours": co, "port": cp, "t_best_ours": eo["t_best"],
                             "t_best_port": ep["t_best"]})
    stats = {}
    for g, d in diffs.items():
        n, mean = len(d), sum(d) / len(d)
        sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1)) if n > 1 else float("nan")
        stats[g] = {"n": n, "mean_diff": mean, "sd_diff": sd,
                    "t": mean / (sd / math.sqrt(n)) if n > 1 and sd > 0 else None,
                    "max_abs_diff": max(abs(x) for x in d)}
    return {"pairs": rows, "by_group": stats}


# ---------------------------------------------------------------------------- driver
def run_worker(kind: str, spec: dict, threads: int, cache_dir: str | None = None) -> dict:
    env = {**os.environ, **{v: str(threads) for v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}}
    if cache_dir:
        env["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
    with tempfile.TemporaryDirectory() as tmp:
        spec_path, out_path = Path(tmp) / "spec.json", Path(tmp) / "out.json"
        spec_path.write_text(json.dumps(spec))
        t = time.perf_counter()
        subprocess.run([sys.executable, __file__, "--worker", kind, str(spec_path),
                        str(out_path)], env=env, check=True)
        out = json.loads(out_path.read_text())
        out["process_wall_s"] = time.perf_counter() - t
        return out


def phase_table(res: dict) -> dict:
    """Seconds per phase, summed over probe batches."""
    sec = res["seconds"]
    ep = {}
    for b in sec["probes"]:
        for e in b["ep"]:
            ep[e["free_steps"]] = ep.get(e["free_steps"], 0.0) + e["total"]
    return {"pretrain": sec["pretrain"],
            "reference": sum(b["reference"] for b in sec["probes"]),
            **{f"ep_T1={k}": v for k, v in ep.items()},
            "total": sec["total"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus-path", default="", help="Tiny Shakespeare (default: pydoc)")
    ap.add_argument("--small", action="store_true", help="a tiny stack, for a smoke run")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", choices=["ours", "seed"], default=None)
    ap.add_argument("--precision", choices=["float32", "bfloat16"], default="float32",
                    help="our pretraining precision (the seed's: float32)")
    ap.add_argument("--no-cold", action="store_true",
                    help="skip our run with an empty compile cache")
    ap.add_argument("--no-step-variants", action="store_true",
                    help="skip timing our pretraining step in float32/bfloat16 x eager/compiled")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        kind, spec_path, out_path = args.worker
        spec = json.loads(Path(spec_path).read_text())
        from credit_assign.infra.hardware import set_threads

        set_threads(spec["threads"])
        out = worker_ours(spec) if kind == "ours" else worker_seed(spec)
        Path(out_path).write_text(json.dumps(out))
        return

    settings = SMALL_SETTINGS if args.small else SEED_SETTINGS
    settings = {**settings, "pretrain": {**settings["pretrain"], "precision": args.precision}}
    from credit_assign.infra.device import provenance

    # our compile cache, emptied for the cold run and kept for the warm one
    cache = tempfile.mkdtemp(prefix="bench_inductor_")
    handoff = Path(tempfile.mkdtemp()) / "handoff.pt"
    spec = {"settings": settings, "seed": args.seed, "corpus_path": args.corpus_path,
            "threads": args.threads, "step_repeats": 0, "handoff": str(handoff)}
    runs = [] if args.only == "seed" else [("ours_warm", "ours")]
    if not args.no_cold and args.only != "seed":
        runs.insert(0, ("ours_cold", "ours"))
    if args.only != "ours":
        runs.append(("seed", "seed"))
    results = {}
    for name, kind in runs:
        print(f"running {name} ...", file=sys.stderr, flush=True)
        run_spec = spec
        if name == "ours_warm" and not args.no_step_variants:  # step timings once
            run_spec = {**spec, "step_repeats": 3 if args.small else 5}
        if kind == "ours":  # each of our runs pretrains from scratch, then hands off
            handoff.unlink(missing_ok=True)
        results[name] = run_worker(kind, run_spec, args.threads, cache)
        results[name]["phases"] = phase_table(results[name])
    report = {"settings": settings, "threads": args.threads,
              "corpus": "tinyshakespeare" if args.corpus_path else "pydoc",
              "results": results, "provenance": provenance(None, args.threads)}
    if "seed" in results:
        s = results["seed"]["phases"]
        report["speedup"], report["peak_rss_ratio"] = {}, {}
        for name in [n for n in results if n.startswith("ours")]:
            o = results[name]["phases"]
            report["speedup"][name] = {k: s[k] / o[k] for k in o if k in s and o[k] > 0}
            report["peak_rss_ratio"][name] = (results["seed"]["peak_rss_mb"]
                                              / results[name]["peak_rss_mb"])
            print(f"{name}: {'phase':>12} {'seed port s':>12} {'ours s':>9} {'speed-up':>9}")
            for k in o:
                print(f"{k:>20} {s[k]:>12.1f} {o[k]:>9.1f} {s[k] / o[k]:>8.2f}x")
            print(f"{'peak RSS MB':>20} {results['seed']['peak_rss_mb']:>12.0f} "
                  f"{results[name]['peak_rss_mb']:>9.0f}")
        same = results["seed"].get("same_state")
        if same:
            ours = results["ours_warm"] if "ours_warm" in results else results["ours_cold"]
            report["same_state"] = paired_cosines(ours["probes"], same["probes"])
            sec_o, sec_p = ours["seconds"]["probes"], same["seconds"]
            report["same_state"]["seconds"] = {
                "reference": {"ours": sum(b["reference"] for b in sec_o),
                              "port": sum(b["reference"] for b in sec_p)},
                "ep": {"ours": sum(e["total"] for b in sec_o for e in b["ep"]),
                       "port": sum(e["total"] for b in sec_p for e in b["ep"])}}
            print("same weights (ours after pretraining), cosine to BPTT, ours - port:")
            for g, st in report["same_state"]["by_group"].items():
                print(f"  {g:>10}: mean {st['mean_diff']:+.4f} sd {st['sd_diff']:.4f} "
                      f"max |d| {st['max_abs_diff']:.4f} (n={st['n']})")
    for kind, res in results.items():
        for probe in res["probes"]:
            for ep in probe["ep"]:
                c = ep["cosine"]
                print(f"{kind:>5} batch {probe['batch']} T1={ep['free_steps']:>3} "
                      f"res {ep['residual']:.1e} t_best {ep['t_best']:>3} "
                      + " ".join(f"{k} {v:.3f}" for k, v in c.items() if v is not None))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
