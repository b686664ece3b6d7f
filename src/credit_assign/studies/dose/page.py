"""The dose study's page (docs/dose.md): the order (from git and the runs' provenance),
each judged part with its interval and verdict, what a verdict favours in the plan's own
words, the mediation, each seed, and each arm's and λ's runs. Every number from the
study's findings and table; no sentence asserts an outcome the findings do not hold."""

from __future__ import annotations

import math

import pandas as pd

from credit_assign.analysis import history
from credit_assign.studies.dose.plan import OUT, PLAN


def order(plan_path: str, judge_path: str, runs: list[dict]) -> dict:
    """When the plan and its judge were first committed, whether the plan changed after,
    and when the study's own runs finished, from which commits, with clean trees or
    not (``runs``: each run's provenance and end time)."""
    def first(path):
        c = history.first_commit(".", path)
        return (c["short"], c["time"]) if c else (None, None)

    plan_sha, plan_at = first(plan_path)
    changes = history.commits_touching(".", plan_path)
    judge_sha, judge_at = first(judge_path)
    from datetime import datetime

    def when(text):
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S%z")

    ends = sorted((r["finished_at"] for r in runs if r["finished_at"]), key=when)
    return {"plan_commit": plan_sha, "plan_at": plan_at, "plan_changed": len(changes) > 1,
            "judge_commit": judge_sha, "judge_at": judge_at,
            "first_run_at": ends[0] if ends else None, "last_run_at": ends[-1] if ends else None,
            "n_runs": len(runs), "commits": sorted({r["commit"][:7] for r in runs}),
            "dirty": sum(bool(r["dirty"]) for r in runs),
            "before_judge": sum(1 for e in ends if judge_at and when(e) < when(judge_at))}


def _n(x, digits=3):
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _p(x):
    return "–" if x is None or math.isnan(x) else f"{x:.2g}"


