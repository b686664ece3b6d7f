"""Our results beside the paper's published numbers: results/<dataset>/summary/reproduction.*

Both tables are computed from the same summary tables the figures read; the
paper's numbers come only from the reference file (config/paper_reference.yaml).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import yaml

from credit_assign.infra import paths
from credit_assign.infra.files import atomic_write_text
from credit_assign.infra.results import schema
from credit_assign.pipeline.configfiles import check_yaml
from credit_assign.reporting import labels, render
from credit_assign.reporting import tables as table_io
from credit_assign.reporting.aggregate import select_runs
from credit_assign.reporting.render import cell

METRIC_NAMES = labels.names(labels.METRICS, "md")


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
        "ours_n": len(values), "ours_over": over, "difference": diff, "tolerance": tol,
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


def measurement_description(name: str) -> str:
    """What a measurement variant of credit_assign.science.measurement changes, in a sentence."""
    if name == "mixed_n":
        return ("‖h_L‖ (median) and the cosines on a seeded class-mixed draw of "
                "diagnostics.n_samples test images instead of the class-stratified set")
    if name == "one_batch":
        return ("‖h_L‖ as the Frobenius norm of the first measurements.batch images of the "
                "class-mixed draw, and the cosines on them")
    if name == "flat":
        return "the cosines as one cosine of the batch-flattened (N, d) matrices"
    if name == "gain":
        return ("the seed probes' gain-weighted cosine, read for this model: signal and "
                "gradient through the block's true W2 and GELU′ at W1's output, "
                "(v W2) ⊙ GELU′(pre), for every rule (standard FA's own W1 update goes "
                "through B2 instead; l0: exact)")
    for kind, how in (("eps_cos", "torch's cosine_similarity (eps 1e-8 clamping each norm, "
                                  "float32)"),
                      ("eps_den", "u·v / (‖u‖‖v‖ + 1e-8) in float32")):
        if name.startswith(f"{kind}_b"):
            return (f"the cosines as {how}, on gradients of a batch-mean CE over "
                    f"{name.removeprefix(f'{kind}_b')} images")
    return ""


def _measured_values(entry: dict, m: pd.DataFrame) -> tuple[np.ndarray, np.ndarray] | None:
    """One measurement's values (per seed) for a reference entry, and their seeds; None
    where the measurement does not measure that number (it is then the recipe's own)."""
    if "seed" in entry:
        return None
    if entry["metric"] == "cosine":
        column = f"cosine_l{entry['layer']}"
    else:
        column = MEASURED.get(entry["metric"])
    if column is None or column not in m or m[column].isna().all():
        return None
    df = m[(m.method == entry["method"]) & np.isclose(m.lam, entry["lam"])]
    return pd.to_numeric(df[column]).to_numpy(float), df.seed.to_numpy()


def measured_comparisons(reference: dict, measurements: pd.DataFrame,
                         recipe: str = "default") -> dict[str, pd.DataFrame]:
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
        rows = []
        for entry in reference["entries"]:
            found = _measured_values(entry, m)
            values, seeds = found if found is not None else (np.array([]), None)
            row = _row(entry, values, "seeds", reference["tolerances"], seeds)
            rows.append({**row, "remeasured": found is not None})
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


def headline_rows(gaps: pd.DataFrame) -> pd.DataFrame:
    """The gap map's rows of the headline number, DFA's unpenalised ‖h_L‖, where a gap was
    computed (every column: recipes, inherited ones, measurements)."""
    return gaps[(gaps.run == "dfa, λ=0") & (gaps.metric == METRIC_NAMES["h_L_norm_median"])
                & gaps.gap.notna()]


def md_table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table; every cell through render.cell (a '|' escaped, a line break a
    space), so that text from a config (a variant's description) cannot shift a column."""
    lines = ["| " + " | ".join(map(cell, header)) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(map(cell, r)) + " |" for r in rows]
    return "\n".join(lines)


def markdown(comparison: pd.DataFrame, summary: pd.DataFrame, context: str) -> str:
    rows = []
    for r in comparison.itertuples():
        run, metric = _label(r)
        paper = _paper_text(r)
        ours = "not run" if r.ours_n == 0 else \
            f"{_fmt(r.ours_mean, r.ours_std)} (n={r.ours_n} {r.ours_over})"
        verdict = {True: "yes", False: "**no**", None: "—"}[r.within_tolerance]
        if not r.verified:
            verdict += " (unverified target)"
        rows.append([run, metric, paper, ours, _fmt(r.difference), r.tolerance or "—",
                     _gap_text(r.gap, plain=True), _sd_text(r.gap_sd, r.tolerance_below_sd),
                     verdict])
    table = md_table(["run", "metric", "paper", "ours (arithmetic mean ± sd)", "ours − paper",
                       "tolerance", "gap (tolerances)", "gap (our sd)", "within"], rows)
    layer_cols = sorted((c for c in summary.columns if c.startswith("cosine_l")),
                        key=lambda c: int(c[8:]))
    rows2 = [[s.method, f"{s.lam:g}", str(s.seeds), str(s.epochs),
              _fmt(s.test_acc, s.test_acc_std), _fmt(s.h_L_norm_median),
              _fmt(s.deep_cosine, s.deep_cosine_std),
              *[_fmt(getattr(s, c), digits=2) for c in layer_cols],
              _fmt(s.fresh_b_mean, s.fresh_b_std)] for s in summary.itertuples()]
    table2 = md_table(["method", "λ", "seeds", "epochs", "test accuracy",
                       "median ‖h_L‖ (each run's median over images; mean over seeds)",
                        "deep cosine", *[f"cos l{c[8:]}" for c in layer_cols],
                        "fresh-B null"], rows2)
    ok = comparison.within_tolerance == True  # noqa: E712
    cmp = comparison.within_tolerance.notna()
    ver = comparison.verified.map(_flag)
    unverified = comparison[~ver]
    why = "; ".join(f"{' '.join(_label(r))}: {r.note}" for r in unverified.itertuples()
                    if r.note)
    counts = (f"Within tolerance: **{int(ok.sum())} of {int(cmp.sum())}** compared numbers "
              f"({len(comparison) - int(cmp.sum())} not run here); verified targets only: "
              f"**{int((ok & ver).sum())} of {int((cmp & ver).sum())}**"
              + (f" (unverified: {why})" if why else "") + ".")
    return (f"# Reproduction of the paper's CIFAR-10 numbers\n\n{context}\n\n{counts}\n\n"
            "Gap (tolerances): (ours − paper) / tolerance (log10 units for norms), |gap| ≤ 1 "
            "within. Gap (our sd): (ours − paper) / our seed-to-seed sd (ddof = 1; for norms "
            "the log10 difference over the sd of our log10 values; — with one seed); † "
            "where the tolerance is tighter than that sd.\n\n"
            f"## Paper vs ours\n\n{table}\n\n"
            f"## Every run (final epoch, arithmetic mean ± sd over seeds)\n\n{table2}\n")


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
        f"`{paths.fill(paths.SUMMARY, dataset=config['dataset'])}/*.csv` — the tables fig4 "
        "is drawn from. "
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
    """``dfa_no_aug/eps_cos_b128`` → (dfa_no_aug, eps_cos_b128); a recipe's own column → (name,
    "reported")."""
    base, _, measurement = name.partition(MEASUREMENT_SEP)
    return base, measurement or "reported"


STATED, MEASUREMENT = "stated", "measurement"
# The groups recipes are ranked in, each on its own: the stated recipe (``default``),
# the variants that fill a detail the paper leaves open, those that depart from what it
# states, and each of those recipes' models measured another way (``<kind>+measurement``:
# a measurement column keeps its recipe's kind, so a departing recipe's measurement never
# ranks with the open ones).
KINDS = (STATED, "open", "departs", f"{STATED}+{MEASUREMENT}", f"open+{MEASUREMENT}",
         f"departs+{MEASUREMENT}", "unlabelled", f"unlabelled+{MEASUREMENT}")
# the study's goal is a count under a recipe that departs from nothing the paper states,
# with any measurement: the stated recipe, the open variants, and their measurements
GOAL_KINDS = (STATED, "open", f"{STATED}+{MEASUREMENT}", f"open+{MEASUREMENT}")


def is_measurement(kind: str) -> bool:
    return kind.endswith(f"+{MEASUREMENT}")


def recipe_kind(name: str, kinds: dict[str, str] | None = None) -> str:
    """A gap-map column's group: ``stated`` (default), a variant's ``kind`` (``open``
    or ``departs``, config/variants.yaml), ``<that kind>+measurement`` for
    ``<recipe>/<measurement>``; a variant whose kind is not given is ``unlabelled``."""
    if name == "default":
        return STATED
    if MEASUREMENT_SEP in name:
        return f"{recipe_kind(split_recipe(name)[0], kinds)}+{MEASUREMENT}"
    return (kinds or {}).get(name, "unlabelled")


def gap_table(tables: dict[str, pd.DataFrame], kinds: dict[str, str] | None = None
              ) -> pd.DataFrame:
    """The gap map as a tidy table: one row per (paper number, column), the column's value
    and ours − paper in units of the tolerance (|gap| ≤ 1: within; NaN: no tolerance).
    ``tables``: column name → its comparison, ``default`` first; a column is a recipe
    (its reproduction table) or ``<recipe>/<measurement>`` (measured_comparisons);
    ``kinds``: variant → ``open`` | ``departs`` (recipe_kind). Each row also carries
    whether the paper's number is ``verified`` (the reference's flag), the gap in units
    of our own sd (``gap_sd``), whether the tolerance is tighter than that sd, and the
    per-seed gaps the hold-one-seed-out check reads.

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
            d = rows_of["default"][i]
            rows.append({"run": run, "metric": metric, "paper": _paper_text(r),
                         "recipe": name, "kind": recipe_kind(name, kinds),
                         "base_recipe": base, "measurement": measurement,
                         "remeasured": bool(getattr(r, "remeasured", True)),
                         "verified": _flag(getattr(d, "verified", True)),
                         "note": _text(getattr(d, "note", "")),
                         "ours_mean": src.ours_mean, "ours_std": src.ours_std,
                         "ours_n": src.ours_n, "gap": src.gap,
                         "gap_sd": getattr(src, "gap_sd", math.nan),
                         "tolerance_below_sd": _flag(getattr(src, "tolerance_below_sd",
                                                             False)),
                         "gap_seed": _text(getattr(src, "gap_seed", "{}")) or "{}",
                         "gap_without_seed": _text(getattr(src, "gap_without_seed", "{}"))
                         or "{}",
                         "inherited": inherited,
                         "inherited_from": source(name, i) if inherited else ""})
    out = pd.DataFrame(rows)
    out["within"] = out.gap.abs() <= 1
    return out


def _flag(x) -> bool:
    """A boolean cell, also as a CSV read back may hold it ("True", "False")."""
    if isinstance(x, str):
        return x.strip().lower() == "true"
    return False if x is None or (isinstance(x, float) and math.isnan(x)) else bool(x)


def _text(x) -> str:
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else str(x)


def gap_grid(gaps: pd.DataFrame, column: str = "gap") -> pd.DataFrame:
    """The gap map laid out for reading: columns are the recipes; rows are the paper
    numbers as each recipe reports them (``reported``), then one labelled row set per
    measurement holding only the numbers that measurement remeasures — a cell of the row
    set ``[eps_cos_b128]`` under ``dfa_no_aug`` is the column ``dfa_no_aug/eps_cos_b128``.
    Index: (measurement, run, metric); a missing combination is NaN."""
    recipes = list(dict.fromkeys(gaps.base_recipe))
    measurements = list(dict.fromkeys(gaps.measurement))
    keep = (gaps.measurement == "reported") | gaps.remeasured.astype(bool)
    g = gaps[keep]
    order = list(dict.fromkeys(zip(g.measurement, g.run, g.metric, strict=True)))
    order.sort(key=lambda k: measurements.index(k[0]))  # stable: paper order within a set
    wide = g.pivot_table(index=["measurement", "run", "metric"], columns="base_recipe",
                         values=column, aggfunc="first", dropna=False)
    return wide.reindex(index=pd.MultiIndex.from_tuples(order), columns=recipes)


def has_measured(gaps: pd.DataFrame | None) -> bool:
    """Whether the gap table holds a number some measurement remeasured (what
    fig_variants_measured draws and the paper's \\ifhasmeasured switches on)."""
    if gaps is None or gaps.empty or not {"measurement", "remeasured"} <= set(gaps):
        return False
    return bool(((gaps.measurement != "reported") & gaps.remeasured.map(_flag)).any())


DEFAULT_STUDY = {"seeds": None, "exclude_unverified": True, "goal": None,
                 "ranking": {"primary": "within_count", "tiebreak": "clipped_gap_sum",
                             "clip": 5.0}}
# a ranking key: its column in ranking()'s table, and whether smaller is better
RANK_KEYS = {"within_count": ("within", False), "clipped_gap_sum": ("clipped_gap_sum", True)}


def ranking_settings(study: dict | None = None) -> dict:
    """config ``study`` with its defaults (workflow/schemas/config.schema.yaml)."""
    study = study or {}
    return {**DEFAULT_STUDY, **study,
            "ranking": {**DEFAULT_STUDY["ranking"], **(study.get("ranking") or {})}}


def ranking_text(study: dict | None = None) -> str:
    """The configured ranking in words."""
    settings = ranking_settings(study)
    r = settings["ranking"]
    words = {"within_count": "the number of paper numbers within tolerance (more first)",
             "clipped_gap_sum": f"Σ min(|gap|, {r['clip']:g}) (smaller first)"}
    text = f"by {words[r['primary']]}"
    if r["tiebreak"] not in ("none", r["primary"]):
        text += f", ties by {words[r['tiebreak']]}"
    text += ", then by name; "
    return text + ("unverified paper numbers left out" if settings["exclude_unverified"]
                   else "unverified paper numbers counted")


def ranking(gaps: pd.DataFrame, study: dict | None = None) -> pd.DataFrame:
    """The recipes in the order of the study's ranking rule (config ``study``,
    ranking_settings): ranked within their kind (KINDS: the stated recipe, ``open``
    variants, ``departs`` variants, measurement columns), by ``ranking.primary`` then
    ``ranking.tiebreak`` then name; ``exclude_unverified`` leaves the reference's
    unverified numbers out of ``within``, ``compared`` and ``clipped_gap_sum``. Every
    count is also given both ways: ``within_all``/``compared_all`` (every number) and
    ``within_verified``/``compared_verified``. ``rank``: 1 for the best of its kind.
    The one ordering of recipes: the markdown, the notes and the paper take the
    winner from here (best)."""
    settings = ranking_settings(study)
    r = settings["ranking"]
    verified = gaps.verified.map(_flag) if "verified" in gaps else pd.Series(True, gaps.index)
    scored = gaps.gap.notna()
    counted = scored & verified if settings["exclude_unverified"] else scored
    within = gaps.gap.abs() <= 1
    kind = gaps.kind if "kind" in gaps else gaps.recipe.map(recipe_kind)
    g = gaps.assign(
        kind=kind, counted=counted, within_c=within & counted,
        clipped=gaps.gap.abs().clip(upper=r["clip"]).where(counted, 0.0),
        rerun=counted & ~gaps.inherited.map(_flag),
        w_all=within & scored, c_all=scored, w_ver=within & scored & verified,
        c_ver=scored & verified)
    out = g.groupby("recipe", sort=False).agg(
        kind=("kind", "first"), within=("within_c", "sum"), compared=("counted", "sum"),
        rerun=("rerun", "sum"), clipped_gap_sum=("clipped", "sum"),
        within_all=("w_all", "sum"), compared_all=("c_all", "sum"),
        within_verified=("w_ver", "sum"), compared_verified=("c_ver", "sum")).reset_index()
    out["kind_order"] = out.kind.map(lambda k: KINDS.index(k) if k in KINDS else len(KINDS))
    out = _ordered(out, study, ["kind_order"])
    out["rank"] = out.groupby("kind", sort=False).cumcount() + 1
    return out.drop(columns="kind_order")


def _ordered(table: pd.DataFrame, study: dict | None, first: list[str] = ()) -> pd.DataFrame:
    """``table`` (ranking's columns) in the study's order: ``first`` columns ascending,
    then the ranking rule's keys, then the recipe's name."""
    r = ranking_settings(study)["ranking"]
    keys, ascending = list(first), [True] * len(first)
    for name in dict.fromkeys([r["primary"], r["tiebreak"]]):
        if name in RANK_KEYS:
            column, smaller = RANK_KEYS[name]
            keys.append(column)
            ascending.append(smaller)
    return table.sort_values([*keys, "recipe"], ascending=[*ascending, True],
                             kind="stable").reset_index(drop=True)


def goal(rank: pd.DataFrame, study: dict | None = None, gaps: pd.DataFrame | None = None
         ) -> dict | None:
    """The study's goal (config ``study.goal``: a count within tolerance) checked on the
    recipes that depart from nothing the paper states, with any measurement (GOAL_KINDS),
    ordered by the same rule: {goal, recipe, within, compared, within_all, compared_all,
    reached}; None without a goal or such a recipe."""
    target = ranking_settings(study).get("goal")
    rows = rank[rank.kind.isin(GOAL_KINDS)]
    if target is None or rows.empty:
        return None
    r = rows[rows.recipe == _pick(rows, GOAL_KINDS, study)].iloc[0]
    out = {"goal": int(target), "recipe": r.recipe, "kind": r.kind,
           "within": int(r.within), "compared": int(r.compared),
           "within_all": int(r.within_all), "compared_all": int(r.compared_all),
           "reached": bool(r.within >= target), "candidates": len(rows)}
    # the same pick, made on all seeds but one and counted on that one (holdout): the
    # best of k columns is an optimistic count, and this says by how much on these runs
    held = holdout(gaps, study, GOAL_KINDS) if gaps is not None else pd.DataFrame()
    if len(held):
        out |= {"held_out_within": float(held.within_held_out.mean()),
                "held_out_compared": float(held.compared_held_out.mean()),
                "held_out_seeds": len(held)}
    return out


def goal_text(result: dict | None) -> str:
    """The goal check in a sentence ('' without a goal)."""
    if result is None:
        return ""
    verdict = "reached" if result["reached"] else "not reached"
    held = (f" Picked as the best of {result['candidates']} columns, that count is "
            "optimistic: making the same pick on all seeds but one and counting on that one "
            f"gives {result['held_out_within']:.1f} of {round(result['held_out_compared'], 1):g} "
            f"on average over the {result['held_out_seeds']} held-out seeds."
            if "held_out_within" in result else
            f" Picked as the best of {result['candidates']} columns, that count is "
            "optimistic.")
    return (f"Goal (config `study.goal`, set during the study's build: the claims page, "
            f"\"How this study was made\"): at least {result['goal']} "
            f"numbers within tolerance under a recipe that departs from nothing the paper "
            f"states, with any measurement — {verdict}: the best such column is "
            f"`{result['recipe']}` ({result['kind']}) with {result['within']} of "
            f"{result['compared']} ranked numbers ({result['within_all']} of "
            f"{result['compared_all']} counting every number)." + held)


def best(rank: pd.DataFrame, kind: str = "open") -> str | None:
    """The winner of a kind under the ranking (None if the study has none of that kind):
    the headline "best recipe" is the best ``open`` one."""
    rows = rank[rank.kind == kind]
    return rows.recipe.iloc[0] if len(rows) else None


def _pick(rank: pd.DataFrame, kinds, study: dict | None) -> str | None:
    """The first recipe of ``kinds`` pooled, in the study's order across them (what
    goal() picks; for one kind it is best()): None if there is none."""
    pool = rank[rank.kind.isin(kinds)]
    return _ordered(pool, study).recipe.iloc[0] if len(pool) else None


def _seed_map(cell) -> dict[str, float]:
    if not isinstance(cell, str) or not cell.strip():
        return {}
    return {k: (math.nan if v is None else float(v)) for k, v in json.loads(cell).items()}


def holdout(gaps: pd.DataFrame, study: dict | None = None,
            kind: str | tuple[str, ...] = "open"
            ) -> pd.DataFrame:
    """The winner's curse, estimated by holding one seed out: for each seed s, rank the
    recipes of ``kind`` by the study's rule on the other seeds' mean (``gap_without_seed``)
    and count the winner's numbers within tolerance on seed s alone (``gap_seed``).
    Columns: held_out, winner, within_selected (on the seeds it was picked on),
    compared_selected, within_held_out, compared_held_out, and mean_drop_of_kind: the
    drop from the ranking seeds to the held-out seed averaged over every recipe of the
    kind (part of any drop is only one seed being noisier than a mean of two; the
    winner's drop beyond it is the selection's inflation). Empty without per-seed gaps."""
    kinds = [kind] if isinstance(kind, str) else list(kind)
    seeds = sorted({s for cell in gaps.gap_seed for s in _seed_map(cell)}, key=int) \
        if "gap_seed" in gaps else []
    rows = []
    for s in seeds:
        def on(column, s=s):
            g = gaps.assign(gap=[_seed_map(c).get(s, math.nan) for c in gaps[column]])
            return g.assign(within=g.gap.abs() <= 1)
        picked, held = ranking(on("gap_without_seed"), study), ranking(on("gap_seed"), study)
        winner = _pick(picked, kinds, study)
        if winner is None:
            continue
        p, h = picked.set_index("recipe"), held.set_index("recipe")
        of_kind = p.index[p.kind.isin(kinds)]
        drop = (p.loc[of_kind, "within"] - h.loc[of_kind, "within"]).mean()
        rows.append({"held_out": int(s), "winner": winner,
                     "within_selected": int(p.loc[winner, "within"]),
                     "compared_selected": int(p.loc[winner, "compared"]),
                     "within_held_out": int(h.loc[winner, "within"]),
                     "compared_held_out": int(h.loc[winner, "compared"]),
                     "mean_drop_of_kind": float(drop)})
    return pd.DataFrame(rows, columns=["held_out", "winner", "within_selected",
                                       "compared_selected", "within_held_out",
                                       "compared_held_out", "mean_drop_of_kind"])


def _gap_text(gap: float, inherited: bool = False, plain: bool = False) -> str:
    text = "—" if pd.isna(gap) else f"{gap:+.1f}" + (" ✓" if abs(gap) <= 1 and not plain
                                                     else "")
    return f"({text})" if inherited and text != "—" else text


def _sd_text(gap_sd: float, tighter) -> str:
    """A gap in units of our own sd, † where the tolerance is tighter than that sd."""
    text = "—" if pd.isna(gap_sd) else f"{gap_sd:+.1f}"
    return text + (" †" if _flag(tighter) else "")


def _count(r, which: str = "") -> str:
    return f"{int(getattr(r, 'within' + which))} of {int(getattr(r, 'compared' + which))}"


def holdout_markdown(table: pd.DataFrame, kind: str = "open") -> str:
    """The hold-one-seed-out check as a paragraph and a table."""
    head = ("## The winner's curse\n\nPicking the best of k recipes by their counts "
            "can inflate the winner's count: part of its lead may be noise that favoured "
            "it on the seeds it was picked on. ")
    if table.empty:
        return head + ("No per-seed gaps here (one seed, or tables from before they were "
                       "recorded), so the inflation is not estimated.\n")
    rows = [[str(r.held_out), f"`{r.winner}`",
             f"{r.within_selected} of {r.compared_selected}",
             f"{r.within_held_out} of {r.compared_held_out}",
             f"{r.within_held_out - r.within_selected:+d}", f"{-r.mean_drop_of_kind:+.2f}"]
            for r in table.itertuples()]
    return (head + f"Estimated by holding one seed out: the `{kind}` recipes are ranked by "
            "the same rule on the other seeds' mean, and the winner's numbers are counted "
            "on the held-out seed alone. " + curse_sentence(table, kind)
            + (" Both counts cover the same numbers on every fold (a number measured on "
               "one seed only is in neither)."
               if (table.compared_selected == table.compared_held_out).all() else
               " A number measured on one seed only counts on the side that holds that "
               "seed, so the two counts differ in total where the table says so.")
            + "\n\n"
            + md_table(["held-out seed", "winner on the other seeds", "its count there",
                        "its count on the held-out seed", "change (held-out − there)",
                        f"mean change over the {kind} recipes"], rows) + "\n")


def curse_finding(table: pd.DataFrame, kind: str = "open") -> dict:
    """What the hold-one-seed-out table says: the winner's fall from the seeds it was
    picked on to the held-out seed (``drop``), a typical recipe's of the kind
    (``typical``), and the winner's extra fall (``extra``), which estimates the
    selection's inflation (none is claimed when it is not positive). Each is rounded as
    printed, so a sign never rests on float noise (2.2e-16 is 0.00). Outcome
    ``missing`` without per-seed gaps."""
    if table.empty:
        return {"outcome": "missing", "kind": kind}
    drop = round(float((table.within_selected - table.within_held_out).mean()), 2)
    typical = round(float(table.mean_drop_of_kind.mean()), 2)
    return {"outcome": "estimated", "kind": kind, "held_out": len(table), "drop": drop,
            "typical": typical, "extra": round(drop - typical, 2)}


def curse_sentence(table: pd.DataFrame, kind: str = "open") -> str:
    """curse_finding in the notes' words (templates/curse.j2)."""
    return render.phrases("curse.j2", {"curse": curse_finding(table, kind)})["curse"]


def variants_markdown(gaps: pd.DataFrame, rank: pd.DataFrame, about: dict[str, dict],
                      study: dict | None = None) -> str:
    """The variant study as markdown: the ranking (by the study's rule, each kind on its
    own), the default recipe beside the best ``open`` variant, the winner's-curse
    check, and the whole gap map. ``about``: recipe → {kind, description, methods,
    seeds}; ``rank``: ranking(gaps, study)."""
    variants = rank[rank.recipe != "default"]
    if variants.empty:
        return ""
    best_open = best(rank, "open")
    rows = []
    titles = {STATED: "the stated recipe", "open": "fills a detail the paper leaves open",
              "departs": "departs from what the paper states"}
    titles |= {f"{k}+{MEASUREMENT}": f"{titles[k]}, measured another way"
               for k in (STATED, "open", "departs")}
    for r in rank.itertuples():
        a = about.get(r.recipe, {})
        rows.append([f"{titles.get(r.kind, r.kind)}", str(r.rank),
                     f"`{r.recipe}`" + (" **(best open)**" if r.recipe == best_open else ""),
                     a.get("description", ""), ", ".join(a.get("methods", [])) or "—",
                     ", ".join(str(s) for s in a.get("seeds", [])) or "—",
                     _count(r), _count(r, "_all"), _count(r, "_verified"), str(r.rerun),
                     f"{r.clipped_gap_sum:.1f}"])
    clip = ranking_settings(study)["ranking"]["clip"]
    table = md_table(["kind", "rank", "recipe", "what it changes", "methods rerun", "seeds",
                       "within (ranked)", "within (every number)", "within (verified only)",
                       "numbers it reruns", f"Σ min(∣gap∣, {clip:g}) (ranked)"], rows)
    # no open variant: the first variant of the ranking, named for what it is
    shown = best_open or variants.recipe.iloc[0]
    title = "best open variant" if best_open else \
        f"best {rank.set_index('recipe').kind[shown]} variant"
    d = gaps[gaps.recipe == "default"].reset_index(drop=True)
    b = gaps[gaps.recipe == shown].reset_index(drop=True)
    rows = []
    for x, y in zip(d.itertuples(), b.itertuples(), strict=True):
        def ours(z):
            return "not run" if z.ours_n == 0 else f"{_fmt(z.ours_mean, z.ours_std)} (n={z.ours_n})"
        rows.append([x.run, x.metric + ("" if _flag(x.verified) else " (unverified target)"),
                     x.paper, ours(x), _gap_text(x.gap),
                     _sd_text(x.gap_sd, x.tolerance_below_sd),
                     ours(y) + (" (inherited)" if _flag(y.inherited) else ""),
                     _gap_text(y.gap, _flag(y.inherited)),
                     _sd_text(y.gap_sd, y.tolerance_below_sd)])
    side = md_table(["run", "metric", "paper", "default recipe", "gap", "gap (our sd)",
                      f"{title} `{shown}`", "gap", "gap (our sd)"], rows)
    wide = gaps.assign(cell=[_gap_text(g, i)
                             for g, i in zip(gaps.gap, gaps.inherited, strict=True)])
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
        "`R/M` is recipe R's models measured the way M (e.g. `dfa_no_aug/eps_cos_b128`: the "
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
        "the numbers it remeasures (· : not measured for that recipe). Figures: "
        f"`{paths.figure('fig_variants', 'png')}` (the recipes' own numbers) and, where "
        f"measurements ran, `{paths.figure('fig_variants_measured', 'png')}` and "
        f"`{paths.figure('fig_variants_measured_eps', 'png')}` (one panel per "
        "measurement).\n\n"
        "Every recipe ran on the same seeds, and the ranking rule is the one in "
        "config/variants.yaml (`study`; when it was written down, and that a pilot used it "
        "first: the claims page, \"How this study was made\"): recipes are ranked "
        f"{ranking_text(study)}. Variants are ranked in two groups: `open` ones fill a detail "
        "the paper's record leaves open, `departs` ones depart from what it states (the "
        "headline best recipe is the best `open` one); each recipe's measurement columns "
        "are ranked apart, with the recipe's kind. Counts are given with and without the "
        "unverified paper numbers. "
        "Gap (our sd): (ours − paper) / our seed-to-seed sd (for norms in log10); † "
        "where the tolerance is tighter than that sd.\n\n"
        f"{table}\n\n## The default recipe and the {title} (`{shown}`) side by "
        f"side\n\n{side}\n\n{holdout_markdown(holdout(gaps, study))}\n"
        f"## The gap map\n\n{full}\n")


def write_gap_map(tables: dict, out_csv, reference_path=None, measurements=None,
                  default_md=None, out_md=None, about: dict | None = None,
                  expect: dict | None = None, study: dict | None = None) -> pd.DataFrame:
    """variants_gap.csv and (``out_md``) the default's reproduction.md followed by the
    variant study; returns the gap table (what fig_variants draws). ``tables``: recipe →
    its reproduction.csv, default first; ``measurements``: recipe → its measurements.csv
    (a single path: the default's), each adding a column ``<recipe>/<measurement>`` per
    measurement variant. ``expect``: recipe → the runs its measurements.csv must hold;
    ``study``: config ``study`` (the ranking rule); ``about[name]["kind"]``: each
    variant's kind."""
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
    gaps = gap_table(frames, {name: a["kind"] for name, a in about.items()
                              if MEASUREMENT_SEP not in name and "kind" in a})
    inputs = [*tables.values(), *(measurements or {}).values(), *([reference_path] if
                                                                 reference_path else [])]
    # full precision: the notes and the paper format each number once, from this value
    table_io.write(gaps, out_csv, "variants_gap", inputs)
    if out_md:
        text = Path(default_md).read_text().rstrip("\n") + "\n\n"
        atomic_write_text(out_md, text + variants_markdown(gaps, ranking(gaps, study), about,
                                                           study))
    return gaps
