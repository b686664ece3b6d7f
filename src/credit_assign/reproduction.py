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

from credit_assign import tables as table_io
from credit_assign.aggregate import select_runs
from credit_assign.results import schema
from credit_assign.runtime import atomic_write_text

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
    ref_schema = schema("reference")
    try:
        jsonschema.validate(ref, ref_schema)
    except jsonschema.ValidationError as err:
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        raise ValueError(f"{path}: invalid reference file at {where}: {err.message}") from err
    return ref


def _ours(entry: dict, runs, layers, nulls) -> tuple[np.ndarray, str]:
    """Our values for one reference entry (one per seed, or per draw for the null)."""
    def pick(df):
        return select_runs(df, entry["method"], entry["lam"], entry.get("seed"))

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


def _row(entry: dict, values: np.ndarray, over: str, tolerances: dict) -> dict:
    """One compared paper number: our values (per seed or draw) against the entry."""
    values = values[~np.isnan(values)]
    mean = float(values.mean()) if len(values) else math.nan
    std = float(values.std(ddof=1)) if len(values) > 1 else math.nan
    diff, ok, tol, gap = _within(entry["metric"], mean, entry, tolerances)
    return {
        "method": entry["method"], "lam": entry["lam"], "metric": entry["metric"],
        "layer": entry.get("layer"), "seed": entry.get("seed"),
        "paper": entry.get("value"), "paper_std": entry.get("std"),
        "paper_range": entry.get("range"), "ours_mean": mean, "ours_std": std,
        "ours_n": len(values), "ours_over": over, "difference": diff, "tolerance": tol,
        "gap": gap, "within_tolerance": ok, "source": entry["source"],
    }


def compare(reference: dict, runs, layers, nulls) -> pd.DataFrame:
    rows = []
    for entry in reference["entries"]:
        values, over = _ours(entry, runs, layers, nulls)
        rows.append(_row(entry, values, over, reference["tolerances"]))
    return pd.DataFrame(rows)


# The gap map's columns. A recipe (``default`` or a variant's name) is a column of the
# numbers its own runs report; ``<recipe>/<measurement>`` is a column of the same recipe's
# saved models measured another way (credit_assign.measure, no retraining), e.g.
# ``e_sum/eps_cos_b128``: e_sum's models, cosines as torch's cosine_similarity at batch 128.
MEASUREMENT_SEP = "/"
# the summary metrics a measurement replaces, and its measurements.csv column
MEASURED = {"h_L_norm_median": "h_L_norm", "deep_cosine": "deep_cosine"}


def measurement_description(name: str) -> str:
    """What a measurement variant of credit_assign.measure changes, in a sentence."""
    if name == "mixed_n":
        return ("‖h_L‖ (median) and the cosines on a seeded class-mixed draw of "
                "diagnostics.n_samples test images instead of the class-stratified set")
    if name == "one_batch":
        return ("‖h_L‖ as the Frobenius norm of the first measurements.batch images of the "
                "class-mixed draw, and the cosines on them")
    if name == "flat":
        return "the cosines as one cosine of the batch-flattened (N, d) matrices"
    for kind, how in (("eps_cos", "torch's cosine_similarity (eps 1e-8 clamping each norm, "
                                  "float32)"),
                      ("eps_den", "u·v / (‖u‖‖v‖ + 1e-8) in float32")):
        if name.startswith(f"{kind}_b"):
            return (f"the cosines as {how}, on gradients of a batch-mean CE over "
                    f"{name.removeprefix(f'{kind}_b')} images")
    return ""


def _measured_values(entry: dict, m: pd.DataFrame) -> np.ndarray | None:
    """One measurement's values (per seed) for a reference entry; None where the
    measurement does not measure that number (it is then the recipe's own)."""
    if "seed" in entry:
        return None
    if entry["metric"] == "cosine":
        column = f"cosine_l{entry['layer']}"
    else:
        column = MEASURED.get(entry["metric"])
    if column is None or column not in m or m[column].isna().all():
        return None
    df = m[(m.method == entry["method"]) & np.isclose(m.lam, entry["lam"])]
    return pd.to_numeric(df[column]).to_numpy(float)


