"""Findings, computed once, as data: an outcome and the numbers and seeds it rests on.
Step ``findings`` writes them to ``results/<dataset>/<recipe>/summary/findings.json`` (validated
against the package's result schema, kind ``findings``, when written and when read);
the verdicts' words (one template each, beside its module, for the pages; the paper's
guards and values, paper/findings.tex) and the reproduction notes
(templates/notes.md.j2) are rendered from that file, never from a second computation.

``verdicts``: the variant study's, as ``<name>verdict`` (none without the study):
one module each in analysis/verdicts/, which declares its outcomes and fields, judged
by analysis.verdicts.judge.
``nulls``: the fresh-B null at λ = 0 and at the penalty as data (null_summary; judged by
the claims, not here). ``notes``: notes_findings.findings
(None without the variant study).

The EP probe has no verdict: its seeds were seen and its settle criterion chosen after
seeing them; the EP questions judge (analysis.ep_question, studies/ep_question2).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from credit_assign.analysis.aggregate import select_runs
from credit_assign.analysis.verdicts import check_all
from credit_assign.infra.results import read_result, write_result


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


def ep_block0(by_seed: pd.DataFrame, precision: str) -> pd.DataFrame:
    """The EP probe's block-0 rows at its longest free phase, for one precision (what the
    EP verdict is taken on)."""
    if "settled" not in by_seed:
        raise ValueError("the EP by-seed table has no 'settled' column: rerun the step "
                         "ep_stack_summary (config ep_stack.settle)")
    d = by_seed[by_seed.precision == precision]
    return d[(d.group == "block0") & (d.free_steps == d.free_steps.max())]


def write(out: str | Path, verdicts: dict, notes: dict | None = None,
          nulls: list[dict] | None = None) -> dict:
    """findings.json: the variant study's ``verdicts`` (``verdicts``), the notes' findings
    (notes_findings.findings; None without the variant study) and the fresh-B nulls'
    values (null_summary at λ = 0, then the penalty), validated."""
    check_all(verdicts, str(out))
    return write_result({"verdicts": verdicts, "notes": notes, "nulls": nulls or [],
                         "schema_version": 2, "kind": "findings"}, "findings", out)


def read(path: str | Path) -> dict:
    """findings.json, validated (a missing, corrupt or hand-edited file names itself; each
    verdict by its module's outcomes and fields)."""
    record = read_result(path, "findings")
    check_all(record["verdicts"], str(path))
    return record
