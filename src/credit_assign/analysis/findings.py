"""Findings, computed once, as data: an outcome and the numbers and seeds it rests on.
Step ``findings`` writes them to ``results/<dataset>/<recipe>/summary/findings.json`` (validated
against the package's result schema, kind ``findings``, when written and when read);
the paper's verdicts (numbers.tex's outcome flags and data, paper_verdicts, for the
words of paper/ms.tex) and the reproduction notes (templates/notes.md.j2) are rendered
from that file, never from a second computation.

``verdicts``: by the name of the paper/ms.tex macro that says each one.
``notes``: notes_findings.findings (None without the variant study).

EP's verdict (ep_finding) is not in the file: it is the EP probe's alone, taken by step
paper_numbers from the probe's by-seed table (ep_block0), so that the variant study's
notes never wait for the EP probes.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd

from credit_assign.analysis import study as variant_study
from credit_assign.analysis.aggregate import select_runs
from credit_assign.analysis.comparison import MEASUREMENT_SEP
from credit_assign.infra.results import read_result, write_result


def diverged_seeds(sel: pd.DataFrame) -> list[int]:
    """The seeds of a runs-table selection whose run recorded a non-finite epoch."""
    if "n_nonfinite" not in sel:
        return []
    return sorted(int(s) for s in sel[sel.n_nonfinite.fillna(0) > 0].seed)


def penalty_norm_finding(runs: pd.DataFrame, penalty: float) -> dict:
    """Whether the penalty lowers DFA's ‖h_L‖ seed by seed (the same seed with and
    without it): outcome ``lowers`` (on every seed), ``not_lower`` (``seeds``: where
    not), ``undecided`` (``diverged``: the seeds that did) or ``missing``; ``n``: the
    seeds compared."""
    pen = select_runs(runs, "dfa", penalty).set_index("seed").h_L_norm_median
    zero = select_runs(runs, "dfa", 0.0).set_index("seed").h_L_norm_median
    seeds = sorted(set(pen.index) & set(zero.index))
    out = {"n": len(seeds), "seeds": [], "diverged": []}
    if not seeds:
        return {**out, "outcome": "missing"}
    runs_of = pd.concat([select_runs(runs, "dfa", penalty), select_runs(runs, "dfa", 0.0)])
    bad = sorted(set(diverged_seeds(runs_of))
                 | {int(s) for s in seeds if not (np.isfinite(pen[s]) and np.isfinite(zero[s]))})
    if bad:
        return {**out, "outcome": "undecided", "diverged": bad}
    not_lower = [int(s) for s in seeds if not float(pen[s]) < float(zero[s])]
    return {**out, "outcome": "not_lower" if not_lower else "lowers", "seeds": not_lower}


def null_test(nulls: pd.DataFrame, lam: float) -> tuple[pd.Series, pd.Series, bool | None]:
    """DFA's deep cosine at λ with its trained-with B and with fresh draws, and whether
    the trained-with value lies above the null by more than two of the null's standard
    deviations (None: not measured) — the one test of "above the null", at every λ."""
    sel = select_runs(nulls, "dfa", lam)
    trained = sel[sel.feedback == "trained"].deep_cosine
    fresh = sel[sel.feedback == "fresh"].deep_cosine
    if not (len(trained) and len(fresh)) or null_diverged(nulls, lam):
        return trained, fresh, None  # not measured, or diverged: never a False
    return trained, fresh, bool(trained.mean() > fresh.mean() + 2 * fresh.std(ddof=1))


def null_diverged(nulls: pd.DataFrame, lam: float) -> list[int]:
    """The seeds whose null at λ holds a non-finite cosine (a diverged model): the
    screen is undecided on them, never 'not above'."""
    sel = select_runs(nulls, "dfa", lam)
    bad = sel[~np.isfinite(sel.deep_cosine.astype(float))]
    return sorted({int(s) for s in bad.seed})


def null_finding(nulls: pd.DataFrame, lam: float) -> dict:
    """The null screen at λ (null_test) as a finding: outcome ``above``, ``not_above``,
    ``undecided`` (``diverged``: the seeds whose null is not finite) or ``missing``;
    ``n``: the seeds the trained-with mean is over; the means and standard deviations it
    compares; and ``per_seed``, each seed against its own draws by the same screen."""
    trained, fresh, above = null_test(nulls, lam)
    bad = null_diverged(nulls, lam)
    outcome = ("above" if above else "not_above" if above is not None
               else "undecided" if bad else "missing")
    per_seed = []
    for seed, rows in nulls.groupby("seed") if len(nulls) else []:
        t, f, a = null_test(rows, lam)
        if a is not None and len(f) >= 2:
            per_seed.append({"seed": int(seed), "trained": float(t.mean()),
                             "fresh_mean": float(f.mean()), "fresh_sd": float(f.std(ddof=1)),
                             "draws": len(f), "above": a})
    return {"lam": float(lam), "outcome": outcome, "n": len(trained), "diverged": bad,
            "trained_mean": _mean(trained), "trained_sd": _sd(trained),
            "fresh_mean": _mean(fresh), "fresh_sd": _sd(fresh), "draws": len(fresh),
            "per_seed": per_seed}


def _mean(x: pd.Series) -> float | None:
    return float(x.mean()) if len(x) else None


def _sd(x: pd.Series) -> float | None:
    return float(x.std(ddof=1)) if len(x) > 1 else None


def ordering_finding(runs: pd.DataFrame, penalty: float) -> dict:
    """Whether the paper's ordering bp > dfa(penalty) > frozen > dfa(0) holds in the
    mean test accuracy: outcome ``holds``, ``fails``, ``undecided`` (``diverged``) or
    ``missing``."""
    cells = [("bp", 0.0), ("dfa", penalty), ("frozen", 0.0), ("dfa", 0.0)]
    sels = [select_runs(runs, m, lam) for m, lam in cells]
    bad = sorted({s for sel in sels for s in diverged_seeds(sel)}
                 | {int(s) for sel in sels for s in sel[~np.isfinite(sel.test_acc)].seed})
    if bad:
        return {"outcome": "undecided", "diverged": bad}
    means = [sel.test_acc.mean() for sel in sels]
    if any(pd.isna(m) for m in means):
        return {"outcome": "missing", "diverged": []}
    holds = all(a > b for a, b in itertools.pairwise(means))
    return {"outcome": "holds" if holds else "fails", "diverged": []}


def verdict_findings(runs: pd.DataFrame, nulls: pd.DataFrame, penalty: float) -> dict:
    """The run section's verdicts as findings, by the name of the paper/ms.tex macro
    that says each one."""
    return {"penaltynormverdict": penalty_norm_finding(runs, penalty),
            "rescueverdict": null_finding(nulls, penalty),
            "zeronullverdict": null_finding(nulls, 0.0),
            "orderingverdict": ordering_finding(runs, penalty)}


def _seed_gaps(row) -> list[float]:
    """A gap-map row's per-seed gaps (tolerance units), finite ones only."""
    return [g for g in variant_study.seed_map(row.gap_seed).values() if not pd.isna(g)] \
        if "gap_seed" in row.index else []


