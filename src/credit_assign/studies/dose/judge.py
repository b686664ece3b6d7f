"""The dose study judged as its plan says: one row per run, each part's effect per seed,
its interval over seeds, Holm over the parts of a table, and the mediation shown beside.

Pure functions of the runs' results (``table``) and the plan; the script
(scripts/dose.py) reads the files and writes what these return.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from credit_assign.analysis.claims import claim_p, decide_p, holm, t_interval
from credit_assign.infra.results import read_result
from credit_assign.studies.dose.plan import ARM_RULES, Run, arm_recipe, runs

LAYERS = 5  # h_0 … h_4: the paper's depth-4 model


def _f(x) -> float:
    """A stored number as a float: a non-finite one was stored as null (NaN here)."""
    return math.nan if x is None else float(x)


def _max(values) -> float:
    v = np.asarray([_f(x) for x in values], dtype=float)
    return float(np.nanmax(v)) if np.isfinite(v).any() else math.nan


def row(run: Run, metrics: dict, null: dict | None) -> dict:
    """One run's row: what the parts read, and the per-block numbers shown beside. A
    diverged run's non-finite numbers (stored as null) are NaN here, and the run is
    flagged (``n_nonfinite``): every part it enters is undecided, "diverged"."""
    final, hist = metrics["final"], metrics["history"]
    norm = _f(final["h_L_norm_median"])
    out = {"arm": run.arm, "value": run.value, "method": run.method, "recipe": run.recipe,
           "lam": run.lam, "seed": run.seed, "test_acc": _f(final["test_acc"]),
           "h_L_norm": norm,
           "log10_h_L_norm": math.log10(norm) if norm > 0 else math.nan,
           "h_0_norm": _f(hist["h_norm_median"][-1][0]),
           "branch_norm_max": _max(hist["branch_norm_median"][-1]),
           "deep_cosine": _f(final.get("deep_cosine")),
           "n_nonfinite": len(metrics.get("nonfinite") or [])}
    cos = final.get("cosine") or [None] * LAYERS
    out |= {f"cos_l{i}": _f(c) for i, c in enumerate(cos)}
    if null is not None:
        fresh = np.asarray([[_f(c) for c in draw] for draw in null["fresh"]["cosine"]])
        trained = np.asarray([_f(c) for c in null["trained"]["cosine"]])
        fresh_deep = np.asarray([_f(c) for c in null["fresh"]["deep_cosine"]])
        out["null_deep_gap"] = _f(null["trained"]["deep_cosine"]) - float(fresh_deep.mean())
        out |= {f"null_gap_l{i}": float(trained[i] - fresh[:, i].mean())
                for i in range(len(trained))}
        out["n_nonfinite"] += len(null.get("nonfinite") or [])
    else:
        out["null_deep_gap"] = math.nan
    return out


def epochs(plan: dict) -> pd.DataFrame:
    """Per run and epoch: accuracy, ‖h_L‖, ‖h_0‖, the largest branch norm, deep cosine."""
    from pathlib import Path

    rows = []
    for run in runs(plan):
        if not Path(run.metrics()).exists():
            continue
        h = read_result(run.metrics(), "train")["history"]
        for i, ep in enumerate(h["epoch"]):
            rows.append({"arm": run.arm, "value": run.value, "method": run.method,
                         "lam": run.lam, "seed": run.seed, "epoch": ep,
                         "test_acc": h["test_acc"][i], "h_L_norm": h["h_L_norm_median"][i],
                         "h_0_norm": h["h_norm_median"][i][0],
                         "branch_norm_max": max(h["branch_norm_median"][i]),
                         "deep_cosine": h["deep_cosine"][i]})
    return pd.DataFrame(rows)


def select(table: pd.DataFrame, plan: dict, spec: dict) -> pd.DataFrame:
    """The runs a part's side names, one per seed: {lam} the dose's DFA; {method: frozen};
    {arm, value[, lam]} an arm's (its λ where it has one)."""
    if "arm" in spec:
        arm = plan["arms"][spec["arm"]]
        lam = spec.get("lam", arm["lam"] if not isinstance(arm["lam"], list) else None)
        if lam is None:
            raise ValueError(f"{spec}: arm {spec['arm']} runs at several λ; name one")
        sel = table[(table.recipe == arm_recipe(spec["arm"], spec["value"]))
                    & np.isclose(table.lam, float(lam))]
    else:
        method = spec.get("method", "dfa")
        sel = table[(table.arm == "dose") & (table.method == method)
                    & np.isclose(table.lam, float(spec["lam"]))]
    return sel.set_index("seed").loc[plan["seeds"]]


