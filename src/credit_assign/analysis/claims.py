"""The paper's claims as effects with intervals (config/claims.yaml, docs/method.md
"Claims"): each claim's effect on each seed, its mean over seeds with a bootstrap
interval, and the verdict by the decision written down before the runs.

Findings only, as data: records with codes (``verdict``: holds / contradicted /
undecided; ``reason``: diverged / too_few / straddles), never sentences — the pages
render them through templates (credit_assign.reporting.render).

Reads tables, never result files or torch: ``runs`` and ``epochs`` (the aggregate
tables), ``nulls`` (:func:`credit_assign.analysis.aggregate.null_layer_table`: the
per-layer fresh-B null) and ``ep`` (the EP probe's per-seed table with its settle flags).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from credit_assign.analysis.aggregate import select_runs
from credit_assign.spec.claims import ClaimsError, Spec, verdict_set
from credit_assign.spec.matrix import lam_str

__all__ = ["ClaimsError", "decide", "findings", "interval", "judge", "seed_effects"]
VERDICTS = ("holds", "contradicted", "undecided")
# why a claim is undecided (the templates word them)
REASONS = ("diverged", "too_few", "straddles")
EP_GROUP = "block0"


# ---- effects, seed by seed -------------------------------------------------------------
def _row(table: pd.DataFrame, run: dict, seed: int) -> pd.DataFrame:
    sel = select_runs(table, run["method"], float(run["lam"]), seed)
    if sel.empty:
        raise ClaimsError(f"no {run['method']} λ={lam_str(run['lam'])} seed {seed} in the "
                          "claims' tables: the claims target builds every run it reads")
    return sel


def _diverged(runs: pd.DataFrame, run: dict, seed: int) -> bool:
    return int(_row(runs, run, seed).n_nonfinite.iloc[0]) > 0


def _scalar(runs, run, seed, metric) -> float:
    value = _row(runs, run, seed)[metric].iloc[0]
    return float(value) if pd.notna(value) else math.nan


def _log10(x: float) -> float:
    return math.log10(x) if x > 0 and math.isfinite(x) else math.nan


def seed_effects(claim: dict, seeds: list[int], tables: dict[str, pd.DataFrame]
                 ) -> list[dict]:
    """One row per (part, seed): the effect and its status (``ok``; ``diverged``: a run
    it reads recorded a non-finite epoch, or the effect is not finite; ``unsettled``:
    an EP estimate whose free phase did not settle, left out by the claim's own criterion)."""
    e, rows = claim["effect"], []
    runs = tables["runs"]

    def add(part, seed, value, diverged=False, status=None):
        bad = diverged or not math.isfinite(value)
        rows.append({"claim": claim["id"], "part": part, "seed": int(seed),
                     "effect": value, "status": status or ("diverged" if bad else "ok")})

    for seed in seeds:
        kind = e["kind"]
        if kind in ("diff", "log_ratio"):
            a, b = (_scalar(runs, e[k], seed, e["metric"]) for k in ("a", "b"))
            value = a - b if kind == "diff" else _log10(a) - _log10(b)
            add("", seed, value, _diverged(runs, e["a"], seed) or _diverged(runs, e["b"], seed))
        elif kind == "log_growth":
            hist = _row(tables["epochs"], e["a"], seed).sort_values("epoch")
            first = hist[hist.epoch == 1][e["metric"]]
            value = (_log10(float(hist[e["metric"]].iloc[-1])) - _log10(float(first.iloc[0]))
                     if len(first) else math.nan)
            add("", seed, value, _diverged(runs, e["a"], seed))
        elif kind == "null_gap":
            sel = _row(tables["nulls"], e["a"], seed)
            for layer in e["layers"]:
                part = str(layer)
                at = sel[sel.layer.astype(str) == part]
                if at.empty:
                    raise ClaimsError(f"claim {claim['id']}: no layer {part} in the null of "
                                      f"{e['a']['method']} seed {seed} (a deeper model?)")
                trained = at[at.feedback == "trained"].cosine.astype(float)
                fresh = at[at.feedback == "fresh"].cosine.astype(float)
                # a non-finite cosine anywhere (trained or any draw) makes the effect
                # non-finite: never a mean over the draws that happened to stay finite
                value = (float(trained.iloc[0]) - float(fresh.mean(skipna=False))
                         if len(trained) and len(fresh) else math.nan)
                add(_layer_part(part), seed, value, _diverged(runs, e["a"], seed))
        elif kind == "value":
            ep = tables["ep"]
            for t1 in e["free_steps"]:
                at = ep[(ep.seed == seed) & (ep.free_steps == t1) & (ep.group == EP_GROUP)]
                if at.empty:
                    raise ClaimsError(f"no EP estimate for seed {seed} at T1 = {t1}")
                value = float(at.cosine.iloc[0])
                settled = bool(at.settled.iloc[0])
                add(f"T1={t1}", seed, value,
                    status=None if settled or not math.isfinite(value) else "unsettled")
        else:  # the schema names every kind
            raise ClaimsError(f"claim {claim['id']}: unknown effect kind {kind}")
    return rows


def _layer_part(layer: str) -> str:
    return "deep" if layer == "deep" else f"l{layer}"


# ---- the interval and the verdict -------------------------------------------------------
def interval(values, decision: dict) -> tuple[float, float, str]:
    """The ``decision['confidence']`` bootstrap interval of the mean over seeds
    (scipy.stats.bootstrap, ``decision['method']``; ``decision['fallback']`` where that
    is undefined, e.g. BCa on identical values), and the method that gave it."""
    from scipy.stats import bootstrap

    x = np.asarray(values, dtype=float)
    for method in (decision["method"], decision["fallback"]):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a degenerate sample: handled below
            # random_state as config/claims.yaml writes it (scipy's own seeding of it)
            res = bootstrap((x,), np.mean, confidence_level=decision["confidence"],
                            n_resamples=decision["n_resamples"], method=method,
                            random_state=decision["random_state"])
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if math.isfinite(low) and math.isfinite(high):
            return low, high, method
        if np.ptp(x) == 0:  # every seed the same: the interval is that value
            return float(x[0]), float(x[0]), "degenerate"
    return math.nan, math.nan, "undefined"


def decide(low: float, high: float, claim: dict) -> tuple[str, str | None]:
    """The claim's decision (config/claims.yaml ``decision``) on an interval."""
    c = claim["claim"]
    if c["side"] == "within":
        m = c["margin"]
        if -m < low and high < m:
            return "holds", None
        if low > m or high < -m:
            return "contradicted", None
        return "undecided", "straddles"
    t = c["threshold"]
    above, below = low > t, high < t
    if (above and c["side"] == "greater") or (below and c["side"] == "less"):
        return "holds", None
    if above or below:
        return "contradicted", None
    return "undecided", "straddles"


def judge(claim: dict, rows: list[dict], decision: dict) -> dict:
    """One verdict from one part's per-seed rows: never from a diverged run (undecided,
    naming the seeds), never from fewer than ``min_seeds`` usable seeds."""
    used = [r for r in rows if r["status"] == "ok"]
    diverged = [r["seed"] for r in rows if r["status"] == "diverged"]
    unsettled = [r["seed"] for r in rows if r["status"] == "unsettled"]
    values = [r["effect"] for r in used]
    out = {"n": len(used), "n_seeds": len(rows), "seeds": [r["seed"] for r in used],
           "diverged": diverged, "unsettled": unsettled,
           "mean": float(np.mean(values)) if values else math.nan,
           "sd": float(np.std(values, ddof=1)) if len(values) > 1 else math.nan,
           "low": math.nan, "high": math.nan, "interval": "none"}
    if diverged:
        return {**out, "verdict": "undecided", "reason": "diverged"}
    if len(used) < decision["min_seeds"]:
        return {**out, "verdict": "undecided", "reason": "too_few"}
    out["low"], out["high"], out["interval"] = interval(values, decision)
    verdict, reason = decide(out["low"], out["high"], claim)
    return {**out, "verdict": verdict, "reason": reason}


def _paper(claim: dict, part: str):
    paper = claim.get("paper")
    return paper.get(part) if isinstance(paper, dict) else paper


def findings(spec: Spec, tables: dict[str, pd.DataFrame]) -> dict:
    """Every claim judged on its verdict set, and (where it has one) on the study's
    seeds beside it: ``verdicts`` (one record per claim, part and seed set) and
    ``by_seed`` (one per claim, part, seed set and seed)."""
    verdicts, by_seed = [], []
    for claim in spec["claims"]:
        sets = [verdict_set(claim)]
        if sets[0] == "fresh":
            sets.append("study")
        for seed_set in sets:
            rows = seed_effects(claim, spec["seeds"][seed_set], tables)
            by_seed += [{**r, "seed_set": seed_set} for r in rows]
            for part in dict.fromkeys(r["part"] for r in rows):
                part_rows = [r for r in rows if r["part"] == part]
                c = claim["claim"]
                verdicts.append({
                    "claim": claim["id"], "part": part, "seed_set": seed_set,
                    "verdict_set": seed_set == sets[0], "side": c["side"],
                    "threshold": c.get("threshold", math.nan),
                    "margin": c.get("margin", math.nan),
                    "paper": _paper(claim, part),
                    **judge(claim, part_rows, spec["decision"])})
    return {"verdicts": verdicts, "by_seed": by_seed, "counts": counts(verdicts)}


def rolled_up(parts: list[str]) -> str:
    """A claim's verdict from its parts' (l0 … l4, deep; T1 = …): holds when every part
    holds, contradicted when any part is, else undecided. (This roll-up was added after
    config/claims.yaml was committed, before any verdict on its runs was computed.)"""
    if all(p == "holds" for p in parts):
        return "holds"
    return "contradicted" if "contradicted" in parts else "undecided"


def counts(verdicts: list[dict]) -> dict[str, dict[str, int]]:
    """How many judged effects (``parts``) and claims (``claims``, rolled up) hold, are
    contradicted, are undecided: on the verdict seeds (``verdict``, ``verdict_claims``)
    and, beside them, on the study's seeds for the claims whose verdict is taken on
    fresh seeds (``study``, ``study_claims``: the same effects, seeds seen before)."""
    out = {}
    for name, pick in (("verdict", lambda v: v["verdict_set"]),
                       ("study", lambda v: v["seed_set"] == "study" and not v["verdict_set"])):
        chosen = [v for v in verdicts if pick(v)]
        out[name] = {"effects": len(chosen),
                     **{k: sum(v["verdict"] == k for v in chosen) for k in VERDICTS}}
        by_claim: dict[str, list[str]] = {}
        for v in chosen:
            by_claim.setdefault(v["claim"], []).append(v["verdict"])
        claims = [rolled_up(parts) for parts in by_claim.values()]
        out[name + "_claims"] = {"claims": len(claims),
                                 **{k: claims.count(k) for k in VERDICTS}}
    return out
