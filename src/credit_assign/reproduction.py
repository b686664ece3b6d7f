"""Our results beside the paper's published numbers: results/<dataset>/summary/reproduction.*

Both tables are computed from the same summary tables the figures read; the
paper's numbers come only from the reference file (config/paper_reference.yaml).
"""

from __future__ import annotations

import math
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import yaml

from credit_assign.results import SCHEMA_PATH
from credit_assign.runtime import atomic_write_text, describe_source

METRIC_NAMES = {
    "test_acc": "test accuracy",
    "h_L_norm_median": "median ‖h_L‖",
    "deep_cosine": "deep cosine",
    "cosine": "cosine",
    "trained_b_deep_cosine": "deep cosine, trained B",
    "fresh_b_deep_cosine_mean": "deep cosine, fresh-B null",
}


def load_reference(path: str | Path) -> dict:
    ref = yaml.safe_load(Path(path).read_text())
    schema = yaml.safe_load((SCHEMA_PATH.parent / "reference.schema.yaml").read_text())
    try:
        jsonschema.validate(ref, schema)
    except jsonschema.ValidationError as err:
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        raise ValueError(f"{path}: invalid reference file at {where}: {err.message}") from err
    return ref


def _ours(entry: dict, runs, layers, nulls) -> tuple[np.ndarray, str]:
    """Our values for one reference entry (one per seed, or per draw for the null)."""
    def pick(df):
        df = df[(df.method == entry["method"]) & np.isclose(df.lam, entry["lam"])]
        return df[df.seed == entry["seed"]] if "seed" in entry else df

    metric = entry["metric"]
    if metric in ("test_acc", "h_L_norm_median", "deep_cosine"):
        return pick(runs)[metric].to_numpy(float), "seeds"
    if metric == "cosine":
        final = pick(runs)[["seed", "final_epoch"]]
        df = pick(layers).merge(final, left_on=["seed", "epoch"], right_on=["seed", "final_epoch"])
        return df[df.layer == entry["layer"]].cosine.to_numpy(float), "seeds"
    feedback = "trained" if metric == "trained_b_deep_cosine" else "fresh"
    df = pick(nulls)
    return df[df.feedback == feedback].deep_cosine.to_numpy(float), (
        "seeds" if feedback == "trained" else "draws")


def _within(metric: str, ours: float, entry: dict, tolerances: dict):
    """(ours − paper, within tolerance?, the tolerance as text, the gap in units of the
    tolerance: |gap| ≤ 1 is within; log10 units for norms)."""
    tol = tolerances.get(metric, {})
    if math.isnan(ours):
        return None, None, "", math.nan
    if "range" in entry:
        lo, hi = entry["range"]
        diff = 0.0 if lo <= ours <= hi else (ours - hi if ours > hi else ours - lo)
        width = tol.get("abs", 0.0)
        gap = diff / width if width else math.nan
        return diff, abs(diff) <= width, f"±{width:g} of range", gap
    diff = ours - entry["value"]
    if "log10" in tol:
        if ours <= 0 or entry["value"] <= 0:
            return diff, False, f"×10^{tol['log10']:g}", math.nan
        gap = (math.log10(ours) - math.log10(entry["value"])) / tol["log10"]
        return diff, abs(gap) <= 1, f"×10^{tol['log10']:g}", gap
    if "abs" in tol:
        return diff, abs(diff) <= tol["abs"], f"±{tol['abs']:g}", diff / tol["abs"]
    return diff, None, "", math.nan


def compare(reference: dict, runs, layers, nulls) -> pd.DataFrame:
    rows = []
    for entry in reference["entries"]:
        values, over = _ours(entry, runs, layers, nulls)
        values = values[~np.isnan(values)]
        mean = float(values.mean()) if len(values) else math.nan
        std = float(values.std(ddof=1)) if len(values) > 1 else math.nan
        diff, ok, tol, gap = _within(entry["metric"], mean, entry, reference["tolerances"])
        rows.append({
            "method": entry["method"], "lam": entry["lam"], "metric": entry["metric"],
            "layer": entry.get("layer"), "seed": entry.get("seed"),
            "paper": entry.get("value"), "paper_std": entry.get("std"),
            "paper_range": entry.get("range"), "ours_mean": mean, "ours_std": std,
            "ours_n": len(values), "ours_over": over, "difference": diff, "tolerance": tol,
            "gap": gap, "within_tolerance": ok, "source": entry["source"],
        })
    return pd.DataFrame(rows)