def per_seed(table: pd.DataFrame, plan: dict, part: dict) -> tuple[pd.Series, list[int]]:
    """A part's effect on each seed, and the seeds with a non-finite run among its runs."""
    e = part["effect"]
    if e["kind"] == "diff":
        a, b = select(table, plan, e["a"]), select(table, plan, e["b"])
        values = a[e["metric"]].astype(float) - b[e["metric"]].astype(float)
        bad = a.n_nonfinite.gt(0) | b.n_nonfinite.gt(0)
    elif e["kind"] == "null_gap":
        a = select(table, plan, e["a"])
        values, bad = a["null_deep_gap"].astype(float), a.n_nonfinite.gt(0)
    else:  # dose_correlation: Pearson r over the dose's λ, per seed
        dose = table[(table.arm == "dose") & (table.method == "dfa")]
        values = dose.groupby("seed").apply(
            lambda g: float(np.corrcoef(g[e["x"]].astype(float),
                                        g[e["y"]].astype(float))[0, 1]),
            include_groups=False).loc[plan["seeds"]]
        bad = dose.groupby("seed").n_nonfinite.sum().gt(0).loc[plan["seeds"]]
    return values, [int(s) for s in bad[bad].index]


def judge(table: pd.DataFrame, plan: dict) -> list[dict]:
    """Every part's verdict: the mean over seeds, its t-interval, p, Holm's p over its
    table, the verdict (holds / contradicted / undecided) and why it is undecided."""
    d = plan["decision"]
    alpha = 1 - d["confidence"]
    out = []
    for table_name, parts in plan["tables"].items():
        members = []
        for part in parts:
            values, diverged = per_seed(table, plan, part)
            x = values.to_numpy(dtype=float)
            usable = not diverged and np.isfinite(x).all() and len(x) >= d["min_seeds"]
            low, high = t_interval(x, d["confidence"]) if usable else (math.nan, math.nan)
            v = {"table": table_name, "id": part["id"], "text": part["text"],
                 "n": len(x), "mean": float(np.mean(x)) if np.isfinite(x).all() else math.nan,
                 "low": low, "high": high,
                 "p": claim_p(x, {"claim": part["claim"]}) if usable else math.nan,
                 "per_seed": {int(s): float(val) for s, val in values.items()},
                 "diverged": diverged,
                 "reason": None if usable else ("diverged" if diverged else "too_few")}
            members.append((v, part))
        # Holm over the parts of the table, every one counted: an unusable part (diverged,
        # too few seeds) enters the family with p = 1 (it can hold nothing)
        family = [v["p"] if math.isfinite(v["p"]) else 1.0 for v, _ in members]
        for (v, part), adj in zip(members, holm(family), strict=True):
            v["p_holm"] = adj if math.isfinite(v["p"]) else math.nan
            if v["reason"] is None:
                v["verdict"], v["reason"] = decide_p(v["mean"], adj, {"claim": part["claim"]},
                                                     alpha)
            else:
                v["verdict"] = "undecided"
            v["favours"] = part["favours"].get(v["verdict"])
            out.append(v)
    return out


def _ratio_interval(num: np.ndarray, den: np.ndarray, m: dict) -> tuple[float, float, float]:
    """mean(num) / mean(den) and its paired percentile bootstrap interval over seeds."""
    rng = np.random.default_rng(m["random_state"])
    n = len(num)
    idx = rng.integers(0, n, size=(m["n_resamples"], n))
    with np.errstate(divide="ignore", invalid="ignore"):
        boots = num[idx].mean(axis=1) / den[idx].mean(axis=1)
    q = (1 - m["confidence"]) / 2
    low, high = np.nanquantile(boots, [q, 1 - q])
    return float(num.mean() / den.mean()), float(low), float(high)


def mediation(table: pd.DataFrame, plan: dict) -> list[dict]:
    """The share of the rescue at λ that a bound alone reproduces (cap arm) and the share
    that needs a fixed B (redraw arm), each with its interval (shown, not judged)."""
    m, out = plan["mediation"], []
    acc0 = select(table, plan, {"lam": 0})["test_acc"].to_numpy(float)
    for name, arm in plan["arms"].items():
        for v in arm["values"]:
            lams = arm["lam"] if isinstance(arm["lam"], list) else [None]
            for lam in lams:
                spec = {"arm": name, "value": v} | ({"lam": lam} if lam is not None else {})
                arm_acc = select(table, plan, spec)["test_acc"].to_numpy(float)
                # the penalty it stands beside: its own λ, or the cap's λ (the cap's value
                # is the branch norm of λ = 1e-4 or 1e-2: the plan's pairing)
                ref = lam if lam is not None else _paired_lam(plan, name, v)
                if ref is None:
                    continue
                acc_lam = select(table, plan, {"lam": ref})["test_acc"].to_numpy(float)
                rescue = acc_lam - acc0
                if arm["option"] == "branch_cap":
                    share, what = arm_acc - acc0, "the bound alone reproduces"
                else:
                    share, what = acc_lam - arm_acc, "needs a fixed B"
                est, low, high = _ratio_interval(share, rescue, m)
                out.append({"arm": arm_recipe(name, v), "lam": float(ref), "share": est,
                            "low": low, "high": high, "what": what,
                            "rescue_mean": float(rescue.mean())})
    return out


