"""The recipe-variant study's compute, estimated from its config (torch-free).

Every training run of the study — the default recipe's and each variant's, as the
workflow asks for them (credit_assign.planning.targets) — costs its epochs × the measured
seconds per epoch of its method; the per-epoch times are read from the jobs a full
rebuild recorded (``paths.REBUILD_ESTIMATE``: each train job's wall seconds and epochs,
one thread per job), never typed. The fresh-B null, the measure jobs and the tables are
left out (small next to training, see docs/rebuild_estimate.md). The config is the
workflow's (checks.load_config: the files laid over config/config.yaml as
``--configfile`` lays them, checked and filled in).

    PYTHONPATH=src python -m credit_assign.planning.estimate config/config.yaml config/variants.yaml

With ``--claims`` it estimates the claims' runs instead (config claims.file: the
stated recipe on the fresh and the study's seeds, and the EP probes at their recorded
time). With ``--ep-estimator``, the precision study's jobs at the median recorded EP
question job. With ``--ep-question`` it counts the EP question's fixed-point jobs
(config claims.ep): the minutes of those in the record and the rest at their median.
With ``--steps`` it prints the study's steps instead, one line of targets per recipe in
the config's order (targets.study_steps): what ``make study`` runs one after the other.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

from credit_assign.infra import paths
from credit_assign.planning.checks import load_config
from credit_assign.planning.method_training import method_training
from credit_assign.planning.targets import (
    claims_ep,
    claims_runs,
    ep_question_runs,
    runs,
    study_steps,
    variant_config,
)

ROOT = Path(__file__).resolve().parents[3]
ESTIMATE = ROOT / paths.REBUILD_ESTIMATE


def job_step(job: dict) -> str | None:
    """The workflow step a recorded job ran: ``step``, or ``rule`` in an estimate
    written before the key was renamed (bench/rebuild_estimate.json is one)."""
    return job["step"] if "step" in job else job.get("rule")


def per_epoch_seconds(estimate: dict) -> dict[str, float]:
    """Median seconds per epoch of each method's recorded train jobs."""
    by_method: dict[str, list[float]] = {}
    for job in estimate.get("jobs", []):
        if job_step(job) == "train" and job.get("epochs"):
            method = job["job"].split("/")[0]
            by_method.setdefault(method, []).append(job["seconds"] / job["epochs"])
    return {m: statistics.median(v) for m, v in by_method.items()}


def study_runs(config: dict) -> list[dict]:
    """Every training run the study asks for — the workflow's own (the run matrix of the
    config's dataset and of each variant's, targets.runs) — with its recipe and its
    epochs (the recipe's training block, per method: method_training)."""
    rows = []
    for variant in [None, *config["variants"]]:
        training = variant_config(config, variant)["training"]
        rows += [{"recipe": r.recipe, "method": r.method, "lam": r.lam, "seed": r.seed,
                  "epochs": method_training(training, r.method)["epochs"]}
                 for r in runs(config, recipe=variant)]
    return rows


def core_minutes(config: dict, per_epoch: dict[str, float]) -> dict:
    """{recipe: core-minutes}, the total, the runs and epochs counted, and the methods
    with no recorded per-epoch time (left out of the total, named)."""
    by_recipe: dict[str, float] = {}
    missing, n_runs, n_epochs = set(), 0, 0
    for r in study_runs(config):
        sec = per_epoch.get(r["method"])
        if sec is None:
            missing.add(r["method"])
            continue
        by_recipe[r["recipe"]] = by_recipe.get(r["recipe"], 0.0) + r["epochs"] * sec / 60
        n_runs, n_epochs = n_runs + 1, n_epochs + r["epochs"]
    return {"by_recipe": by_recipe, "total": sum(by_recipe.values()), "runs": n_runs,
            "epochs": n_epochs, "missing": sorted(missing)}


def claims_core_minutes(config: dict, estimate: dict) -> dict:
    """The claims' runs (targets.claims_runs, at the paper config's epochs per method)
    and EP probes (targets.claims_ep, at the median recorded probe): core-minutes each,
    and the methods or probes with no recorded time (left out, named)."""
    per_epoch = per_epoch_seconds(estimate)
    train, missing, n_runs = 0.0, set(), 0
    for method in (r.method for r in claims_runs(config)):
        if method not in per_epoch:
            missing.add(method)
            continue
        train += method_training(config["training"], method)["epochs"] * per_epoch[method] / 60
        n_runs += 1
    probes = [j["seconds"] for j in estimate.get("jobs", []) if job_step(j) == "ep_stack_probe"]
    n_ep = len(claims_ep(config))
    ep = n_ep * statistics.median(probes) / 60 if probes and n_ep else 0.0
    if n_ep and not probes:
        missing.add("ep_stack_probe")
    return {"train": train, "ep": ep, "total": train + ep, "runs": n_runs, "probes": n_ep,
            "missing": sorted(missing)}


def _fixed_point_minutes(timing: dict) -> float:
    """A fixed-point job's core-minutes: its pretraining and probe batches' seconds (they
    add up over a resumed job's processes, where ``total`` is the last process's) times
    its threads."""
    seconds = timing["pretrain"] + sum(b["total"] for b in timing["probes"])
    return seconds * (timing.get("threads") or 1) / 60


