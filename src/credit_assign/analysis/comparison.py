"""Our results beside the paper's published numbers:
results/<dataset>/<recipe>/summary/reproduction.*

Both tables are computed from the same summary tables the figures read; the
paper's numbers come only from the reference file (config/paper_reference.yaml).
The page's words are studies/penalty_rescue/reproduction.md.j2 (its header:
reproduction_context.md.j2); here are the numbers they are written from.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import yaml

from credit_assign.analysis.aggregate import same_lam, select_runs
from credit_assign.analysis.cells import field
from credit_assign.infra.paths import DEFAULT_RECIPE
from credit_assign.infra.results import schema
from credit_assign.planning.configfiles import check_yaml


def load_reference(path: str | Path) -> dict:
    text = Path(path).read_text()
    check_yaml(text, str(path))  # a duplicate key, a seed spelled 042 (octal)
    ref = yaml.safe_load(text)
    ref_schema = schema("reference")
    try:
        jsonschema.validate(ref, ref_schema)
    except jsonschema.ValidationError as err:
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        raise ValueError(f"{path}: invalid reference file at {where}: {err.message}") from err
    return ref


def _ours(entry: dict, runs, layers, nulls) -> tuple[np.ndarray, str, np.ndarray]:
    """Our values for one reference entry (one per seed, or per draw for the null), what
    they are over, and each value's seed."""
    def pick(df):
        return select_runs(df, entry["method"], entry["lam"], entry.get("seed"))

    metric = entry["metric"]
    if metric in ("test_acc", "h_L_norm_median", "deep_cosine"):
        df = pick(runs)
        return df[metric].to_numpy(float), "seeds", df.seed.to_numpy()
    if metric == "cosine":
        final = pick(runs)[["seed", "final_epoch"]]
        df = pick(layers).merge(final, left_on=["seed", "epoch"], right_on=["seed", "final_epoch"])
        df = df[df.layer == entry["layer"]]
        return df.cosine.to_numpy(float), "seeds", df.seed.to_numpy()
    feedback = "trained" if metric == "trained_b_deep_cosine" else "fresh"
    df = pick(nulls)
    df = df[df.feedback == feedback]
    return df.deep_cosine.to_numpy(float), ("seeds" if feedback == "trained" else "draws"), \
        df.seed.to_numpy()


def _within(metric: str, ours: float, entry: dict, tolerances: dict):
    """(ours − paper, within tolerance?, the tolerance as data — (kind, width): ``abs``,
    ``range_abs`` (± width around the paper's range) or ``log10`` (a factor 10^width),
    ("", NaN) without one — and the gap in units of the tolerance: |gap| ≤ 1 is within;
    log10 units for norms). The pages write the tolerance (render.tolerance)."""
    tol = tolerances.get(metric, {})
    if math.isnan(ours):
        return None, None, ("", math.nan), math.nan
    if "range" in entry:
        lo, hi = entry["range"]
        diff = 0.0 if lo <= ours <= hi else (ours - hi if ours > hi else ours - lo)
        width = tol.get("abs", 0.0)
        gap = diff / width if width else math.nan
        return diff, abs(diff) <= width, ("range_abs", width), gap
    diff = ours - entry["value"]
    if "log10" in tol:
        if ours <= 0 or entry["value"] <= 0:
            return diff, False, ("log10", tol["log10"]), math.nan
        gap = (math.log10(ours) - math.log10(entry["value"])) / tol["log10"]
        return diff, abs(gap) <= 1, ("log10", tol["log10"]), gap
    if "abs" in tol:
        return diff, abs(diff) <= tol["abs"], ("abs", tol["abs"]), diff / tol["abs"]
    return diff, None, ("", math.nan), math.nan


def _spread_in_tolerances(metric: str, values: np.ndarray, entry: dict,
                          tolerances: dict) -> float:
    """Our seed-to-seed (or draw-to-draw) sd in units of the number's tolerance: the sd
    of log10 values over the log10 tolerance for norms, sd / abs otherwise. Above 1, the
    tolerance is tighter than our own spread. NaN with fewer than two values."""
    tol = tolerances.get(metric, {})
    if len(values) < 2:
        return math.nan
    if "log10" in tol and "range" not in entry:
        if (values <= 0).any() or not tol["log10"]:
            return math.nan
        return float(np.log10(values).std(ddof=1)) / tol["log10"]
    if tol.get("abs"):
        return float(values.std(ddof=1)) / tol["abs"]
    return math.nan