def norm_spread_finding(own: pd.DataFrame) -> dict:
    """How far the recipes' own runs move DFA's unpenalised ‖h_L‖: the largest recipe
    mean over the smallest, which recipes they are, and their per-seed gaps (a mean over
    three seeds can hide seeds that move in opposite directions). The caller passes the
    stated recipe and the open variants: the finding is about choices the paper leaves
    open. Outcome ``measured`` or ``missing`` (fewer than two recipes)."""
    finite = np.isfinite(own.ours_mean.astype(float)) & (own.ours_mean > 0)
    not_finite = sorted(set(own[~finite].recipe))  # diverged: named, never compared
    own = own[finite]
    if len(own) < 2:
        return {"outcome": "missing", "not_finite": not_finite}
    lo, hi = own.loc[own.ours_mean.idxmin()], own.loc[own.ours_mean.idxmax()]
    return {"outcome": "measured", "not_finite": not_finite,
            "factor": float(hi.ours_mean / lo.ours_mean),
            "low": {"recipe": str(lo.recipe), "mean": float(lo.ours_mean),
                    "seed_gaps": _seed_gaps(lo)},
            "high": {"recipe": str(hi.recipe), "mean": float(hi.ours_mean),
                     "seed_gaps": _seed_gaps(hi)}}