def measured_comparisons(reference: dict, measurements: pd.DataFrame,
                         recipe: str = "default") -> dict[str, pd.DataFrame]:
    """One recipe's models measured the other ways (its ``measurements.csv``,
    credit_assign.measure): a comparison per measurement besides ``stratified`` (which is
    what the recipe's own table reports), named ``<recipe>/<measurement>``. Only the
    numbers the measurement measures — ‖h_L‖ where it measures it, the deep and per-layer
    cosines — are remeasured (``remeasured``: True); every other row is "not run" here
    (ours_n = 0) and so inherited from the recipe's own table in the gap map."""
    out = {}
    for name in dict.fromkeys(measurements.measurement):
        if name == "stratified":
            continue
        m = measurements[measurements.measurement == name]
        rows = []
        for entry in reference["entries"]:
            values = _measured_values(entry, m)
            row = _row(entry, np.array([]) if values is None else values, "seeds",
                       reference["tolerances"])
            rows.append({**row, "remeasured": values is not None})
        out[f"{recipe}{MEASUREMENT_SEP}{name}"] = pd.DataFrame(rows)
    return out


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


def _paper_text(r) -> str:
    """The published number of a comparison row (a range or a value ± std); the row may
    come from a reproduction.csv read back, where the range is text."""
    rng = r.paper_range
    if isinstance(rng, str):
        rng = yaml.safe_load(rng)
    if isinstance(rng, list):
        return f"[{rng[0]:+.2f}, {rng[1]:+.2f}]"
    return _fmt(r.paper, r.paper_std if pd.notna(r.paper_std) else None)


def _label(r) -> tuple[str, str]:
    """(run, metric) of a comparison row as the tables print them."""
    run = f"{r.method}, λ={r.lam:g}" + (f", seed {int(r.seed)}" if pd.notna(r.seed) else "")
    metric = METRIC_NAMES.get(r.metric, r.metric) + (
        f" l{int(r.layer)}" if pd.notna(r.layer) else "")
    return run, metric


def md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def markdown(comparison: pd.DataFrame, summary: pd.DataFrame, context: str) -> str:
    rows = []
    for r in comparison.itertuples():
        run, metric = _label(r)
        paper = _paper_text(r)
        ours = "not run" if r.ours_n == 0 else \
            f"{_fmt(r.ours_mean, r.ours_std)} (n={r.ours_n} {r.ours_over})"
        verdict = {True: "yes", False: "**no**", None: "—"}[r.within_tolerance]
        rows.append([run, metric, paper, ours, _fmt(r.difference), r.tolerance or "—", verdict])
    table = md_table(["run", "metric", "paper", "ours (mean ± std)", "ours − paper",
                       "tolerance", "within"], rows)
    layer_cols = sorted((c for c in summary.columns if c.startswith("cosine_l")),
                        key=lambda c: int(c[8:]))
    rows2 = [[s.method, f"{s.lam:g}", str(s.seeds), str(s.epochs),
              _fmt(s.test_acc, s.test_acc_std), _fmt(s.h_L_norm_median),
              _fmt(s.deep_cosine, s.deep_cosine_std),
              *[_fmt(getattr(s, c), digits=2) for c in layer_cols],
              _fmt(s.fresh_b_mean, s.fresh_b_std)] for s in summary.itertuples()]
    table2 = md_table(["method", "λ", "seeds", "epochs", "test accuracy", "median ‖h_L‖",
                        "deep cosine", *[f"cos l{c[8:]}" for c in layer_cols],
                        "fresh-B null"], rows2)
    n_ok = int((comparison.within_tolerance == True).sum())  # noqa: E712
    n_cmp = int(comparison.within_tolerance.notna().sum())
    return (f"# Reproduction of the paper's CIFAR-10 numbers\n\n{context}\n\n"
            f"Within tolerance: **{n_ok} of {n_cmp}** compared numbers "
            f"({len(comparison) - n_cmp} not run here).\n\n## Paper vs ours\n\n{table}\n\n"
            f"## Every run (final epoch, mean ± std over seeds)\n\n{table2}\n")


def write(reference_path, runs_csv, layers_csv, nulls_csv, out_csv, out_md,
          context: str = "", expect: dict | None = None) -> pd.DataFrame:
    """reproduction.{csv,md} from the summary tables (checked: ``expect`` holds the runs
    the config asks for, ``runs`` and the DFA ``nulls``)."""
    reference = load_reference(reference_path)
    expect = expect or {}
    runs = table_io.read(runs_csv, "runs", expect.get("runs"))
    layers = table_io.read(layers_csv, "layers", expect.get("runs"))
    nulls = table_io.read(nulls_csv, "nulls", expect.get("nulls"))
    comparison = compare(reference, runs, layers, nulls)
    table_io.write(comparison, out_csv, "reproduction",
                 [reference_path, runs_csv, layers_csv, nulls_csv])
    atomic_write_text(out_md, markdown(comparison, overview(runs, layers, nulls), context))
    return comparison


