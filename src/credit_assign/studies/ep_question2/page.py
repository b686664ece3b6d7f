"""The second EP question's page section: the order (from git and each run's recorded
commit), every fresh seed with its outcome, the verdict, and the cells beside the judged
one. Numbers from the findings; no sentence is written for an outcome that did not
happen (the words about the outcome are written by hand, in docs and the paper, and
guarded there)."""

from __future__ import annotations

import math
import subprocess

from credit_assign.studies.ep_question2.plan import PLAN

JUDGE = "src/credit_assign/studies/ep_question2/judge.py"


def _git(*args: str) -> str:
    out = subprocess.run(["git", *args], capture_output=True, text=True, check=False)
    return out.stdout.strip()


def order(results: list[dict]) -> dict:
    """When the plan and its judge were first committed, whether the plan changed since,
    and, per run, its recorded commit, whether its tree was clean, and whether that commit
    holds the plan (it descends from the plan's first commit)."""
    def first(path):
        lines = _git("log", "--diff-filter=A", "--format=%H %cI", "--", path).splitlines()
        return lines[-1].split() if lines else [None, None]

    plan_sha, plan_at = first(PLAN)
    judge_sha, judge_at = first(JUDGE)
    runs = []
    for r in results:
        code = r["provenance"]["code"]
        after = bool(plan_sha) and subprocess.run(
            ["git", "merge-base", "--is-ancestor", plan_sha, code["git_commit"]],
            capture_output=True, check=False).returncode == 0
        runs.append({"seed": r["seed"], "commit": code["git_commit"][:7],
                     "dirty": bool(code["git_dirty"]), "after_plan": after})
    return {"plan_commit": plan_sha[:7] if plan_sha else None, "plan_at": plan_at,
            "plan_changed": len(_git("log", "--format=%h", "--", PLAN).splitlines()) > 1,
            "judge_commit": judge_sha[:7] if judge_sha else None, "judge_at": judge_at,
            "runs": runs}


def _n(x, digits: int = 4) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _e(x) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.1e}"


def render(found: dict) -> str:
    o, v = found["order"], found["verdict"]
    bad = [r["seed"] for r in o["runs"] if r["dirty"] or not r["after_plan"]]
    lines = [
        "## The second question: block 0 with the estimator the precision study chose", "",
        f"Pre-registered in `{PLAN}`, first committed in {o['plan_commit']} "
        f"({o['plan_at']})" + (", changed since (git log shows how)" if o["plan_changed"]
                               else ", unchanged since")
        + f"; its judge (`{JUDGE}`) first committed in {o['judge_commit']} ({o['judge_at']})."
        f" Runs here: {len(o['runs'])} of {v['n_fresh']}, from commits "
        f"{', '.join(sorted({r['commit'] for r in o['runs']})) or '–'}; "
        + (f"**seeds {bad} were not made from a clean tree holding the plan**."
           if bad else "each from a clean tree whose commit holds the plan."), "",
        "| seed | outcome | leading Re λ (max over batches) | adjoint residual | "
        "block 0 cosine per batch | effect (mean) |", "|---|---|---|---|---|---|"]
    for r in found["seeds"]:
        outcome = "judged" if r["effect"] is not None else f"not judged: {r['reason']}"
        per = ", ".join(_n(b["cosine"]) for b in r["per_batch"]) or "–"
        lines.append(f"| {r['seed']} | {outcome} | {_n(r['max_leading_real'], 3)} | "
                     f"{_e(r['max_adjoint_residual'])} | "
                     f"{per} | {_n(r['effect'])} |")
    for s in found["waiting"]:
        lines.append(f"| {s} | run still to be made | – | – | – | – |")
    interval = ("–" if v["low"] is None else f"[{_n(v['low'])}, {_n(v['high'])}]")
    lines += ["", f"**Verdict: {v['verdict']}**"
              + (f" ({v['reason']})" if v["reason"] else "")
              + f": {v['n_judged']} of {v['n_fresh']} fresh seeds judged, mean block 0 "
              f"cosine {_n(v['mean'])}, {v['confidence']:.0%} t-interval {interval}, "
              f"threshold {v['threshold']}.", "",
              "Block 0's cosine in each cell over the judged seeds (each seed's mean over "
              "its batches), the judged cell first; the others are shown, not judged:", "",
              "| precision | r | T2max | judged | seeds | mean | min | max | "
              "block 0's nudge (float32 units) |", "|---|---|---|---|---|---|---|---|---|"]
    for c in found["cells"]:
        lines.append(f"| {c['precision']} | {c['r']} | {c['nudged_steps_max']} | "
                     f"{'yes' if c['judged'] else 'no'} | {c['n']} | {_n(c['mean'])} | "
                     f"{_n(c['min'])} | {_n(c['max'])} | {_n(c['nudge_ulps_block0'], 1)} |")
    return "\n".join(lines)