def headline_finding(own: pd.DataFrame) -> dict:
    """Whether any column that ran or measured DFA at λ = 0 itself (a recipe's own runs
    or a measurement of them) brings the headline norm within tolerance: outcome
    ``within`` (``columns``: those that do, each recipe, kind and gap; ``departs``: one of
    them departs from the stated recipe), ``none`` (``closest``) or ``missing``."""
    own = own[own.gap.notna()]
    if own.empty:
        return {"outcome": "missing"}
    within = own[own.gap.abs() <= 1]
    closest = own.loc[own.gap.abs().idxmin()]
    if within.empty:
        return {"outcome": "none", "closest": {"recipe": str(closest.recipe),
                                               "kind": str(closest.kind),
                                               "gap": float(closest.gap)}}
    return {"outcome": "within",
            "columns": [{"recipe": str(r.recipe), "kind": str(r.kind), "gap": float(r.gap)}
                        for r in within.itertuples()],
            "departs": any(str(k).startswith("departs") for k in within.kind)}


EP_HIGH = 0.9  # block 0's cosine above this: the tension reached the bottom block


def ep_finding(block0: pd.DataFrame) -> dict:
    """What block 0's cosine says about reaching the bottom block, one row per seed
    (``cosine``, ``settled``, ``seed``) at one free-phase length. Only settled seeds
    count: a seed whose free phase did not settle failed before depth could matter.
    Outcome ``none_settled``, ``reaches`` (above ``high`` in every settled seed),
    ``partly`` or ``no`` (at most zero in every settled seed), with the seeds each way."""
    settled = block0.settled.astype(bool)
    ok, bad = block0[settled], block0[~settled]

    def seeds(rows):
        return sorted(int(x) for x in rows.seed)

    out = {"high": EP_HIGH, "settled": seeds(ok), "unsettled": seeds(bad),
           "low_settled": seeds(ok[ok.cosine <= EP_HIGH]),
           "low_unsettled": seeds(bad[bad.cosine <= EP_HIGH])}
    if ok.empty:
        return {**out, "outcome": "none_settled"}
    if not out["low_settled"]:
        return {**out, "outcome": "reaches"}
    return {**out, "outcome": "no" if (ok.cosine <= 0).all() else "partly"}



def gap_findings(gaps: pd.DataFrame, study: dict | None = None) -> dict:
    """The variant study's verdicts: whether any column brings the headline norm within
    tolerance, the goal, the winner's curse and how far the recipes move the norm."""
    headline = variant_study.headline_rows(gaps)
    own = headline[~headline.inherited.astype(bool)
                   & ~headline.recipe.str.contains(MEASUREMENT_SEP, regex=False)]
    rank = variant_study.ranking(gaps, study)
    return {"headlineverdict": headline_finding(headline[~headline.inherited.astype(bool)]),
            "goalverdict": {"result": variant_study.goal(rank, study, gaps)},
            "curseverdict": variant_study.curse_finding(variant_study.holdout(gaps, study)),
            "normspreadverdict": norm_spread_finding(
                own[own.kind.isin([variant_study.STATED, "open"])])}


def ep_block0(by_seed: pd.DataFrame, precision: str) -> pd.DataFrame:
    """The EP probe's block-0 rows at its longest free phase, for one precision (what the
    EP verdict is taken on)."""
    if "settled" not in by_seed:
        raise ValueError("the EP by-seed table has no 'settled' column: rerun the step "
                         "ep_stack_summary (config ep_stack.settle)")
    d = by_seed[by_seed.precision == precision]
    return d[(d.group == "block0") & (d.free_steps == d.free_steps.max())]


def verdicts(runs: pd.DataFrame, nulls: pd.DataFrame, penalty: float,
             gaps: pd.DataFrame | None = None, study: dict | None = None) -> dict:
    """The verdicts of the runs (verdict_findings) and, where it ran, of the variant
    study (gap_findings), by their macros' names."""
    out = verdict_findings(runs, nulls, penalty)
    if gaps is not None and not gaps.empty:
        out |= gap_findings(gaps, study)
    return out


def write(out: str | Path, verdicts: dict, notes: dict | None = None) -> dict:
    """findings.json: the paper's ``verdicts`` (``verdicts``) and the notes' findings
    (notes_findings.findings; None without the variant study), validated."""
    return write_result({"verdicts": verdicts, "notes": notes, "schema_version": 1,
                         "kind": "findings"}, "findings", out)


def read(path: str | Path) -> dict:
    """findings.json, validated (a missing, corrupt or hand-edited file names itself)."""
    return read_result(path, "findings")