def overview(runs, layers, nulls) -> pd.DataFrame:
    """Every (method, λ) of our run: final accuracy, ‖h_L‖, deep and per-layer cosines, null."""
    final = layers.merge(runs[["method", "lam", "seed", "final_epoch"]],
                         left_on=["method", "lam", "seed", "epoch"],
                         right_on=["method", "lam", "seed", "final_epoch"])
    rows = []
    for (method, lam), group in runs.groupby(["method", "lam"]):
        row = {"method": method, "lam": lam, "seeds": len(group), "epochs": group.epochs.max()}
        for col in ("test_acc", "h_L_norm_median", "deep_cosine"):
            row[col] = group[col].mean()
            row[f"{col}_std"] = group[col].std(ddof=1)
        per_layer = final[(final.method == method) & (final.lam == lam)]
        for layer, cos in per_layer.groupby("layer").cosine:
            row[f"cosine_l{layer}"] = cos.mean()
        fresh = nulls[(nulls.method == method) & (nulls.lam == lam) & (nulls.feedback == "fresh")]
        row["fresh_b_mean"] = fresh.deep_cosine.mean() if len(fresh) else math.nan
        row["fresh_b_std"] = fresh.deep_cosine.std(ddof=1) if len(fresh) > 1 else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def _fmt(x, std=None, digits=3):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    text = f"{x:.2e}" if abs(x) >= 1e3 or (0 < abs(x) < 1e-3) else f"{x:+.{digits}f}"
    if std is not None and not (isinstance(std, float) and math.isnan(std)):
        text += f" ± {std:.2e}" if abs(x) >= 1e3 else f" ± {std:.{digits}f}"
    return text


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def markdown(comparison: pd.DataFrame, summary: pd.DataFrame, context: str) -> str:
    rows = []
    for r in comparison.itertuples():
        run = f"{r.method}, λ={r.lam:g}" + (f", seed {int(r.seed)}" if pd.notna(r.seed) else "")
        metric = METRIC_NAMES[r.metric] + (f" l{int(r.layer)}" if pd.notna(r.layer) else "")
        paper = (f"[{r.paper_range[0]:+.2f}, {r.paper_range[1]:+.2f}]"
                 if isinstance(r.paper_range, list) else
                 _fmt(r.paper, r.paper_std if pd.notna(r.paper_std) else None))
        ours = "not run" if r.ours_n == 0 else \
            f"{_fmt(r.ours_mean, r.ours_std)} (n={r.ours_n} {r.ours_over})"
        verdict = {True: "yes", False: "**no**", None: "—"}[r.within_tolerance]
        rows.append([run, metric, paper, ours, _fmt(r.difference), r.tolerance or "—", verdict])
    table = _md_table(["run", "metric", "paper", "ours (mean ± std)", "ours − paper",
                       "tolerance", "within"], rows)
    layer_cols = sorted((c for c in summary.columns if c.startswith("cosine_l")),
                        key=lambda c: int(c[8:]))
    rows2 = [[s.method, f"{s.lam:g}", str(s.seeds), str(s.epochs),
              _fmt(s.test_acc, s.test_acc_std), _fmt(s.h_L_norm_median),
              _fmt(s.deep_cosine, s.deep_cosine_std),
              *[_fmt(getattr(s, c), digits=2) for c in layer_cols],
              _fmt(s.fresh_b_mean, s.fresh_b_std)] for s in summary.itertuples()]
    table2 = _md_table(["method", "λ", "seeds", "epochs", "test accuracy", "median ‖h_L‖",
                        "deep cosine", *[f"cos l{c[8:]}" for c in layer_cols],
                        "fresh-B null"], rows2)
    n_ok = int((comparison.within_tolerance == True).sum())  # noqa: E712
    n_cmp = int(comparison.within_tolerance.notna().sum())
    return (f"# Reproduction of the paper's CIFAR-10 numbers\n\n{context}\n\n"
            f"Within tolerance: **{n_ok} of {n_cmp}** compared numbers "
            f"({len(comparison) - n_cmp} not run here).\n\n## Paper vs ours\n\n{table}\n\n"
            f"## Every run (final epoch, mean ± std over seeds)\n\n{table2}\n")


