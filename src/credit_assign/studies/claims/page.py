"""Steps claims_tables and claims_verdicts: the runs the claims read as tables; the
verdicts (claims.csv), the effects seed by seed (claims_by_seed.csv), every finding as
one record (findings.json) and the page (claims.md, from claims.md.j2 beside this module)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from credit_assign.analysis import aggregate, claims, history
from credit_assign.analysis import tables as table_io
from credit_assign.analysis.ep_stack_tables import by_seed, summary_tables
from credit_assign.infra.files import atomic_write_text
from credit_assign.infra.results import read_result
from credit_assign.planning.claims import load
from credit_assign.reporting import labels, render

METRIC_NAMES = labels.names(labels.METRICS, "md")
SET_NAMES = labels.names(labels.SEED_SETS, "md")


def _clean(x):
    """JSON has no NaN: an undefined number is null."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_clean(v) for v in x]
    return x


def read_tables(inputs, expect: dict) -> dict:
    return {"runs": table_io.read(inputs.runs, "runs", expect["runs"]),
            "epochs": table_io.read(inputs.epochs, "epochs", expect["runs"]),
            "nulls": table_io.read(inputs.nulls, "null_layers", expect["null_layers"]),
            "ep": table_io.read(inputs.ep, "ep_by_seed"),
            "provenance": table_io.read(inputs.provenance, "claims_provenance")}


def build(spec_path: str, tables: dict, root: str | Path = ".",
          history_path: str | Path | None = None) -> dict:
    """Every finding of the claims, as one JSON-ready record; with ``history_path``
    (config/history.yaml), what was fixed when."""
    spec = load(spec_path)
    found = claims.findings(spec, tables)
    prov = tables["provenance"]
    # the pre-registered results: every result on the fresh seeds (training, nulls, EP)
    fresh = prov[((prov.kind != "ep_stack") & prov.seed.isin(spec["seeds"]["fresh"]))
                 | ((prov.kind == "ep_stack") & prov.seed.isin(spec["seeds"].get("ep_fresh", [])))]
    order = history.order(root, str(spec_path), fresh)
    order["earlier"] = history.earlier_runs(root, found["by_seed"], order)
    return _clean({"spec_path": history.repo_relative(root, spec_path), "seeds": spec["seeds"],
                   "decision": spec["decision"], "draws": spec["null"]["draws"],
                   "claims": spec["claims"], **found,
                   "coverage": coverage(spec),
                   "order": order,
                   "history": history.read_events(root, history_path)
                   if history_path else []})


def seed_counts(spec: dict) -> list[int]:
    """The numbers of seeds the claims' intervals are taken over (two or more: one seed
    has no interval)."""
    return sorted(n for n in {len(spec["seeds"][claims.verdict_set(c)]) for c in spec["claims"]}
                  | {len(spec["seeds"]["study"])} if n >= 2)


def coverage_settings(settings: dict = claims.COVERAGE) -> dict:
    return {**settings, "distributions": list(settings["distributions"])}


def coverage(spec: dict, settings: dict = claims.COVERAGE) -> dict:
    """The coverage of the decision's interval and of the t-interval at each seed count
    the claims use (claims.coverage: a simulation; its settings beside it)."""
    return {"settings": coverage_settings(settings),
            "by_n": {str(n): claims.coverage(n, spec["decision"], settings)
                     for n in seed_counts(spec)}}


def page(record: dict) -> str:
    """claims.md from the findings record (claims.md.j2)."""
    by_id = {c["id"]: c for c in record["claims"]}
    main = [v for v in record["verdicts"] if v["verdict_set"]]
    study = {(v["claim"], v["part"]): v for v in record["verdicts"]
             if v["seed_set"] == "study" and not v["verdict_set"]}
    table = [{"claim": by_id[v["claim"]], "part": v["part"], "main": v,
              "study": study.get((v["claim"], v["part"]))} for v in main]
    seed_tables = []
    for seed_set in dict.fromkeys(r["seed_set"] for r in record["by_seed"]):
        rows = [r for r in record["by_seed"] if r["seed_set"] == seed_set]
        keys = list(dict.fromkeys((r["claim"], r["part"]) for r in rows))
        seed_tables.append({
            "seed_set": seed_set, "seeds": sorted({r["seed"] for r in rows}),
            "rows": [{"label": f"{c} {p}".strip(),
                      "values": {r["seed"]: r for r in rows if (r["claim"], r["part"]) == (c, p)}}
                     for c, p in keys]})
    return render.render("claims.md.j2", **record, findings=record,
                         table=table,
                         seed_tables=seed_tables, names=METRIC_NAMES, by_id=by_id,
                         set_names={k: SET_NAMES.get(k, k) for k in record["seeds"]})