def render(findings: dict, table: pd.DataFrame, plan: dict) -> str:
    o = findings["order"]
    lines = ["# What carries the penalty's rescue: the λ dose-response and its arms", "",
             f"Pre-registered in `{PLAN}`, first committed in {o['plan_commit']} "
             f"({o['plan_at']})" + (", changed since (git log shows how)" if o["plan_changed"]
                                    else ", unchanged since") + f"; its judge "
             f"(`studies/dose/judge.py`) first committed in {o['judge_commit']} "
             f"({o['judge_at']}). The study's own runs here: {o['n_runs']}, from commits "
             f"{', '.join(o['commits']) or '–'} ({o['dirty']} from a dirty tree), finished "
             f"{o['first_run_at'] or '–'} to {o['last_run_at'] or '–'}; "
             f"{o['before_judge']} finished before the judge was committed. The numbers seen "
             "before the plan was written are listed at its top; the runs at λ = 0, 1e-4, "
             "1e-2 and the frozen baseline on these seeds are those seen runs.", ""]
    lines += ["Where the runs depart from the plan's words: the cap acts before every "
              "optimizer step on that step's batch (the plan says after every step on the "
              "batch just seen: the same rescaling, read one batch later), so the weights "
              "saved after an epoch may sit above the cap until the next step; and each arm "
              "is a rule of its own (science/learning_rules/dfa_arms.py) rather than an option of "
              "DFA's, so that no run already in the record was retrained.", ""]
    status = findings["tables"]
    waiting = [f"{k} ({v['have']} of {v['need']} runs here)" for k, v in status.items()
               if not v["judged"]]
    if waiting:
        lines += ["Not yet judged, awaiting runs (a table is judged only when every run its "
                  "parts read is in the record): " + "; ".join(waiting) + ".", ""]
    d = plan["decision"]
    lines += [f"Decision rule (the plan's): the {int(d['confidence'] * 100)} % Student-t "
              "interval of each part's mean over the seeds, a p-value against its threshold "
              "(two one-sided tests for a claim of no effect), Holm's correction over the "
              "parts of one table; a part holds or is contradicted when its adjusted p < "
              f"{1 - d['confidence']:.2g}.", ""]
    by_table: dict[str, list[dict]] = {}
    for v in findings["verdicts"]:
        by_table.setdefault(v["table"], []).append(v)
    for name, vs in by_table.items():
        lines += [f"## Table `{name}`", "",
                  "| part | claim | mean | 95 % t-interval | p (Holm) | verdict | favours |",
                  "|---|---|---|---|---|---|---|"]
        for v in vs:
            why = f" ({v['reason']})" if v["verdict"] == "undecided" else ""
            lines.append(f"| `{v['id']}` | {v['text']} | {_n(v['mean'])} | [{_n(v['low'])}, "
                         f"{_n(v['high'])}] | {_p(v['p_holm'])} | **{v['verdict']}**{why} | "
                         f"{v['favours'] or '–'} |")
        lines.append("")
    if findings["mediation"]:
        lines += ["## Mediation (shown, not judged)", "",
                  "The share of the rescue at λ (accuracy at λ minus at λ = 0) that an arm "
                  "accounts for: a ratio of means over seeds, its 95 % paired bootstrap "
                  "interval over seeds.", "",
                  "| arm | against λ | rescue at λ | share | 95 % interval | the share that |",
                  "|---|---|---|---|---|---|"]
        for m in findings["mediation"]:
            lines.append(f"| {m['arm']} | {m['lam']:g} | {_n(m['rescue_mean'])} | "
                         f"{_n(m['share'], 2)} | [{_n(m['low'], 2)}, {_n(m['high'], 2)}] | "
                         f"{m['what']} |")
        lines.append("")
    if findings["regression"]:
        r = findings["regression"]
        lines += [f"Across the dose ({r['n_runs']} runs, a fixed effect per seed): accuracy "
                  f"changes by {_n(r['per_sd_log10_h_L_norm'])} per standard deviation of "
                  f"log ‖h_L‖ and by {_n(r['per_sd_deep_cosine'])} per standard deviation of "
                  f"the deep cosine, fitted together; the two correlate at r = "
                  f"{_n(r['r_norm_alignment'], 2)} (descriptive: both move with λ).", ""]
    if findings["verdicts"]:
        seeds = sorted({int(s) for v in findings["verdicts"] for s in v["per_seed"]})
        lines += ["## Each seed", "", "| part | " + " | ".join(map(str, seeds)) + " |",
                  "|---|" + "---|" * len(seeds)]
        for v in findings["verdicts"]:
            lines.append(f"| `{v['id']}` | " + " | ".join(
                _n(v["per_seed"].get(str(s), v["per_seed"].get(s))) for s in seeds) + " |")
        lines.append("")
    if len(table):
        g = table.groupby(["recipe", "method", "lam"], sort=False)
        lines += [f"## The runs (means over the seeds here; per run: `{OUT['runs']}`)",
                  "",
                  "![The dose-response](fig_dose.png)", "",
                  "| recipe | rule | λ | seeds | test accuracy | sd | log₁₀ ‖h_L‖ | "
                  "log₁₀ ‖h_0‖ | largest ‖f_l‖ | deep cosine | minus fresh B |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for (recipe, method, lam), r in g:
            lines.append(
                f"| {recipe} | {method} | {lam:g} | {len(r)} | {_n(r.test_acc.mean())} | "
                f"{_n(r.test_acc.std(ddof=1))} | {_n(r.log10_h_L_norm.mean(), 2)} | "
                f"{_n(float(pd.Series(r.h_0_norm, dtype=float).map(math.log10).mean()), 2)} | "
                f"{_n(r.branch_norm_max.mean(), 0)} | {_n(r.deep_cosine.mean())} | "
                f"{_n(r.null_deep_gap.mean())} |")
        lines.append("")
    return "\n".join(lines)


class GuardError(ValueError):
    """A sentence written for one outcome, read beside findings that say another."""


def guard(findings: dict, says: dict[str, str], where: str) -> None:
    """Stop, naming the sentence (``where``), when a verdict it asserts (``says``: part →
    verdict) is not the findings' (a sentence is written for the outcome the data show;
    when the data change, a person rewrites it)."""
    have = {v["id"]: v["verdict"] for v in findings["verdicts"]}
    wrong = {part: have.get(part) for part, verdict in says.items()
             if have.get(part) != verdict}
    if wrong:
        raise GuardError(f"{where} says {', '.join(f'{p} {says[p]}' for p in wrong)}; the "
                         f"findings say {', '.join(f'{p} {v}' for p, v in wrong.items())}: "
                         "rewrite the sentence for the outcome")


def readme_block(findings: dict) -> str:
    """README's lines for the dose study (make publish writes them between its markers):
    what the data show, in sentences written for that outcome, each guarded
    (``guard``), with its numbers from the findings; what still waits for runs."""
    v = {x["id"]: x for x in findings["verdicts"]}

    def ci(part):
        x = v[part]
        return f"{_n(x['mean'])} [{_n(x['low'])}, {_n(x['high'])}]"

    lines = ["- **What carries the rescue** ([docs/dose.md](docs/dose.md)), planned in "
             f"`{PLAN}` before its runs:"]
    tables = findings["tables"]
    if tables["arms"]["judged"]:
        guard(findings, {"cap_rescues": "holds", "redraw_over_frozen": "contradicted",
                         "cap_no_alignment": "contradicted"},
              "studies/dose/page.py, README's sentence on the arms")
        lines.append(
            "  capping the branches' norm alone rescues part of the accuracy "
            f"({ci('cap_rescues')} over unpenalised DFA), and the signals still align. "
            "With B redrawn every step the penalty rescues nothing (against frozen blocks: "
            f"{ci('redraw_over_frozen')}): any rescue needs a fixed B to align to.")
    if tables["dose"]["judged"]:
        guard(findings, {"dose_accuracy_follows_norm": "holds",
                         "dose_accuracy_follows_alignment": "contradicted"},
              "studies/dose/page.py, README's sentence on the dose")
        lines.append(
            "  Across ten penalties, accuracy follows the residual stream's norm (mean "
            f"within-seed correlation {ci('dose_accuracy_follows_norm')}), not the deep "
            f"alignment ({ci('dose_accuracy_follows_alignment')}).")
    waiting = [f"{k} ({t['have']} of {t['need']} runs)" for k, t in tables.items()
               if not t["judged"]]
    if waiting:
        lines.append("  Awaiting runs, judged when all are in the record: "
                     + "; ".join(waiting) + ".")
    return "\n".join(lines)
