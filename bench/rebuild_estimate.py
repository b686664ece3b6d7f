"""How long the paper config's full rebuild takes on N cores: measured end to end from
the run's own Snakemake log (``--snakemake-log``: the first job's start to the last
job's end, and the jobs per rule), beside an estimate from the jobs' recorded wall
times — every training job of the default recipe (its timings.json), every fresh-B
null, every float32 EP stack probe (pretraining + probe phases, summed over resumed
attempts) — packed onto N one-thread slots longest first.

The estimate brackets the run from below (total work / N, and the longest-first
packing; the small jobs are left out); the measurement is the run itself.

    python bench/rebuild_estimate.py --results results --cores 2 \
        --snakemake-log .snakemake/log/<the run>.snakemake.log --out docs/rebuild_estimate.json
    python bench/rebuild_estimate.py --report docs/rebuild_estimate.json > docs/rebuild_estimate.md
"""

from __future__ import annotations

import argparse
import heapq
import json
import re
import sys
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from credit_assign.infra.results import read_result  # noqa: E402


def jobs(results: Path, ep_results: Path, dataset: str = "cifar10") -> list[dict]:
    out = []
    for path in sorted((results / dataset / "train").glob("*/*/*/timings.json")):
        t = read_result(path, "train_timings")
        run = path.parent.relative_to(results / dataset / "train").parts
        out.append({"rule": "train", "job": "/".join(run), "seconds": t["total_s"],
                    "epochs": len(t["epoch_train_s"])})
    for path in sorted((results / dataset / "fresh_b_null").glob("*/*/*.json")):
        r = read_result(path, "fresh_b_null")
        out.append({"rule": "fresh_b_null", "job": str(path.relative_to(results)),
                    "seconds": r["timings"]["total_s"]})
    for path in sorted(ep_results.glob("ep_stack/*/float32/seed*.timings.json")):
        t = json.loads(path.read_text())
        probe = sum(p["reference"] + sum(e["total"] for e in p["ep"]) for p in t["probes"])
        out.append({"rule": "ep_stack_probe", "job": f"{t['corpus']}/float32/seed{t['seed']}",
                    "seconds": t["pretrain"] + probe})
    return out


def pack(seconds: list[float], cores: int) -> float:
    """Makespan of longest-first list scheduling on ``cores`` slots."""
    slots = [0.0] * cores
    for s in sorted(seconds, reverse=True):
        heapq.heapreplace(slots, slots[0] + s)
    return max(slots)


def estimate(results: Path, ep_results: Path, cores: int) -> dict:
    listed = jobs(results, ep_results)
    seconds = [j["seconds"] for j in listed]
    by_rule: dict[str, dict] = {}
    for j in listed:
        r = by_rule.setdefault(j["rule"], {"jobs": 0, "seconds": 0.0, "longest_s": 0.0})
        r["jobs"] += 1
        r["seconds"] += j["seconds"]
        r["longest_s"] = max(r["longest_s"], j["seconds"])
    return {"cores": cores, "jobs": listed, "by_rule": by_rule,
            "work_s": sum(seconds), "bound_s": max(sum(seconds) / cores, max(seconds)),
            "packed_s": pack(seconds, cores)}


_STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$", re.M)


def measured(log_path: Path) -> dict:
    """Wall time of a real run from its Snakemake log: the first timestamp (the first
    job's start) to the last (the last job's end), the jobs per rule (its "Job stats"),
    and whether it completed."""
    text = log_path.read_text()
    stamps = [datetime.strptime(" ".join(m.group(1).split()), "%a %b %d %H:%M:%S %Y")
              for m in _STAMP.finditer(text)]
    if not stamps:
        raise ValueError(f"{log_path}: no job timestamps: not a Snakemake run log")
    stats = text.split("Job stats:", 1)[1] if "Job stats:" in text else ""
    counts = {m.group(1): int(m.group(2))
              for m in re.finditer(r"^(\w+)\s+(\d+)$", stats.split("\n\n", 2)[1]
                                   if stats.count("\n\n") >= 2 else stats, re.M)}
    done = re.findall(r"^(\d+) of (\d+) steps \(100%\) done$", text, re.M)
    return {"log": log_path.name, "start": stamps[0].isoformat(), "end": stamps[-1].isoformat(),
            "wall_s": (stamps[-1] - stamps[0]).total_seconds(), "jobs": counts,
            "complete": bool(done)}


def report(data: dict) -> str:
    rows = "\n".join(f"| `{rule}` | {r['jobs']} | {r['seconds'] / 60:.1f} | "
                     f"{r['longest_s'] / 60:.1f} |" for rule, r in data["by_rule"].items())
    run = data.get("measured")
    head = "# Full paper rebuild: measured, and estimated from the jobs' times\n\n"
    if run:
        total = run["jobs"].get("total", sum(v for k, v in run["jobs"].items()))
        head += (
            f"**Measured end to end: {run['wall_s'] / 60:.1f} min** on {data['cores']} cores, "
            + ("within" if run["wall_s"] <= 60 * data.get("target_min", 75) else "over")
            + f" the target of {data.get('target_min', 75):g} min "
            f"({total} jobs, {'complete' if run['complete'] else 'INCOMPLETE'}; "
            f"{run['start']} to {run['end']}, from the run's Snakemake log "
            f"`{run['log']}`): `snakemake --cores {data['cores']}` on config/config.yaml "
            "with no results present, the data from local copies (no download).\n\n")
    return (
        head + "## The estimate from the jobs' recorded times\n\n"
        "Generated by `bench/rebuild_estimate.py --report` from "
        "`docs/rebuild_estimate.json`. Each job's wall time is the one its result records "
        "(measured with another job beside it on the same cores, one thread each); the "
        "packing onto the cores is ideal, and the small jobs (data decoding, tables, "
        "figures) are left out.\n\n"
        "| rule | jobs | minutes (sum) | longest job (min) |\n|---|---|---|---|\n"
        f"{rows}\n\n"
        f"Work: {data['work_s'] / 60:.1f} core-minutes. On {data['cores']} cores: at least "
        f"{data['bound_s'] / 60:.1f} min (work / cores, or the longest job); packed longest "
        f"first: {data['packed_s'] / 60:.1f} min.\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=Path, default=Path("results"))
    ap.add_argument("--ep-results", type=Path, help="where results/ep_stack lives "
                    "(default: --results)")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--target-min", type=float, default=75.0,
                    help="the wall-time target the report compares the measurement with")
    ap.add_argument("--snakemake-log", type=Path, help="the run's .snakemake/log file: "
                    "report its measured wall time too")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--report", type=Path, help="print the markdown of a written estimate")
    args = ap.parse_args()
    if args.report:
        print(report(json.loads(args.report.read_text())), end="")
        return
    data = estimate(args.results, args.ep_results or args.results, args.cores)
    if args.snakemake_log:
        data["measured"] = measured(args.snakemake_log)
        data["target_min"] = args.target_min
    text = json.dumps(data, indent=1)
    if args.out:
        args.out.write_text(text + "\n")
    print(report(data), end="")


if __name__ == "__main__":
    main()