def _paired_lam(plan: dict, arm: str, value: float) -> float | None:
    """The λ a cap value is compared with in the plan's parts (cap 50 ↔ λ = 1e-2)."""
    for parts in plan["tables"].values():
        for p in parts:
            e = p["effect"]
            if (e["kind"] == "diff" and e["a"].get("arm") == arm
                    and float(e["a"].get("value", math.nan)) == float(value)
                    and "lam" in e["b"] and "method" not in e["b"] and e["b"]["lam"]):
                return float(e["b"]["lam"])
    return None


def dose_regression(table: pd.DataFrame) -> dict:
    """Across the dose: accuracy on standardised log ‖h_L‖ and deep cosine together, with
    a fixed effect per seed (OLS; descriptive: both move with λ and with each other)."""
    d = table[(table.arm == "dose") & (table.method == "dfa")].copy()
    cols = ["log10_h_L_norm", "deep_cosine"]
    for c in cols:
        d[c] = (d[c] - d[c].mean()) / d[c].std(ddof=1)
    seeds = pd.get_dummies(d.seed, prefix="seed", dtype=float)
    x = np.column_stack([d[cols].to_numpy(float), seeds.to_numpy(float)])
    coef, *_ = np.linalg.lstsq(x, d.test_acc.to_numpy(float), rcond=None)
    corr = float(np.corrcoef(d[cols[0]], d[cols[1]])[0, 1])
    return {"per_sd_log10_h_L_norm": float(coef[0]), "per_sd_deep_cosine": float(coef[1]),
            "r_norm_alignment": corr, "n_runs": int(len(d))}


def complete_tables(plan: dict, table: pd.DataFrame) -> dict[str, tuple[int, int]]:
    """Each table of the plan: (runs of the study present, runs its parts read). A table
    is judged only when every run its parts read is here (a study longer than a session
    is judged table by table, never on a part of its seeds)."""
    have = {(r.recipe, r.method, round(r.lam, 12), r.seed) for r in table.itertuples()}
    out = {}
    for name, parts in plan["tables"].items():
        need = set()
        for part in parts:
            e = part["effect"]
            if e["kind"] == "dose_correlation":
                need |= {("default", "dfa", round(float(lam), 12), s)
                         for lam in plan["dose"]["lam"] for s in plan["seeds"]}
            for side in ("a", "b"):
                if side in e:
                    need |= {(*_key(plan, e[side]), s) for s in plan["seeds"]}
        out[name] = (len(need & have), len(need))
    return out


def _key(plan: dict, spec: dict) -> tuple[str, str, float]:
    if "arm" in spec:
        arm = plan["arms"][spec["arm"]]
        method = ARM_RULES[arm["option"]][0]
        lam = spec.get("lam", arm["lam"])
        return arm_recipe(spec["arm"], spec["value"]), method, round(float(lam), 12)
    return "default", spec.get("method", "dfa"), round(float(spec["lam"]), 12)


def read_present(plan: dict) -> pd.DataFrame:
    """The plan's runs whose metrics (and null) are here, read and checked."""
    from pathlib import Path

    rows = []
    for run in runs(plan):
        if not Path(run.metrics()).exists() or (run.null() and not Path(run.null()).exists()):
            continue
        metrics = read_result(run.metrics(), "train")
        null = read_result(run.null(), "fresh_b_null") if run.null() else None
        rows.append(row(run, metrics, null))
    return pd.DataFrame(rows)


def findings(plan: dict, table: pd.DataFrame) -> dict:
    """What the page, the figure and the paper read: each table's status, the verdicts
    of the complete ones, and the mediation where its runs are all here."""
    status = complete_tables(plan, table)
    done = {k for k, (have, need) in status.items() if have == need}
    judged = judge(table, {**plan, "tables": {k: v for k, v in plan["tables"].items()
                                              if k in done}}) if done else []
    out = {"tables": {k: {"have": h, "need": n, "judged": k in done}
                      for k, (h, n) in status.items()},
           "verdicts": judged, "mediation": None, "regression": None}
    if "arms" in done:
        out["mediation"] = mediation(table, plan)
    if "dose" in done:
        out["regression"] = dose_regression(table)
    return out