def _seed_gaps(entry: dict, values: np.ndarray, seeds: np.ndarray | None,
               tolerances: dict) -> tuple[str, str]:
    """The gap on each seed alone, and on every seed but that one (JSON: seed → gap):
    what the hold-one-seed-out check of the ranking (``holdout``) needs. Empty without
    seeds or with one seed."""
    if seeds is None or len(set(seeds.tolist())) < 2:
        return "{}", "{}"
    alone, without = {}, {}
    for s in sorted(set(seeds.tolist())):
        for out, mask in ((alone, seeds == s), (without, seeds != s)):
            v = values[mask]
            gap = _within(entry["metric"], float(v.mean()), entry, tolerances)[3] \
                if len(v) else math.nan
            out[str(int(s))] = None if math.isnan(gap) else round(gap, 6)
    return json.dumps(alone), json.dumps(without)


def _row(entry: dict, values: np.ndarray, over: str, tolerances: dict,
         seeds: np.ndarray | None = None) -> dict:
    """One compared paper number: our values (per seed or draw) against the entry.
    ``gap`` is in units of the tolerance; ``gap_sd`` in units of our own sd (ddof = 1,
    NaN with one value; for norms the log10 difference over the sd of our log10
    values); ``sd_over_tolerance`` > 1 (``tolerance_below_sd``): the tolerance is
    tighter than our seed-to-seed spread."""
    keep = ~np.isnan(values)
    values = values[keep]
    seeds = seeds[keep] if seeds is not None else None
    mean = float(values.mean()) if len(values) else math.nan
    std = float(values.std(ddof=1)) if len(values) > 1 else math.nan
    diff, ok, tol, gap = _within(entry["metric"], mean, entry, tolerances)
    spread = _spread_in_tolerances(entry["metric"], values, entry, tolerances)
    # the gap over our sd, on the gap's own scale: log10 for norms (log-difference over
    # the sd of log10 values), linear otherwise (difference over sd) — gap / spread
    gap_sd = gap / spread if spread > 0 and not math.isnan(gap) else math.nan
    alone, without = _seed_gaps(entry, values, seeds, tolerances)
    return {
        "method": entry["method"], "lam": entry["lam"], "metric": entry["metric"],
        "layer": entry.get("layer"), "seed": entry.get("seed"),
        "paper": entry.get("value"), "paper_std": entry.get("std"),
        "paper_range": entry.get("range"), "ours_mean": mean, "ours_std": std,
        "ours_n": len(values), "ours_over": over, "difference": diff,
        "tolerance_kind": tol[0], "tolerance": tol[1],
        "gap": gap, "within_tolerance": ok, "gap_sd": gap_sd,
        "sd_over_tolerance": spread, "tolerance_below_sd": bool(spread > 1),
        "verified": bool(entry.get("verified", True)), "note": entry.get("note", ""),
        "gap_seed": alone, "gap_without_seed": without, "source": entry["source"],
    }


def compare(reference: dict, runs, layers, nulls) -> pd.DataFrame:
    rows = []
    for entry in reference["entries"]:
        values, over, seeds = _ours(entry, runs, layers, nulls)
        rows.append(_row(entry, values, over, reference["tolerances"], seeds))
    return pd.DataFrame(rows)


# The gap map's columns. A recipe (``default`` or a variant's name) is a column of the
# numbers its own runs report; ``<recipe>/<measurement>`` is a column of the same recipe's
# saved models measured another way (credit_assign.science.measurement, no retraining), e.g.
# ``dfa_no_aug/eps_cos_b128``: dfa_no_aug's models, cosines as torch's cosine_similarity
# at batch 128.
MEASUREMENT_SEP = "/"
# the summary metrics a measurement replaces, and its measurements.csv column
MEASURED = {"h_L_norm_median": "h_L_norm", "deep_cosine": "deep_cosine"}