def write(reference_path, runs_csv, layers_csv, nulls_csv, out_csv, out_md,
          context: str = "") -> pd.DataFrame:
    reference = load_reference(reference_path)
    runs, layers, nulls = (pd.read_csv(p) for p in (runs_csv, layers_csv, nulls_csv))
    comparison = compare(reference, runs, layers, nulls)
    atomic_write_text(out_csv, comparison.to_csv(index=False))
    atomic_write_text(out_md, markdown(comparison, overview(runs, layers, nulls), context))
    return comparison


def context(config: dict) -> str:
    """The header of reproduction.md: what was run, on what data, and what to expect."""
    t, m = config["training"], config["model"]
    source = config["data"]["cifar10"]["source"] if config["dataset"] == "cifar10" else "embedded"
    local = source not in ("embedded", "download") and Path(source).expanduser().exists()
    described = describe_source(source) if local else source
    lines = [
        f"Generated by the pipeline (rule `reproduction`) from "
        f"`results/{config['dataset']}/summary/*.csv` — the tables fig4 is drawn from. "
        f"Paper numbers: `{config['reproduction']['reference']}`.",
        "",
        f"Setup: {config['dataset']}, d={m['width']}, L={m['depth']}, {t['epochs']} epochs, "
        f"batch {t['batch_size']}, AdamW lr {t['lr']:g} wd {t['weight_decay']:g}, cosine "
        f"schedule per {t['schedule_step']}, augmentation {t['augmentation']}, seeds "
        f"{config['sweep']['seeds']}, diagnostics on {config['diagnostics']['n_samples']} "
        f"class-stratified test images, {config['fresh_b_null']['draws']} fresh-B draws. "
        f"Data source: `{described}`.",
    ]
    variant = config.get("variant")
    if variant:
        lines += ["", f"**Recipe variant `{variant['name']}`** (methods "
                  f"{', '.join(variant['methods'])}): {variant.get('description', '')} "
                  f"Overrides: `{variant['overrides']}`."]
    if source.endswith(".tar") or Path(source).is_dir():
        lines += ["", "**Data caveat:** this run used CIFAR-10 re-encoded as JPEG (quality ≈ 75) "
                  "in an image-folder layout, not the official archive: expect small shifts in "
                  "accuracy (compression artefacts) and a different diagnostic subset."]
    return "\n".join(lines)


def gap_table(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per paper number, one column per recipe (``default`` and each variant):
    ours − paper in units of the tolerance (|gap| ≤ 1: within; NaN: not run or no
    tolerance). ``tables``: name → that recipe's reproduction.csv."""
    def label(r) -> str:
        run = f"{r.method}, λ={r.lam:g}" + (f", seed {int(r.seed)}" if pd.notna(r.seed) else "")
        metric = METRIC_NAMES.get(r.metric, r.metric) + (
            f" l{int(r.layer)}" if pd.notna(r.layer) else "")
        return f"{run}: {metric}"

    columns = {}
    for name, table in tables.items():
        columns[name] = pd.Series([r.gap for r in table.itertuples()],
                                  index=[label(r) for r in table.itertuples()], dtype=float)
    return pd.DataFrame(columns)


def write_gap_map(tables: dict, out_csv, outputs) -> pd.DataFrame:
    """variants_gap.csv and the heatmap fig_variants.{pdf,png,svg}."""
    from credit_assign.figures import variants

    gaps = gap_table({name: pd.read_csv(path) for name, path in tables.items()})
    atomic_write_text(out_csv, gaps.to_csv(index_label="paper number", float_format="%.4g"))
    variants.make(gaps, outputs)
    return gaps
