"""results/<dataset>/<recipe>/summary/reproduction.{csv,md} (step reproduction): the comparison
with the paper's numbers (comparison.compare) and every run's overview, in
reproduction.md.j2's words (its header: reproduction_context.md.j2)."""

from __future__ import annotations

import math

import pandas as pd

from credit_assign.analysis import tables as table_io
from credit_assign.analysis.aggregate import select_runs
from credit_assign.analysis.comparison import compare, load_reference, number_key, paper_number
from credit_assign.infra import paths
from credit_assign.infra.files import atomic_write_text
from credit_assign.reporting import labels, render
from credit_assign.reporting.render import flag


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
        per_layer = select_runs(final, method, lam)
        for layer, cos in per_layer.groupby("layer").cosine:
            row[f"cosine_l{layer}"] = cos.mean()
        fresh = select_runs(nulls, method, lam)
        fresh = fresh[fresh.feedback == "fresh"]
        row["fresh_b_mean"] = fresh.deep_cosine.mean() if len(fresh) else math.nan
        row["fresh_b_std"] = fresh.deep_cosine.std(ddof=1) if len(fresh) > 1 else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def markdown(comparison: pd.DataFrame, summary: pd.DataFrame, context: str) -> str:
    """reproduction.md (reproduction.md.j2): ``context`` (the header), the counts
    within tolerance, each paper number beside ours (``comparison``: compare), and every
    run of ``summary`` (overview)."""
    rows = [{**number_key(r), **paper_number(r), "ours_n": r.ours_n,
             "ours_mean": r.ours_mean, "ours_std": r.ours_std, "ours_over": r.ours_over,
             "difference": r.difference, "tolerance": r.tolerance,
             "tolerance_kind": r.tolerance_kind, "gap": r.gap,
             "gap_sd": r.gap_sd, "tighter": r.tolerance_below_sd,
             "within": r.within_tolerance, "verified": bool(r.verified)}
            for r in comparison.itertuples()]
    layers = sorted((c for c in summary.columns if c.startswith("cosine_l")),
                    key=lambda c: int(c[8:]))
    runs = [{**s._asdict(), "cosines": [getattr(s, c) for c in layers]}
            for s in summary.itertuples()]
    ok = comparison.within_tolerance == True  # noqa: E712
    cmp = comparison.within_tolerance.notna()
    ver = comparison.verified.map(flag)
    counts = {"within": int(ok.sum()), "compared": int(cmp.sum()),
              "not_run": len(comparison) - int(cmp.sum()),
              "within_verified": int((ok & ver).sum()),
              "compared_verified": int((cmp & ver).sum())}
    unverified = [{**number_key(r), "note": r.note}
                  for r in comparison[~ver].itertuples() if r.note]
    return render.render("reproduction.md.j2", context=context, counts=counts,
                         unverified=unverified, rows=rows, runs=runs,
                         layers=[c[8:] for c in layers])


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
    """The header of reproduction.md (reproduction_context.md.j2): what was run,
    on what data (the data cache's manifest ``info``: the source by file name and sha256,
    never a machine's path), and what to expect."""
    t = config["training"]
    variant = config.get("variant")
    ran = config.get("sweep", {}).get("methods")
    if variant:  # a variant runs its own methods (the others are the default's)
        ran = list(variant["methods"])
    return render.render(
        "reproduction_context.md.j2", config=config, training=t,
        summary=paths.fill(paths.SUMMARY, dataset=config["dataset"],
                           recipe=variant["name"] if variant else paths.DEFAULT_RECIPE),
        dataset=labels.DATASETS.get(config["dataset"], {}).get("md", config["dataset"]),
        # a method's own epochs only where it ran (a sweep the config left empty: not run)
        per_method=[(k, v["epochs"]) for k, v in t.get("per_method", {}).items()
                    if "epochs" in v and (k in ran if ran is not None else True)],
        schedule=t.get("schedule"), step=t.get("schedule_step", "batch"), info=info,
        variant=variant and {"name": variant["name"], "methods": variant["methods"],
                             "description": variant.get("description", ""),
                             "overrides": variant["overrides"]},
        image_folder=info["name"] == "cifar10"
        and str(info.get("order", "")).startswith("image-folder"))
