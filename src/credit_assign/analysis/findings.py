"""Findings, computed once, as data: an outcome and the numbers and seeds it rests on.
Step ``findings`` writes them to ``results/<dataset>/<recipe>/summary/findings.json`` (validated
against the package's result schema, kind ``findings``, when written and when read);
the verdicts' words (one statement template each, templates/statements/, for the pages
and the paper's statements.tex) and the reproduction notes (templates/notes.md.j2) are
rendered from that file, never from a second computation.

``verdicts``: the variant study's, as ``<statement>verdict`` (none without the study).
``nulls``: the fresh-B null at λ = 0 and at the penalty as data (null_summary; judged by
the claims, not here). ``notes``: notes_findings.findings
(None without the variant study).

EP's verdict (ep_finding) is not in the file: it is the EP probe's alone, taken by step
paper_numbers from the probe's by-seed table (ep_block0), so that the variant study's
notes never wait for the EP probes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from credit_assign.analysis import study as variant_study
from credit_assign.analysis.aggregate import select_runs
from credit_assign.analysis.comparison import MEASUREMENT_SEP
from credit_assign.infra.results import read_result, validate_result, write_result


def diverged_seeds(sel: pd.DataFrame) -> list[int]:
    """The seeds of a runs-table selection whose run recorded a non-finite epoch."""
    if "n_nonfinite" not in sel:
        return []
    return sorted(int(s) for s in sel[sel.n_nonfinite.fillna(0) > 0].seed)


def null_cosines(nulls: pd.DataFrame, lam: float) -> tuple[pd.Series, pd.Series]:
    """DFA's deep cosine at λ with its trained-with B and with fresh draws (the values
    the paper and the notes print; the claims judge them, learned_alignment and
    no_information_unpenalised)."""
    return _by_feedback(select_runs(nulls, "dfa", lam))


def _by_feedback(sel: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """Selected null rows' deep cosines with the trained-with B, and with fresh draws."""
    return sel[sel.feedback == "trained"].deep_cosine, sel[sel.feedback == "fresh"].deep_cosine


def null_summary(nulls: pd.DataFrame, lam: float) -> dict:
    """The fresh-B null at λ as data, no verdict (the claims judge it, with intervals on
    fresh seeds): ``n`` the seeds the trained-with mean is over, the means and standard
    deviations, the draws, ``not_finite`` the seeds whose null holds a non-finite cosine
    (a diverged model), and ``per_seed``, each seed's cosine beside its own draws."""
    sel = select_runs(nulls, "dfa", lam)  # selected once, split by seed below
    trained, fresh = _by_feedback(sel)
    bad = sorted({int(s) for s in sel[~np.isfinite(sel.deep_cosine.astype(float))].seed})
    per_seed = []
    for seed, rows in sel.groupby("seed") if len(sel) else []:
        t, f = _by_feedback(rows)
        if len(t) and len(f) >= 2 and int(seed) not in bad:
            per_seed.append({"seed": int(seed), "trained": float(t.mean()),
                             "fresh_mean": float(f.mean()), "fresh_sd": float(f.std(ddof=1)),
                             "draws": len(f)})
    return {"lam": float(lam), "n": len(trained), "not_finite": bad,
            "trained_mean": _mean(trained), "trained_sd": _sd(trained),
            "fresh_mean": _mean(fresh), "fresh_sd": _sd(fresh), "draws": len(fresh),
            "per_seed": per_seed}


def _mean(x: pd.Series) -> float | None:
    return float(x.mean()) if len(x) else None


def _sd(x: pd.Series) -> float | None:
    return float(x.std(ddof=1)) if len(x) > 1 else None


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
    outcome = ("none_settled" if ok.empty else "reaches" if not out["low_settled"]
               else "no" if (ok.cosine <= 0).all() else "partly")
    found = {**out, "outcome": outcome}
    validate_result(found, "ep_verdict")  # its outcomes: the schema's enum, declared once
    return found



def gap_findings(gaps: pd.DataFrame, study: dict | None = None) -> dict:
    """The variant study's verdicts: whether any column brings the headline norm within
    tolerance, the goal, the winner's curse and how far the recipes move the norm."""
    headline = variant_study.headline_rows(gaps)
    own = headline[~headline.inherited.astype(bool)
                   & ~headline.recipe.str.contains(MEASUREMENT_SEP, regex=False)]
    rank = variant_study.ranking(gaps, study)
    return {"headlineverdict": headline_finding(headline[~headline.inherited.astype(bool)]),
            "goalverdict": variant_study.goal_finding(variant_study.goal(rank, study, gaps)),
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


def verdicts(gaps: pd.DataFrame | None = None, study: dict | None = None) -> dict:
    """The variant study's verdicts (gap_findings), by their macros' names; none without
    it. (The run section's screens — the penalty lowers the norm, penalised DFA above its
    fresh-B null, λ = 0 above its null, the accuracy ordering — were retired into the
    claims that judge the same statements with intervals on fresh seeds.)"""
    return gap_findings(gaps, study) if gaps is not None and not gaps.empty else {}


def write(out: str | Path, verdicts: dict, notes: dict | None = None,
          nulls: list[dict] | None = None) -> dict:
    """findings.json: the variant study's ``verdicts`` (``verdicts``), the notes' findings
    (notes_findings.findings; None without the variant study) and the fresh-B nulls'
    values (null_summary at λ = 0, then the penalty), validated."""
    return write_result({"verdicts": verdicts, "notes": notes, "nulls": nulls or [],
                         "schema_version": 2, "kind": "findings"}, "findings", out)


def read(path: str | Path) -> dict:
    """findings.json, validated (a missing, corrupt or hand-edited file names itself)."""
    return read_result(path, "findings")