def _measured_values(entry: dict, m: pd.DataFrame, measured: set[str],
                     runs: dict) -> tuple[np.ndarray, np.ndarray] | None:
    """One measurement's values (per seed) for a reference entry, and their seeds; None
    where the measurement does not measure that number (it is then the recipe's own).
    ``measured``: the columns of ``m`` that hold a value; ``runs``: its rows by (method,
    λ), filled as they are selected."""
    if "seed" in entry:
        return None
    if entry["metric"] == "cosine":
        column = f"cosine_l{entry['layer']}"
    else:
        column = MEASURED.get(entry["metric"])
    if column not in measured:
        return None
    key = (entry["method"], float(entry["lam"]))
    if key not in runs:
        runs[key] = select_runs(m, *key)
    df = runs[key]
    return pd.to_numeric(df[column]).to_numpy(float), df.seed.to_numpy()


def measured_comparisons(reference: dict, measurements: pd.DataFrame,
                         recipe: str = DEFAULT_RECIPE) -> dict[str, pd.DataFrame]:
    """One recipe's models measured the other ways (its ``measurements.csv``,
    credit_assign.science.measurement): a comparison per measurement besides ``stratified``
    (which is what the recipe's own table reports), named ``<recipe>/<measurement>``. Only the
    numbers the measurement measures — ‖h_L‖ where it measures it, the deep and per-layer
    cosines — are remeasured (``remeasured``: True); every other row is "not run" here
    (ours_n = 0) and so inherited from the recipe's own table in the gap map."""
    out = {}
    for name in dict.fromkeys(measurements.measurement):
        if name == "stratified":
            continue
        m = measurements[measurements.measurement == name]
        measured, runs = set(m.columns[m.notna().any()]), {}
        rows = []
        for entry in reference["entries"]:
            found = _measured_values(entry, m, measured, runs)
            values, seeds = found if found is not None else (np.array([]), None)
            row = _row(entry, values, "seeds", reference["tolerances"], seeds)
            rows.append({**row, "remeasured": found is not None})
        out[f"{recipe}{MEASUREMENT_SEP}{name}"] = pd.DataFrame(rows)
    return out


# A paper number's keys, as every table of the comparison holds them (reproduction.csv,
# variants_gap.csv): seed is set for one seed's number, layer for one layer's. A row is
# labelled only when drawn or written (render.run_label, metric_label, paper_text).
KEY = ("method", "lam", "seed", "metric", "layer")


def _int_or_none(x) -> int | None:
    return None if x is None else int(x)


def number_key(r) -> dict:
    """A row's keys as plain data (JSON-ready: seed and layer an int or None)."""
    def get(name):
        return field(r, name)

    return {"method": str(get("method")), "lam": float(get("lam")),
            "seed": _int_or_none(get("seed")), "metric": str(get("metric")),
            "layer": _int_or_none(get("layer"))}


def paper_number(r) -> dict:
    """A row's published number as plain data: ``paper`` (± ``paper_std``) or
    ``paper_range`` ([low, high]; text in a CSV read back), the others None."""
    rng = field(r, "paper_range")
    if isinstance(rng, str):
        rng = yaml.safe_load(rng)
    return {"paper": _float_or_none(field(r, "paper")),
            "paper_std": _float_or_none(field(r, "paper_std")),
            "paper_range": [float(x) for x in rng] if rng is not None else None}


def _float_or_none(x) -> float | None:
    return None if x is None else float(x)


def same_number(frame: pd.DataFrame, key: dict) -> pd.Series:
    """The rows of ``frame`` that are the paper number ``key`` (number_key's fields; a
    seed or layer left out or None: a number that is not one seed's, one layer's)."""
    mask = pd.Series(True, index=frame.index)
    for name in KEY:
        want = key.get(name)
        column = frame[name] if name in frame else pd.Series(None, index=frame.index,
                                                             dtype=object)
        if want is None:
            mask &= column.isna()
        elif name in ("method", "metric"):
            mask &= column == want
        else:
            mask &= same_lam(pd.to_numeric(column), want) if name == "lam" else \
                (pd.to_numeric(column).astype(float).to_numpy() == float(want))
    return mask
