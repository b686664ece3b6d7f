"""The second EP question's page section: the order (from git and each run's recorded
commit), every fresh seed with its outcome, the verdict, and the cells beside the judged
one. Numbers from the findings; no sentence is written for an outcome that did not
happen (the words about the outcome are written by hand, in docs and the paper, and
guarded there)."""

from __future__ import annotations

import math

from credit_assign.analysis import history
from credit_assign.infra.paths import EP_ESTIMATOR_STUDY as STUDY
from credit_assign.studies.ep_question2 import judge
from credit_assign.studies.ep_question2.plan import PLAN

JUDGE = "src/credit_assign/studies/ep_question2/judge.py"


def order(results: list[dict]) -> dict:
    """When the plan and its judge were first committed, whether the plan changed since,
    and, per run, its recorded commit, whether its tree was clean, and whether that commit
    holds the plan and the judge (it descends from each one's first commit)."""
    def first(path):
        c = history.first_commit(".", path)
        return (c["commit"], c["time"]) if c else (None, None)

    plan_sha, plan_at = first(PLAN)
    judge_sha, judge_at = first(JUDGE)

    def holds(first_sha, commit):  # the commit descends from (or is) first_sha
        return bool(first_sha) and history.is_ancestor(".", first_sha, commit) is True

    runs = []
    for r in results:
        code = r["provenance"]["code"]
        runs.append({"seed": r["seed"], "commit": code["git_commit"][:7],
                     "dirty": bool(code["git_dirty"]),
                     "after_plan": holds(plan_sha, code["git_commit"]),
                     "after_judge": holds(judge_sha, code["git_commit"])})
    return {"plan_commit": plan_sha[:7] if plan_sha else None, "plan_at": plan_at,
            "plan_changed": len(history.commits_touching(".", PLAN)) > 1,
            "judge_commit": judge_sha[:7] if judge_sha else None, "judge_at": judge_at,
            "runs": runs}


def batches(results: list[dict], plan: dict) -> list[dict]:
    """Every probe batch of every run, judged or not ('per seed, always'): its free phase,
    leading eigenvalue, residuals and block 0's cosine in each of the plan's cells."""
    cells = [plan["estimator"]["judged"], *plan["estimator"]["beside"]]
    out = []
    for res in sorted(results, key=lambda r: r["seed"]):
        cos = {(c["batch"], judge._key(c)): c["cosine"] for c in judge.cosine_rows(res)
               if c["group"] == plan["claim"]["group"]}
        for b in judge.batch_rows(res):
            out.append({**b, "cosines": [cos.get((b["batch"], judge._key(c)))
                                         for c in cells]})
    return out


def _n(x, digits: int = 4) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _e(x) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.1e}"