def ep_question_core_minutes(config: dict, root: str | Path = ROOT) -> dict:
    """The EP question's fixed-point jobs (targets.ep_question_runs): the recorded jobs'
    minutes (their timings, one thread each: the record), and the jobs still to run at
    the median recorded job (None where none is recorded yet)."""
    root = Path(root)
    timings = ep_question_runs(config, paths.EP_FIXED_POINT_TIMINGS)
    done = [_fixed_point_minutes(json.loads((root / t).read_text())) for t in timings
            if (root / t).is_file()]
    todo = len(timings) - len(done)
    per_job = statistics.median(done) if done else None
    return {"jobs": len(timings), "done": len(done), "done_minutes": sum(done),
            "todo": todo, "per_job": per_job,
            "todo_minutes": todo * per_job if per_job is not None else None}


def ep_estimator_core_minutes(config: dict, root: str | Path = ROOT) -> dict:
    """The precision study's jobs (config/ep_estimator.yaml, one per seed): those in the
    record, and the rest at the median recorded EP question job, a like job (the same
    pretraining, then every probe batch's free phase to convergence and its nudged
    phases; None where none is recorded)."""
    import yaml

    root = Path(root)
    study = yaml.safe_load((root / paths.EP_ESTIMATOR_STUDY).read_text())
    done = [s for s in study["seeds"] if (root / paths.fill(
        paths.EP_ESTIMATOR, corpus=study["corpus"], seed=s)).is_file()]
    like = ep_question_core_minutes(config, root)["per_job"]
    todo = len(study["seeds"]) - len(done)
    return {"jobs": len(study["seeds"]), "done": len(done), "todo": todo,
            "per_job": like, "todo_minutes": todo * like if like is not None else None}


def statement(config: dict, estimate_path: str | Path = ESTIMATE) -> str:
    """The compute statement as a sentence (what the notes print)."""
    path = Path(estimate_path)
    if not path.exists():
        return (f"The study's compute is not estimated here: {path.name} (the recorded "
                "per-epoch times) is missing.")
    est = core_minutes(config, per_epoch_seconds(json.loads(path.read_text())))
    variants = est["total"] - est["by_recipe"].get("default", 0.0)
    text = (f"Estimated from the config and the per-epoch times recorded in `{path.name}` "
            f"(one thread per job): {est['runs']} training runs, {est['epochs']} epochs, "
            f"{est['total']:.0f} core-minutes of training ({est['total'] / 60:.1f} "
            f"core-hours), of which the variants {variants:.0f}; fresh-B nulls and "
            "measure jobs not counted.")
    if est["missing"]:
        text += f" No recorded time for {', '.join(est['missing'])}: left out."
    return text


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m credit_assign.planning.estimate",
        description="The study's training compute in core-minutes, estimated from the "
        "config files laid over each other as --configfile lays them.")
    parser.add_argument("configfiles", nargs="+", type=Path, metavar="CONFIG",
                        help="e.g. config/config.yaml config/variants.yaml")
    parser.add_argument("--claims", action="store_true",
                        help="estimate the claims' runs (config claims.file) instead")
    parser.add_argument("--ep-question", action="store_true",
                        help="the EP question's fixed-point jobs (config claims.ep): the "
                        "recorded ones' minutes and the rest at their median")
    parser.add_argument("--ep-estimator", action="store_true",
                        help="the precision study's jobs (config/ep_estimator.yaml): the "
                        "rest at the median recorded EP question job")
    parser.add_argument("--steps", action="store_true",
                        help="print the study's steps (one line of targets per recipe) "
                        "instead: what `make study` runs")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    for path in args.configfiles:
        if not path.is_file():
            parser.error(f"config file {path} does not exist")
    config = load_config([p.resolve() for p in args.configfiles], ROOT)
    if args.steps:
        for step in study_steps(config):
            print(" ".join(step))
        return 0
    if args.ep_estimator:
        est = ep_estimator_core_minutes(config)
        todo = ("no EP question job recorded to time them" if est["per_job"] is None else
                f"about {est['todo_minutes']:.0f} core-minutes at the median recorded EP "
                f"question job ({est['per_job']:.0f}), a like job")
        print(f"The precision study: {est['jobs']} jobs, {est['done']} in the record, "
              f"{est['todo']} to run: {todo}.")
        return 0
    if args.ep_question:
        est = ep_question_core_minutes(config)
        todo = ("no job recorded yet to time the rest" if est["per_job"] is None else
                f"{est['todo_minutes']:.0f} core-minutes to run at the median recorded "
                f"job ({est['per_job']:.0f})")
        print(f"The EP question: {est['jobs']} fixed-point jobs, {est['done']} in the record "
              f"({est['done_minutes']:.0f} core-minutes), {est['todo']} to run: {todo}.")
        return 0
    if args.claims:
        est = claims_core_minutes(config, json.loads(ESTIMATE.read_text()))
        print(f"The claims: {est['runs']} training runs, {est['train']:.0f} core-minutes; "
              f"{est['probes']} EP probes, {est['ep']:.0f} core-minutes; "
              f"{est['total']:.0f} in all ({est['total'] / 60:.1f} core-hours), from the "
              f"per-epoch times recorded in {ESTIMATE.name}"
              + (f"; no recorded time for {', '.join(est['missing'])}: left out"
                 if est["missing"] else "") + ".")
        return 0
    est = core_minutes(config, per_epoch_seconds(json.loads(ESTIMATE.read_text())))
    for recipe, minutes in est["by_recipe"].items():
        print(f"{recipe:>20}  {minutes:8.1f} core-min")
    print(statement(config))
    return 0 if not math.isnan(est["total"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
