"""How long the paper config's full rebuild takes on N cores: measured from the runs'
own Snakemake logs (``--snakemake-log``, one or more: each log's first job start to its
last job end, and its jobs per step; several logs are the pieces of one rebuild that
resumed), beside an estimate from the jobs' recorded wall times — every training job
(its timings.json), every measurement and fresh-B null, every float32 EP stack probe
(pretraining + probe phases, summed over resumed attempts) — packed onto N one-thread
slots longest first. ``--recipes`` picks the recipes of ``--dataset`` (cifar10): a glob
of results/<dataset>/<recipe> folders, ``default`` (the default) the paper config's
stated recipe, ``'*'`` every recipe of config/variants.yaml's study too.

The estimate brackets the run from below (total work / N, and the longest-first
packing; the small jobs are left out); the measurement is the run itself.

    python bench/rebuild_estimate.py --results results --cores 2 --recipes '*' \
        --snakemake-log .snakemake/log/<the run>.snakemake.log --out bench/rebuild_estimate.json
    python bench/rebuild_estimate.py --report bench/rebuild_estimate.json > docs/rebuild_estimate.md
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

STALL = 10.0  # an epoch this many times its run's median epoch was stopped, not slow


def stalls(epoch_s: list[float]) -> dict:
    """The epochs of a run whose wall time is over STALL × the run's median epoch: the
    process was stopped (SIGSTOP, a suspended laptop, a preempted node) while the epoch
    ran, so its time measures the pause, not the work. Returns how many, and the seconds
    above the median they add (what the estimate leaves out)."""
    if not epoch_s:
        return {"epochs": 0, "excess_s": 0.0}
    median = sorted(epoch_s)[len(epoch_s) // 2]
    over = [s for s in epoch_s if s > STALL * median]
    return {"epochs": len(over), "excess_s": sum(s - median for s in over)}


def train_seconds(t: dict) -> dict:
    """A training job's time from its timings.json: every epoch it ran (its resumed
    processes' epochs too: ``total_s`` holds only the last process), a stopped epoch at its
    run's median, plus the last process's time outside its epochs (start-up, the final
    diagnostics); the recorded time beside it (every process's epochs as recorded, plus
    that overhead)."""
    train = t["epoch_train_s"]
    diag = t.get("epoch_diagnostics_s") or [0.0] * len(train)
    stalled = stalls(train)
    recorded_epochs = sum(train) + sum(diag)
    last = t.get("epochs_this_process") or len(train)
    overhead = max(0.0, t["total_s"] - sum(train[-last:]) - sum(diag[-last:]))
    return {"seconds": recorded_epochs - stalled["excess_s"] + overhead,
            "recorded_s": recorded_epochs + overhead, "stalled_epochs": stalled["epochs"],
            "epochs": len(train), "resumed": t.get("resumed_from_epoch") is not None}


def jobs(results: Path, ep_results: Path, dataset: str = "cifar10",
         recipes: str = "default") -> list[dict]:
    """Every job's recorded wall time, for the recipe folders of ``dataset`` matching
    ``recipes`` (a glob: ``default`` the stated recipe, ``*`` every recipe of the study)."""
    out = []
    for root in sorted(p for p in (results / dataset).glob(recipes) if p.is_dir()):
        for path in sorted((root / "train").glob("*/*/*/timings.json")):
            t = read_result(path, "train_timings")
            run = path.parent.relative_to(root / "train").parts
            out.append({"step": "train", "recipe": root.name, "job": "/".join(run),
                        "finished_at": (t.get("record") or {}).get("finished_at"),
                        **train_seconds(t)})
        for step in ("measure", "fresh_b_null"):
            for path in sorted((root / step).glob("*/*/*.json")):
                r = read_result(path, step)
                out.append(
                    {
                        "step": step,
                        "recipe": root.name,
                        "job": str(path.relative_to(results)),
                        "seconds": r["timings"]["total_s"],
                    }
                )
    for path in sorted(ep_results.glob("ep_stack/*/float32/seed*.timings.json")):
        t = json.loads(path.read_text())
        probe = sum(p["reference"] + sum(e["total"] for e in p["ep"]) for p in t["probes"])
        out.append(
            {
                "step": "ep_stack_probe",
                "recipe": "ep_stack",
                "job": f"{t['corpus']}/float32/seed{t['seed']}",
                "seconds": t["pretrain"] + probe,
            }
        )
    return out


def pack(seconds: list[float], cores: int) -> float:
    """Makespan of longest-first list scheduling on ``cores`` slots."""
    slots = [0.0] * cores
    for s in sorted(seconds, reverse=True):
        heapq.heapreplace(slots, slots[0] + s)
    return max(slots)


def estimate(results: Path, ep_results: Path, cores: int, dataset: str = "cifar10",
             recipes: str = "default") -> dict:
    listed = jobs(results, ep_results, dataset, recipes)
    if not listed:
        raise SystemExit(f"no job results under {results}/{dataset}/{recipes}: nothing to "
                         "estimate")
    seconds = [j["seconds"] for j in listed]
    by_step: dict[str, dict] = {}
    for j in listed:
        r = by_step.setdefault(j["step"], {"jobs": 0, "seconds": 0.0, "longest_s": 0.0})
        r["jobs"] += 1
        r["seconds"] += j["seconds"]
        r["longest_s"] = max(r["longest_s"], j["seconds"])
    by_recipe: dict[str, dict] = {}
    for j in listed:
        r = by_recipe.setdefault(j["recipe"], {"jobs": 0, "seconds": 0.0})
        r["jobs"] += 1
        r["seconds"] += j["seconds"]
    stalled = [j for j in listed if j.get("stalled_epochs")]
    return {
        "cores": cores,
        "dataset": dataset,
        "recipes": recipes,
        "jobs": listed,
        "by_step": by_step,
        "stalled": {
            "jobs": len(stalled),
            "epochs": sum(j["stalled_epochs"] for j in stalled),
            "excess_s": sum(j["recorded_s"] - j["seconds"] for j in stalled),
        },
        "by_recipe": by_recipe,
        "work_s": sum(seconds),
        "bound_s": max(sum(seconds) / cores, max(seconds)),
        "packed_s": pack(seconds, cores),
    }


_STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$", re.M)


def measured(log_path: Path) -> dict:
    """Wall time of a real run from its Snakemake log: the first timestamp (the first
    job's start) to the last (the last job's end), the jobs per step (its "Job stats"),
    and whether it completed."""
    text = log_path.read_text()
    stamps = [
        datetime.strptime(" ".join(m.group(1).split()), "%a %b %d %H:%M:%S %Y")
        for m in _STAMP.finditer(text)
    ]
    if not stamps:
        raise ValueError(f"{log_path}: no job timestamps: not a Snakemake run log")
    stats = text.split("Job stats:", 1)[1] if "Job stats:" in text else ""
    counts = {
        m.group(1): int(m.group(2))
        for m in re.finditer(
            r"^(\w+)\s+(\d+)$",
            stats.split("\n\n", 1)[0],  # the table: the first block after the header
            re.M,
        )
    }
    done = re.findall(r"^(\d+) of (\d+) steps \(100%\) done$", text, re.M)
    finished: dict[str, int] = {}
    for step in re.findall(r"^Finished jobid: \d+ \(Rule: (\w+)\)$", text, re.M):
        finished[step] = finished.get(step, 0) + 1
    return {
        "log": log_path.name,
        "start": stamps[0].isoformat(),
        "end": stamps[-1].isoformat(),
        "wall_s": (stamps[-1] - stamps[0]).total_seconds(),
        "jobs": counts,
        "finished": finished,
        "complete": bool(done),
    }


def _measured_text(data: dict) -> str:
    runs = data.get("measured")
    if not runs:
        return ""
    runs = runs if isinstance(runs, list) else [runs]
    # an estimate made before the recipe folders names its folders' glob "datasets"
    stated = data.get("recipes", "default") == "default" and data.get(
        "datasets", "cifar10") == "cifar10"
    what = (
        "config/config.yaml"
        if stated
        else "config/config.yaml with config/variants.yaml (the study)"
    )
    target = data.get("target_min", 75)
    if len(runs) == 1:
        run = runs[0]
        total = run["jobs"].get("total", sum(run["jobs"].values()))
        return (
            f"**Measured end to end: {run['wall_s'] / 60:.1f} min** on {data['cores']} cores, "
            + ("within" if run["wall_s"] <= 60 * target else "over")
            + f" the target of {target:g} min "
            f"({total} jobs, {'complete' if run['complete'] else 'INCOMPLETE'}; "
            f"{run['start']} to {run['end']}, from the run's Snakemake log "
            f"`{run['log']}`): `snakemake --cores {data['cores']}` on {what} "
            "with no results present, the data from local copies (no download).\n\n"
        )
    rows = "\n".join(
        f"| `{r['log']}` | {r['start']} | {r['end']} | {r['wall_s'] / 60:.1f} | "
        f"{r.get('finished', {}).get('train', 0)} | "
        f"{r.get('finished', {}).get('ep_stack_probe', 0)} | "
        f"{'yes' if r['complete'] else 'no (stopped or failed; resumed by the next)'} |"
        for r in runs
    )
    wall = sum(r["wall_s"] for r in runs)
    coverage = _coverage(data, runs)
    return (
        f"**Measured in {len(runs)} pieces: {wall / 60:.1f} min** of wall time on "
        f"{data['cores']} cores, summed over the Snakemake runs that built {what} (each "
        "piece is one `snakemake --cores 2` call on the same targets that resumed where the "
        "one before stopped; the time between pieces is not counted, the jobs a stopped "
        "piece lost are):\n\n"
        "| Snakemake log | start | end | minutes | train jobs finished | EP probes finished | "
        "complete |\n|---|---|---|---|---|---|---|\n" + rows + "\n\n" + coverage
    )


def _coverage(data: dict, runs: list[dict]) -> str:
    """What the pieces cover, from the data: the jobs they finished against the estimate's,
    and the stopped jobs whose end falls inside a piece (their pause is in the sum)."""
    finished = {k: sum(r.get("finished", {}).get(k, 0) for r in runs)
                for k in ("train", "ep_stack_probe")}
    listed = {k: by_step(data).get(k, {}).get("jobs", 0) for k in finished}
    windows = [(datetime.fromisoformat(r["start"]), datetime.fromisoformat(r["end"]))
               for r in runs]
    stalled = [j for j in data.get("jobs", []) if j.get("stalled_epochs")]
    inside = [j for j in stalled if j.get("finished_at") and any(
        a <= datetime.fromisoformat(j["finished_at"]).replace(tzinfo=None) <= b
        for a, b in windows)]
    text = (f"These pieces finished {finished['train']} of the estimate's {listed['train']} "
            f"training jobs and {finished['ep_stack_probe']} of its "
            f"{listed['ep_stack_probe']} EP probes")
    text += (": every job ended inside them (a resumed job's epochs from before its "
             "piece may lie outside). " if finished == listed else
             "; the rest ran outside them, so the sum leaves their time out. ")
    if stalled:
        text += (f"{len(inside)} of the {len(stalled)} training jobs with stopped epochs "
                 "(below) finished inside a piece: the sum includes the time their process "
                 "was stopped, which the estimate below leaves out. ")
    return text + "\n\n"


def _stalled_text(stalled: dict | None) -> str:
    if not stalled or not stalled["jobs"]:
        return ""
    return (
        f"{stalled['jobs']} training jobs recorded {stalled['epochs']} epochs over "
        f"{STALL:g}× their run's median epoch: the process was stopped while they ran. "
        f"Each such epoch counts at its run's median here (the recorded times are "
        f"{stalled['excess_s'] / 60:.1f} min longer in all).\n\n"
    )


def _note(data: dict) -> str:
    return f"*{data['note']}*\n\n" if data.get("note") else ""


def by_step(data: dict) -> dict:
    """The jobs and minutes per step (``by_step``; ``by_rule`` in an estimate written
    before the key was renamed, as bench/rebuild_estimate.json)."""
    return data["by_step"] if "by_step" in data else data["by_rule"]


def report(data: dict) -> str:
    rows = "\n".join(
        f"| `{step}` | {r['jobs']} | {r['seconds'] / 60:.1f} | {r['longest_s'] / 60:.1f} |"
        for step, r in by_step(data).items()
    )
    recipes = data.get("by_recipe", {})
    by_recipe = (
        ""
        if len(recipes) < 2
        else "| recipe | jobs | minutes (sum) |\n|---|---|---|\n"
        + "\n".join(
            f"| `{name}` | {r['jobs']} | {r['seconds'] / 60:.1f} |" for name, r in recipes.items()
        )
        + "\n\n"
    )
    return (
        "# Full paper rebuild: measured, and estimated from the jobs' times\n\n"
        + _measured_text(data)
        + _note(data)
        + "## The estimate from the jobs' recorded times\n\n"
        "Generated by `bench/rebuild_estimate.py --report` from "
        "`bench/rebuild_estimate.json`. Each job's wall time is the one its result records "
        "(measured with another job beside it on the same cores, one thread each); the "
        "packing onto the cores is ideal, and the small jobs (data decoding, tables, "
        "figures) are left out.\n\n"
        + _stalled_text(data.get("stalled"))
        + "| step | jobs | minutes (sum) | longest job (min) |\n|---|---|---|---|\n"
        f"{rows}\n\n"
        + by_recipe
        + f"Work: {data['work_s'] / 60:.1f} core-minutes. On {data['cores']} cores: at least "
        f"{data['bound_s'] / 60:.1f} min (work / cores, or the longest job); packed longest "
        f"first: {data['packed_s'] / 60:.1f} min.\n"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=Path, default=Path("results"))
    ap.add_argument(
        "--ep-results", type=Path, help="where results/ep_stack lives (default: --results)"
    )
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument(
        "--target-min",
        type=float,
        default=75.0,
        help="the wall-time target the report compares the measurement with",
    )
    ap.add_argument("--dataset", default="cifar10", help="the dataset (default cifar10)")
    ap.add_argument(
        "--recipes",
        default="default",
        help="recipe folders of the dataset to count, a glob "
        "(default: default, the stated recipe; '*': the study's recipes too)",
    )
    ap.add_argument(
        "--snakemake-log",
        type=Path,
        action="append",
        help="the run's "
        ".snakemake/log file (repeat for a rebuild made in resumed pieces): "
        "report its measured wall time too",
    )
    ap.add_argument(
        "--note",
        help="a sentence the report prints under the measurement "
        "(what the measured pieces leave out, what changed since)",
    )
    ap.add_argument("--out", type=Path)
    ap.add_argument("--report", type=Path, help="print the markdown of a written estimate")
    args = ap.parse_args()
    if args.report:
        print(report(json.loads(args.report.read_text())), end="")
        return
    data = estimate(args.results, args.ep_results or args.results, args.cores, args.dataset,
                    args.recipes)
    if args.snakemake_log:
        runs = [measured(log) for log in args.snakemake_log]
        data["measured"] = runs[0] if len(runs) == 1 else runs
        data["target_min"] = args.target_min
    if args.note:
        data["note"] = args.note
    text = json.dumps(data, indent=1)
    if args.out:
        args.out.write_text(text + "\n")
    print(report(data), end="")


if __name__ == "__main__":
    main()