def context(config: dict, info: dict) -> str:
    """The header of reproduction.md: what was run, on what data (the data cache's
    manifest ``info``: the source by file name and sha256, never a machine's path), and
    what to expect."""
    t, m = config["training"], config["model"]
    step = {"batch": "per batch", "epoch_slip": "stepped per epoch (period in batches)"}
    schedule = ("constant lr" if t.get("schedule") == "constant" else
                f"cosine schedule {step.get(t.get('schedule_step', 'batch'), '')}")
    lines = [
        f"Generated by the pipeline (rule `reproduction`) from "
        f"`results/{config['dataset']}/summary/*.csv` — the tables fig4 is drawn from. "
        f"Paper numbers: `{config['reproduction']['reference']}`.",
        "",
        f"Setup: {config['dataset']}, d={m['width']}, L={m['depth']}, {t['epochs']} epochs"
        + "".join(f" ({k} {v['epochs']})" for k, v in t.get("per_method", {}).items()
                  if "epochs" in v)
        + f", batch {t['batch_size']}, AdamW lr {t['lr']:g} wd {t['weight_decay']:g}, "
        f"{schedule}, augmentation {t['augmentation']}, seeds "
        f"{config['sweep']['seeds']}, diagnostics on {config['diagnostics']['n_samples']} "
        f"class-stratified test images, {config['fresh_b_null']['draws']} fresh-B draws. "
        f"Data: `{info['source']}`, {info['n_train']} training and {info['n_test']} test "
        f"images.",
    ]
    variant = config.get("variant")
    if variant:
        lines += ["", f"**Recipe variant `{variant['name']}`** (methods "
                  f"{', '.join(variant['methods'])}): {variant.get('description', '')} "
                  f"Overrides: `{variant['overrides']}`."]
    if info["name"] == "cifar10" and str(info.get("order", "")).startswith("image-folder"):
        lines += ["", "**Data caveat:** this run read CIFAR-10 from an image folder (e.g. "
                  "a JPEG re-encoding), not the official archive: expect small shifts in "
                  "accuracy (compression artefacts) and a different diagnostic subset."]
    return "\n".join(lines)


def split_recipe(name: str) -> tuple[str, str]:
    """``e_sum/eps_cos_b128`` → (e_sum, eps_cos_b128); a recipe's own column → (name,
    "reported")."""
    base, _, measurement = name.partition(MEASUREMENT_SEP)
    return base, measurement or "reported"