def render(found: dict) -> str:
    o, v = found["order"], found["verdict"]
    bad = [r["seed"] for r in o["runs"]
           if r["dirty"] or not r["after_plan"] or not r["after_judge"]]
    lines = [
        "## The second question: block 0 with the estimator the precision study chose", "",
        f"Pre-registered in `{PLAN}`, first committed in {o['plan_commit']} "
        f"({o['plan_at']})" + (", changed since (git log shows how)" if o["plan_changed"]
                               else ", unchanged since")
        + f"; its judge (`{JUDGE}`) first committed in {o['judge_commit']} ({o['judge_at']})."
        f" Runs here: {len(o['runs'])} of {v['n_fresh']}, from commits "
        f"{', '.join(sorted({r['commit'] for r in o['runs']})) or '–'}; "
        + (f"**seeds {bad} were not made from a clean tree holding the plan and its judge**."
           if bad else "each from a clean tree whose commit holds the plan and its judge."),
        "",
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
    if found.get("batches"):
        heads = " | ".join(f"{c['precision']}, r = {c['r']}" for c in found["cells"])
        lines += ["", "Every probe batch, judged or not (a seed is judged only where every "
                  "batch's free phase converged to a stable state; block 0's cosine in "
                  "each cell, the judged cell first):", "",
                  "| seed | batch | free phase (steps) | leading Re λ | adjoint residual | "
                  + heads + " |", "|---|---|---|---|---|" + "---|" * len(found["cells"])]
        for b in found["batches"]:
            free = f"{'converged' if b['converged'] else 'not converged'} ({b['steps']})"
            lines.append(f"| {b['seed']} | {b['batch']} | {free} | {_n(b['leading_real'], 4)} "
                         f"| {_e(b['adjoint_residual'])} | "
                         + " | ".join(_n(c) for c in b["cosines"]) + " |")
    return "\n".join(lines)


class GuardError(RuntimeError):
    """A sentence whose outcome the findings no longer show, named."""


def guard(outcomes: dict, key: str, says: str, sentence: str) -> str:
    """``sentence``, if the findings' outcome ``key`` is ``says``; else stop, naming it."""
    if outcomes[key] != says:
        raise GuardError(f"{__file__}: the sentence “{sentence[:70]}…” says {key} = {says}, "
                         f"the findings say {outcomes[key]}: rewrite it for the data")
    return sentence


def _demote(md: str) -> str:
    """The first question's page under this one: its title dropped, headings one deeper."""
    lines = md.splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    return "\n".join("#" + x if x.startswith("#") else x for x in lines).strip()


def _precision_table(table) -> list[str]:
    import numpy as np

    d = table[(table.group == "block0") & (table.stencil == "central")]
    seeds = d.groupby(["precision", "r", "seed"]).cosine.mean().unstack("seed")
    rows = ["| precision | r | " + " | ".join(f"seed {s}" for s in seeds.columns) + " |",
            "|---|---|" + "---|" * len(seeds.columns)]
    for (p, r), row in seeds.iterrows():
        cells = " | ".join("–" if not np.isfinite(v) else f"{v:.5f}" for v in row)
        rows.append(f"| {p} | {r:g} | {cells} |")
    return rows


def seed_range(pf: dict, key: str, digits: int = 3, inside: bool = False) -> str:
    """" (seed means a to b)" beside a mean over several seeds (per seed, always), or
    "; seed means a to b" ``inside`` a parenthesis already open; "" for one seed."""
    from credit_assign.studies.ep_question2.facts import fmt

    lo, hi = pf[f"{key}_seeds"]
    words = f"seed means {fmt(lo, digits)} to {fmt(hi, digits)}"
    return "" if pf["n"] == 1 else f"; {words}" if inside else f" ({words})"


def float64_per_seed(pf: dict, tex: bool = False) -> str:
    """Each seed's float64 1 − cos over r, in words: a remainder that does not move with
    r (varying by under 1 % of itself), or none left (its size within float64's
    rounding, 1e-12); a seed that is neither has no words here and stops the page."""
    from credit_assign.studies.ep_question2.facts import fmt, is_flat

    minus = "$-$" if tex else "−"
    parts = []
    for s in pf["float64_per_seed"]:
        if is_flat(s):
            parts.append(f"seed {s['seed']}: {fmt(s['cos'], 4)} at every r (1 {minus} cos "
                         f"varies by a fraction {s['spread']:.1e} of itself)")
        elif s["err_abs"] < 1e-12:
            parts.append(f"seed {s['seed']}: 1 at every r, to within {s['err_abs']:.0e} "
                         "(no error left)")
        else:
            raise GuardError(f"{__file__}: seed {s['seed']}'s float64 1 - cos moves with r "
                             f"({s['err_min']:.3g} to {s['err_max']:.3g}): no words for it")
    return "; ".join(parts)


def compose(first: dict, first_md: str, table, pf: dict, q2: dict, q2_md: str) -> str:
    """docs/ep_question.md: both questions and the precision study, in sentences written
    for the outcomes the findings show (each guarded), then the sections in full
    (``first``: the first question's findings)."""
    from credit_assign.studies.ep_question2.facts import GRID, fmt

    rs, rj, ro = GRID  # the nudges the sentences name
    every, anyseed, mean = ((", on every seed", " on any seed", "the seeds' mean ")
                            if pf["n"] > 1 else ("", "", ""))

    o = {**pf["outcomes"], **q2["outcomes"],
         "question1": first["verdict"]["verdict"] + (
             f"_{first['verdict']['reason']}" if first["verdict"]["reason"] else "")}
    v1, seeds = first["verdict"], ", ".join(str(s) for s in pf["seeds"])
    first_plan = first["spec_path"]
    rem = {r["seed"]: r for r in pf["remade"]}
    example = rem[min(rem)] if rem else None
    lines = [
        "# EP through the stack: does its gradient reach block 0?", "",
        "Two pre-registered questions ask whether equilibrium propagation's gradient "
        "reaches block 0 of the spring-coupled transformer stack: whether block 0's EP "
        f"gradient has a cosine above {v1['threshold']:g} with the implicit (fixed-point) "
        "gradient that EP estimates.", "",
        "- " + guard(o, "question1", "undecided_straddles",
                     f"**The first question** (`{first_plan}`, EP's nudged phases "
                     f"in float32, r = {rj:g}) is **undecided**: block 0's mean cosine over "
                     f"its {v1['n_judged']} judged fresh seeds is {fmt(v1['mean'])}, and its "
                     f"{v1['confidence']:.0%} interval [{fmt(v1['low'])}, "
                     f"{fmt(v1['high'])}] straddles "
                     f"{v1['threshold']:g}."),
        "- " + guard(o, "float32_rounding", "yes",
                     f"**Why** (the precision study below; exploratory, on the first "
                     f"question's seed{'s' if pf['n'] != 1 else ''} {seeds}): in float32 "
                     f"the estimate is limited by rounding{every}. Block 0's "
                     f"cosine is {fmt(pf['float32_0.00125'])} at r = {rs:g}"
                     f"{seed_range(pf, 'float32_0.00125')}, "
                     f"{fmt(pf['float32_0.005'])} at r = {rj:g}"
                     f"{seed_range(pf, 'float32_0.005')} and "
                     f"{fmt(pf['float32_0.02'])} at r = {ro:g}"
                     f"{seed_range(pf, 'float32_0.02')}: at r = {rj:g} the nudge moves "
                     f"block 0's state by only about {pf['ulps_0.005']:.1f} float32 units.")
        + " " + (guard(o, "float64_flat", "yes",
                       f"With the nudged phases in float64 the cosine no longer depends on "
                       f"r{anyseed}: it is {fmt(pf['float64_0.005'], 4)} at r = {rj:g}"
                       f"{seed_range(pf, 'float64_0.005', 4)}, and {mean}1 − cos "
                       f"is {pf['float64_err_min']:.3g} from r = {pf['r_min']:g} to "
                       f"{pf['r_max']:g}, varying by a fraction {pf['float64_spread']:.1e} "
                       "of itself.") if o["float64_flat"] == "yes" else guard(
            o, "float64_flat", "mixed",
            f"With the nudged phases in float64 the cosine does not move with r, from "
            f"r = {pf['r_min']:g} to {pf['r_max']:g}, on any seed: "
            + float64_per_seed(pf) + ". The study's rule (1 − cos varying by under a "
            "hundredth of itself) cannot hold where no error is left: such a seed reads as "
            "not flat, and the outcome as mixed."))
        + " " + guard(o, "richardson_worse", "yes",
                      f"A higher-order stencil does not help in float32{anyseed} "
                      f"({fmt(pf['richardson32'])} at r = {rj:g}"
                      f"{seed_range(pf, 'richardson32', inside=True)}): it amplifies the "
                      f"rounding.")
        + " What is left in float64, on a seed that has an error left, does not come "
        "from r; that it is the nudged phase "
        f"stopping at {q2['t2max']} steps before it settles is a hypothesis, not yet tested.",
    ]
    if example is not None:
        lines[-1] += " " + guard(
            o, "remade_same", "no",
            f"The remade stacks are not the recorded ones (seed {example['seed']}: "
            f"validation loss {example['remade_val_loss']:.3f} remade, "
            f"{example['recorded_val_loss']:.3f} recorded; free phase "
            f"{example['remade_free_steps']} steps against {example['recorded_free_steps']}), "
            "so the study measures the estimator on stacks made the same way, not on the "
            "same stacks.")
    per_seed = ", ".join(f"{r['seed']}: {fmt(r['effect'], 4)}" for r in q2["per_seed"]
                         if r["effect"] is not None)
    skipped = [r for r in q2["per_seed"] if r["effect"] is None]
    q2_line = guard(o, "question2", "holds",
                    f"**The second question** (`{PLAN}`, committed before its runs: float64 "
                    f"nudged phases, r = {q2['r']:g}, on {q2['n_fresh']} new seeds) "
                    f"**holds**: block 0's mean cosine over its {q2['n_judged']} judged seeds "
                    f"is {fmt(q2['mean'], 4)}, and its {q2['confidence']:.0%} t-interval "
                    f"[{fmt(q2['low'], 4)}, {fmt(q2['high'], 4)}] lies above "
                    f"{q2['threshold']:g} (per seed: {per_seed}).")
    if skipped:
        q2_line += (" Not judged, for want of a stable fixed point: " + ", ".join(
            f"seed {r['seed']} ({r['reason'].replace('_', ' ')})" for r in skipped) + ".")
    low = [b for b in q2["batches"] if b["seed"] in {r["seed"] for r in skipped}
           and b["cosines"][0] is not None and b["cosines"][0] < q2["threshold"]]
    if low:
        q2_line += (" A batch of such a seed that did settle can fall below the threshold: "
                    + "; ".join(f"seed {b['seed']}, batch {b['batch']} (leading Re λ "
                                f"{b['leading_real']:.2g}): {fmt(b['cosines'][0])}"
                                for b in low) + " (every batch is listed below).")
    q2_line += (f" On the same states, the first question's float32 estimate at the same r "
                f"gives {fmt(q2['float32_mean'])} (shown, not judged): with its rounding "
                "removed, EP's gradient reaches block 0 on every seed the plan judges.")
    lines += ["- " + q2_line, "",
              "## The precision study (exploratory, on the first question's seeds)", "",
              f"Step `ep_estimator` (`{STUDY}`), at each probe batch's "
              "converged free state: EP's block 0 estimate at every r, its nudged phases "
              "in float32 and in float64, against the implicit gradient at the state "
              "refined in float64. Chosen after the first question's results; what it "
              "found chose the second question's estimator.", "",
              "![EP's error against r](fig_ep_estimator.png)", "",
              "Block 0's cosine to the float64 implicit gradient, centred stencil, each "
              "seed's mean over its probe batches (every cell: `ep_estimator.csv`):", "",
              *_precision_table(table), "",
              "Each remade stack beside the one the first question recorded for its seed "
              f"(block 0's float32 cosine at r = {rj:g}, T2max = {q2['t2max']}):", "",
              "| seed | validation loss (recorded / remade) | free-phase steps per batch "
              "(recorded / remade) | block 0 cosine (recorded / remade) |",
              "|---|---|---|---|"]
    for r in pf["remade"]:
        lines.append(f"| {r['seed']} | {r['recorded_val_loss']:.4f} / "
                     f"{r['remade_val_loss']:.4f} | {r['recorded_free_steps']} / "
                     f"{r['remade_free_steps']} | {fmt(r['recorded_cosine'])} / "
                     f"{fmt(r['remade_cosine'])} |")
    lines += ["", q2_md.strip(), "", "## The first question, as recorded", "",
              _demote(first_md)]
    return "\n".join(lines) + "\n"