def write(spec_path: str, inputs, expect: dict, outputs, root: str | Path = ".") -> dict:
    tables = read_tables(inputs, expect)
    record = build(spec_path, tables, root, inputs.history)
    verdicts = pd.DataFrame(record["verdicts"]).drop(columns=["seeds", "diverged", "unsettled"])
    table_io.write(verdicts, outputs.verdicts, "claims",
                   [inputs.runs, inputs.epochs, inputs.nulls, inputs.ep, spec_path],
                   float_format="%.6g")
    # full precision (each float as Python writes it): a reader recomputes every
    # interval from this file exactly (tests/test_claims.py)
    table_io.write(pd.DataFrame(record["by_seed"]), outputs.by_seed, "claims_by_seed",
                   [inputs.runs, inputs.epochs, inputs.nulls, inputs.ep, spec_path])
    atomic_write_text(outputs.findings, json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    atomic_write_text(outputs.md, page(record))
    return record


# ---- the claims' runs (config claims.file) ----------------------------------------------
def write_claims_tables(train_paths, timing_paths, null_paths, ep_paths, ep_timing_paths,
                        outputs, settle: dict | None = None) -> None:
    """Step claims_tables: the runs the claims read as the tables they judge —
    ``runs`` and ``epochs`` (as :func:`tables` makes them), the per-layer fresh-B null
     and the EP probes per seed with their settle flags
    (credit_assign.analysis.ep_stack_tables.by_seed, under config ep_stack.settle)."""
    train_paths, timing_paths = list(train_paths), list(timing_paths)
    null_paths, ep_paths = list(null_paths), list(ep_paths)
    frames = aggregate.tables(train_paths, [], timing_paths)
    table_io.write(frames["runs"], outputs.runs, "runs", train_paths + timing_paths)
    table_io.write(frames["epochs"], outputs.epochs, "epochs", train_paths + timing_paths)
    table_io.write(aggregate.null_layer_table(null_paths), outputs.nulls, "null_layers", null_paths)
    results = [read_result(p, "ep_stack") for p in ep_paths]
    timings = [read_result(p, "ep_stack_timings") for p in ep_timing_paths]
    ep = (by_seed(summary_tables(results, timings, settle)[0]) if results
          else pd.DataFrame(columns=["corpus", "precision", "seed", "free_steps", "group",
                                     "cosine", "settled"]))
    table_io.write(ep, outputs.ep, "ep_by_seed", ep_paths + list(ep_timing_paths),
                   float_format="%.6g")
    every = train_paths + timing_paths + null_paths + ep_paths + list(ep_timing_paths)
    table_io.write(aggregate.provenance_table(
        {"train": train_paths, "fresh_b_null": null_paths, "ep_stack": ep_paths},
        {"train": timing_paths, "ep_stack": list(ep_timing_paths)}),
        outputs.provenance, "claims_provenance", every)


# ---- the paper's part ------------------------------------------------------------------
TEX_SET_NAMES = labels.names(labels.SEED_SETS, "tex")  # short: a table column


def write_tex(findings_path: str | Path | None, history_path: str | Path, out,
              root: str | Path = ".") -> None:
    """Step paper_claims: paper/claims.tex — the claims' counts and table (where the
    config has claims: ``findings_path``) and what was fixed when, as macros."""
    record = (json.loads(Path(findings_path).read_text(encoding="utf-8"))
              if findings_path else None)
    text = render.render("claims.tex.j2", record=record,
                         by_id={c["id"]: c for c in record["claims"]} if record else {},
                         set_names=TEX_SET_NAMES,
                         history=history.read_events(root, history_path))
    atomic_write_text(out, text)