def gap_table(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The gap map as a tidy table: one row per (paper number, column), the column's value
    and ours − paper in units of the tolerance (|gap| ≤ 1: within; NaN: no tolerance).
    ``tables``: column name → its comparison, ``default`` first; a column is a recipe
    (its reproduction table) or ``<recipe>/<measurement>`` (measured_comparisons).

    A number a column does not measure itself is *inherited*, so every column is judged
    on the whole table: a recipe variant's number for a method it leaves alone is the
    default's; a measurement column's number the measurement does not remeasure (test
    accuracy, the null) is its recipe's own; and a number it remeasures on a method the
    recipe did not rerun is the default's models measured the same way
    (``default/<measurement>``). ``inherited_from`` names the source column."""
    default = tables["default"]
    labels = [_label(r) for r in default.itertuples()]
    rows_of = {}
    for name, table in tables.items():
        if [_label(r) for r in table.itertuples()] != labels:
            raise ValueError(f"recipe {name!r}: its reproduction table compares other paper "
                             f"numbers than the default's; rebuild both from one reference")
        rows_of[name] = list(table.itertuples())

    def source(name: str, i: int) -> str:
        r = rows_of[name][i]
        if r.ours_n > 0 or name == "default":
            return name
        base, measurement = split_recipe(name)
        if measurement == "reported":
            return source("default", i) if rows_of["default"][i].ours_n > 0 else name
        if getattr(r, "remeasured", False):
            same = f"default{MEASUREMENT_SEP}{measurement}"
            if name != same and same in rows_of and rows_of[same][i].ours_n > 0:
                return same
            return name
        return source(base, i) if base in rows_of else source("default", i)

    rows = []
    for name in tables:
        base, measurement = split_recipe(name)
        for i, (run, metric) in enumerate(labels):
            r = rows_of[name][i]
            src = rows_of[source(name, i)][i]
            inherited = source(name, i) != name
            rows.append({"run": run, "metric": metric, "paper": _paper_text(r),
                         "recipe": name, "base_recipe": base, "measurement": measurement,
                         "remeasured": bool(getattr(r, "remeasured", True)),
                         "ours_mean": src.ours_mean, "ours_std": src.ours_std,
                         "ours_n": src.ours_n, "gap": src.gap, "inherited": inherited,
                         "inherited_from": source(name, i) if inherited else ""})
    out = pd.DataFrame(rows)
    out["within"] = out.gap.abs() <= 1
    return out


def gap_grid(gaps: pd.DataFrame, column: str = "gap") -> pd.DataFrame:
    """The gap map laid out for reading: columns are the recipes; rows are the paper
    numbers as each recipe reports them (``reported``), then one labelled row set per
    measurement holding only the numbers that measurement remeasures — a cell of the row
    set ``[eps_cos_b128]`` under ``e_sum`` is the column ``e_sum/eps_cos_b128``.
    Index: (measurement, run, metric); a missing combination is NaN."""
    recipes = list(dict.fromkeys(gaps.base_recipe))
    measurements = list(dict.fromkeys(gaps.measurement))
    keep = (gaps.measurement == "reported") | gaps.remeasured.astype(bool)
    g = gaps[keep]
    order = list(dict.fromkeys(zip(g.measurement, g.run, g.metric)))
    order.sort(key=lambda k: measurements.index(k[0]))  # stable: paper order within a set
    wide = g.pivot_table(index=["measurement", "run", "metric"], columns="base_recipe",
                         values=column, aggfunc="first", dropna=False)
    return wide.reindex(index=pd.MultiIndex.from_tuples(order), columns=recipes)


def ranking(gaps: pd.DataFrame) -> pd.DataFrame:
    """Recipes ordered by how many paper numbers fall within tolerance (then by the sum
    of |gap| clipped at 5, smaller first): within, compared, rerun, clipped_gap_sum."""
    g = gaps.assign(clipped=gaps.gap.abs().clip(upper=5), counted=gaps.gap.notna(),
                    rerun=gaps.gap.notna() & ~gaps.inherited)
    out = g.groupby("recipe", sort=False).agg(
        within=("within", "sum"), compared=("counted", "sum"), rerun=("rerun", "sum"),
        clipped_gap_sum=("clipped", "sum")).reset_index()
    return out.sort_values(["within", "clipped_gap_sum"], ascending=[False, True],
                           kind="stable").reset_index(drop=True)


def _gap_text(gap: float, inherited: bool = False) -> str:
    text = "—" if pd.isna(gap) else f"{gap:+.1f}" + (" ✓" if abs(gap) <= 1 else "")
    return f"({text})" if inherited and text != "—" else text


def variants_markdown(gaps: pd.DataFrame, rank: pd.DataFrame, about: dict[str, dict]) -> str:
    """The variant study as markdown: the ranking, the default recipe beside the best
    variant, and the whole gap map. ``about``: recipe → {description, methods, seeds}."""
    variants = rank[rank.recipe != "default"]
    if variants.empty:
        return ""
    best = variants.recipe.iloc[0]
    rows = []
    for r in rank.itertuples():
        a = about.get(r.recipe, {})
        rows.append([f"`{r.recipe}`" + (" **(best)**" if r.recipe == best else ""),
                     a.get("description", ""), ", ".join(a.get("methods", [])) or "—",
                     ", ".join(str(s) for s in a.get("seeds", [])) or "—",
                     f"{r.within} of {r.compared}", str(r.rerun), f"{r.clipped_gap_sum:.1f}"])
    table = md_table(["recipe", "what it changes", "methods rerun", "seeds",
                       "within tolerance", "numbers it reruns", "Σ ∣gap∣ (clipped at 5)"], rows)
    d = gaps[gaps.recipe == "default"].reset_index(drop=True)
    b = gaps[gaps.recipe == best].reset_index(drop=True)
    rows = []
    for x, y in zip(d.itertuples(), b.itertuples()):
        def ours(z):
            return "not run" if z.ours_n == 0 else f"{_fmt(z.ours_mean, z.ours_std)} (n={z.ours_n})"
        rows.append([x.run, x.metric, x.paper, ours(x), _gap_text(x.gap),
                     ours(y) + (" (inherited)" if y.inherited else ""),
                     _gap_text(y.gap, y.inherited)])
    side = md_table(["run", "metric", "paper", "default recipe", "gap",
                      f"best variant `{best}`", "gap"], rows)
    wide = gaps.assign(cell=[_gap_text(g, i) for g, i in zip(gaps.gap, gaps.inherited)])
    grid = gap_grid(wide, "cell")
    rows, current = [], None
    for (measurement, run, metric), cells in grid.iterrows():
        if measurement != current:
            current = measurement
            if measurement != "reported":
                rows.append([f"**[{measurement}]**", measurement_description(measurement),
                             *[""] * len(grid.columns)])
        rows.append([run, metric if measurement == "reported" else f"{metric} [{measurement}]",
                     *["·" if pd.isna(c) else c for c in cells]])
    full = md_table(["run", "metric", *[f"`{c}`" for c in grid.columns]], rows)
    return (
        "## Recipe variants\n\n"
        "Generated by rule `variants_gap_map` (target `variants`, config/variants.yaml) "
        "from every recipe's reproduction.csv and, for the measured columns, every "
        "recipe's `measurements.csv` (its saved models measured another way, no "
        "retraining). A column `R` is recipe R's numbers as its runs report them; a column "
        "`R/M` is recipe R's models measured the way M (e.g. `e_sum/eps_cos_b128`: the "
        "cosines as torch's cosine_similarity with eps 1e-8, gradients of a batch-mean CE "
        "over 128 images). The headline diagnostics stay epsilon-free; the measured columns "
        "show how the paper's numbers may have been made — a hypothesis, not the "
        "reproduction. A gap is (ours − paper) in units of the number's tolerance (log10 "
        "units for norms): |gap| ≤ 1 (✓) is within. A variant reruns only its methods and "
        "a measurement remeasures only ‖h_L‖ (where it measures it) and the cosines; every "
        "other number is inherited (shown in parentheses): a variant's from the default, "
        "a measured column's from its recipe (or, for a method the recipe did not rerun, "
        "from `default/M`), so every column is judged on the whole table. In the gap map "
        "below, the columns are the recipes and each measurement is a labelled row set of "
        "the numbers it remeasures (· : not measured for that recipe). Figure: "
        "`paper/figures/fig_variants.png`.\n\n"
        f"{table}\n\n## The default recipe and the best variant (`{best}`) side by side"
        f"\n\n{side}\n\n## The gap map\n\n{full}\n")


def write_gap_map(tables: dict, out_csv, reference_path=None, measurements=None,
                  default_md=None, out_md=None, about: dict | None = None,
                  expect: dict | None = None) -> pd.DataFrame:
    """variants_gap.csv and (``out_md``) the default's reproduction.md followed by the
    variant study; returns the gap table (what fig_variants draws). ``tables``: recipe →
    its reproduction.csv, default first; ``measurements``: recipe → its measurements.csv
    (a single path: the default's), each adding a column ``<recipe>/<measurement>`` per
    measurement variant. ``expect``: recipe → the runs its measurements.csv must hold."""
    frames = {name: table_io.read(path, "reproduction") for name, path in tables.items()}
    about = dict(about or {})
    if measurements and not isinstance(measurements, dict):
        measurements = {"default": measurements}
    if measurements:
        reference = load_reference(reference_path)
        for recipe, path in measurements.items():
            expected = (expect or {}).get(recipe)
            measured = measured_comparisons(
                reference, table_io.read(path, "measurements", expected), recipe)
            frames.update(measured)
            for name in measured:
                _, measurement = split_recipe(name)
                own = about.get(recipe, {})
                about[name] = {**own, "description": f"`{recipe}`'s models; "
                               + measurement_description(measurement)}
    gaps = gap_table(frames)
    inputs = [*tables.values(), *(measurements or {}).values(), *([reference_path] if
                                                                 reference_path else [])]
    table_io.write(gaps, out_csv, "variants_gap", inputs, float_format="%.4g")
    if out_md:
        text = Path(default_md).read_text().rstrip("\n") + "\n\n"
        atomic_write_text(out_md, text + variants_markdown(gaps, ranking(gaps), about))
    return gaps
