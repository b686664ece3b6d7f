"""Summary tables as data with a contract: written with a record of what they were made
from, and checked whenever a figure, the paper or the notes read them.

Every summary table (``results/<dataset>/summary/*.csv``, ``results/ep_stack/summary/*.csv``)
is written by :func:`write`, which checks the frame against its contract and puts a
record beside it (``<table>.csv.digest.json``: the table's sha256, and the sha256 of
each file it was made from). :func:`read` is the only way the reporting code reads one:

* a missing, empty, truncated or unparsable table, one whose columns or dtypes break its
  contract (a pandera schema), or whose bytes differ from its record (edited by hand), is
  a :class:`TableError` that names the file and says what to do — before any figure or
  table is written from it;
* with ``expect``, its coverage is checked too: the (method, λ, seed) runs the config
  asks for are all there, and no other (each once in a one-row-per-run table).

:func:`audit` (``python -m credit_assign.reporting.stale``) lists the tables whose inputs changed
after they were written. Pure pandas and pandera: no torch.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd
import pandera.pandas as pa
from pandera.errors import SchemaError, SchemaErrors

from credit_assign.infra.files import atomic_write_text, sha256_file
from credit_assign.pipeline.matrix import run_key

DIGEST_SUFFIX = ".digest.json"
RUN = ("method", "lam", "seed")  # what a training run is, in every table that has runs


class TableError(ValueError):
    """A summary table that cannot be trusted; the message names it and what to do."""


def _num(nullable: bool = True) -> pa.Column:
    return pa.Column(float, nullable=nullable, coerce=True)


def _int(nullable: bool = False) -> pa.Column:
    return pa.Column("Int64" if nullable else int, nullable=nullable, coerce=True)


def _str(nullable: bool = False) -> pa.Column:
    return pa.Column(str, nullable=nullable, coerce=nullable)


def _bool(nullable: bool = False) -> pa.Column:
    return pa.Column(bool, nullable=nullable, coerce=True)


def _runs_columns() -> dict[str, pa.Column]:
    return {"dataset": _str(), "method": _str(), "lam": _num(False), "seed": _int()}


def _schema(columns: dict[str, pa.Column], unique: tuple[str, ...] | None,
            checks: list[pa.Check] | None = None) -> pa.DataFrameSchema:
    # strict=False: a table may carry more columns than its readers need
    return pa.DataFrameSchema(columns, strict=False, unique=list(unique) if unique else None,
                              checks=checks)


# a run's final numbers that are never undefined for a run that stayed finite (the deep
# cosine is: the frozen baseline has none)
FINITE_UNLESS_DIVERGED = ("test_acc", "train_loss", "test_loss", "h_L_norm_median")


def _nan_only_where_diverged(frame: pd.DataFrame) -> pd.Series:
    """A run's row may hold a missing or non-finite number only where the run's own
    record says it diverged (n_nonfinite > 0)."""
    values = frame[list(FINITE_UNLESS_DIVERGED)].apply(pd.to_numeric, errors="coerce")
    bad = ~np.isfinite(values.to_numpy(dtype=float)).all(axis=1)
    return pd.Series(~bad | (frame.n_nonfinite.to_numpy() > 0), index=frame.index)


# One contract per kind of table: the columns its readers rely on, their dtypes, and the
# columns that identify a row (unique), and whether a row is a run (RUN) for coverage.
CONTRACTS: dict[str, tuple[pa.DataFrameSchema, bool]] = {
    "runs": (_schema({**_runs_columns(), "epochs": _int(), "final_epoch": _int(),
                      "test_acc": _num(), "train_loss": _num(), "test_loss": _num(),
                      "h_L_norm_median": _num(), "deep_cosine": _num(),
                      "first_nonfinite_epoch": _int(True), "stopped_early": _bool(),
                      "n_nonfinite": _int(), "total_s": _num(), "device": _str()},
                     ("dataset", *RUN),
                     [pa.Check(_nan_only_where_diverged, error="a missing or non-finite "
                               f"{'/'.join(FINITE_UNLESS_DIVERGED)} in a run whose record "
                               "says it stayed finite (n_nonfinite = 0)")]), True),
    "epochs": (_schema({**_runs_columns(), "epoch": _int(), "lr": _num(),
                        "train_loss": _num(), "test_acc": _num(), "test_loss": _num(),
                        "h_L_norm_median": _num(), "deep_cosine": _num(),
                        "train_s": _num(), "diagnostics_s": _num()},
                       ("dataset", *RUN, "epoch")), True),
    "layers": (_schema({**_runs_columns(), "epoch": _int(), "layer": _int(),
                        "cosine": _num(), "h_norm_median": _num(),
                        "grad_norm_median": _num(), "signal_norm_median": _num(),
                        "branch_norm_median": _num()},
                       ("dataset", *RUN, "epoch", "layer")), True),
    "nulls": (_schema({**_runs_columns(),
                       "feedback": pa.Column(str, pa.Check.isin(["trained", "fresh"])),
                       "draw": _int(True), "deep_cosine": _num()},
                      ("dataset", *RUN, "feedback", "draw")), True),
    "null_layers": (_schema({**_runs_columns(),
                             "feedback": pa.Column(str, pa.Check.isin(["trained", "fresh"])),
                             "draw": _int(True), "layer": _str(), "cosine": _num()},
                            ("dataset", *RUN, "feedback", "draw", "layer")), True),
    # the claims (credit_assign.reporting.claims): a verdict never without its reason
    "claims": (_schema({"claim": _str(), "part": _str(True), "seed_set": _str(),
                        "verdict_set": _bool(), "n": _int(), "n_seeds": _int(),
                        "mean": _num(), "low": _num(), "high": _num(),
                        "interval": _str(),
                        "verdict": pa.Column(str, pa.Check.isin(["holds", "contradicted",
                                                                 "undecided"])),
                        "reason": pa.Column(str, pa.Check.isin(["diverged", "too_few",
                                                                "straddles"]),
                                            nullable=True)},
                       ("claim", "part", "seed_set")), False),
    "claims_by_seed": (_schema({"claim": _str(), "part": _str(True), "seed_set": _str(),
                                "seed": _int(), "effect": _num(),
                                "status": pa.Column(str, pa.Check.isin(
                                    ["ok", "diverged", "unsettled"]))},
                               ("claim", "part", "seed_set", "seed")), False),
    "probe_alignment": (_schema({**_runs_columns(), "epoch": _int(), "rule": _str(),
                                 "trained_with": _bool(), "layer": _int(),
                                 "cosine": _num(), "signal_norm_median": _num(),
                                 "grad_norm_median": _num()},
                                ("dataset", *RUN, "epoch", "rule", "layer")), True),
    "probe_ratios": (_schema({**_runs_columns(), "epoch": _int(), "rule": _str(),
                              "ratio": _num(), "decrease_rule": _num(),
                              "decrease_sgd": _num(), "loss_before": _num()},
                             ("dataset", *RUN, "epoch", "rule")), True),
    "measurements": (_schema({**_runs_columns(), "measurement": _str(),
                              "h_L_norm": _num(), "deep_cosine": _num(), "n": _int()},
                             ("dataset", *RUN, "measurement")), True),
    "reproduction": (_schema({"method": _str(), "lam": _num(False), "metric": _str(),
                              "layer": _num(), "seed": _num(), "paper": _num(),
                              "paper_range": pa.Column(nullable=True),
                              "ours_mean": _num(), "ours_std": _num(), "ours_n": _int(),
                              "gap": _num(), "within_tolerance": _bool(True),
                              "gap_sd": _num(), "tolerance_below_sd": _bool(),
                              "verified": _bool(), "gap_seed": _str(),
                              "gap_without_seed": _str(), "source": _str()},
                             ("method", "lam", "metric", "layer", "seed")), False),
    # a paper number by its keys (reproduction's) and the published number as data; the
    # pages and figures label it (render.run_label, metric_label, paper_text)
    "variants_gap": (_schema({"method": _str(), "lam": _num(False), "seed": _int(True),
                              "metric": _str(), "layer": _int(True), "paper": _num(),
                              "paper_std": _num(), "paper_range": pa.Column(nullable=True),
                              "recipe": _str(),
                              "ours_mean": _num(), "ours_n": _int(), "gap": _num(),
                              "inherited": _bool(), "kind": _str(), "verified": _bool(),
                              "gap_sd": _num(), "tolerance_below_sd": _bool(),
                              "gap_seed": _str(), "gap_without_seed": _str(),
                              "base_recipe": _str(), "measurement": _str(),
                              "remeasured": _bool()},
                             ("method", "lam", "seed", "metric", "layer", "recipe")), False),
    "ep_cosines": (_schema({"corpus": _str(), "precision": _str(), "seed": _int(),
                            "batch": _int(), "free_steps": _int(), "group": _str(),
                            "cosine": _num(), "residual": _num(), "t_best": _num(),
                            "settled": _bool(), "max_residual": _num()},
                           ("corpus", "precision", "seed", "batch", "free_steps", "group")),
                   False),
    "ep_increments": (_schema({"corpus": _str(), "precision": _str(), "seed": _int(),
                               "batch": _int(), "free_steps": _int()}, None), False),
    "ep_pretrain": (_schema({"corpus": _str(), "precision": _str(), "seed": _int(),
                             "step": _int(), "loss": _num()},
                            ("corpus", "precision", "seed", "step")), False),
    "ep_timings": (_schema({"corpus": _str(), "precision": _str(), "seed": _int(),
                            "phase": _str(), "seconds": _num()}, None), False),
    "ep_by_seed": (_schema({"corpus": _str(), "precision": _str(), "seed": _int(),
                            "free_steps": _int(), "group": _str(), "cosine": _num(),
                            "residual": _num(), "t_best": _num(), "settled": _bool(),
                            "residual_max": _num(), "max_residual": _num(),
                            "t_best_after": _num()},
                           ("corpus", "precision", "seed", "free_steps", "group")), False),
}


# ---- writing -------------------------------------------------------------------------
def digest_path(table: str | Path) -> Path:
    """The record beside a table: summary/runs.csv -> summary/runs.csv.digest.json."""
    return Path(str(table) + DIGEST_SUFFIX)


def write(frame: pd.DataFrame, path: str | Path, kind: str,
          inputs: Iterable[str | Path] = (), **to_csv) -> None:
    """Check ``frame`` against its contract, write it as CSV (atomically) and the record
    beside it: the table's sha256 and that of every input file it was made from."""
    _validate(frame, kind, path, when="writing")
    text = frame.to_csv(index=False, **to_csv)
    atomic_write_text(path, text)
    here = digest_path(path).parent.resolve()
    record = {"table": kind, "sha256": hashlib.sha256(text.encode()).hexdigest(),
              "rows": len(frame),
              "inputs": {os.path.relpath(Path(p).resolve(), here): sha256_file(p)
                         for p in sorted(map(str, inputs))}}
    atomic_write_text(digest_path(path), json.dumps(record, indent=1, sort_keys=True) + "\n")


def recorded_inputs(table: str | Path) -> list[Path]:
    """The files a table was made from, as its record names them (relative to the
    record's folder, so that the record holds wherever the results are moved)."""
    record_path = digest_path(table)
    record = json.loads(record_path.read_text())
    return [record_path.parent / p for p in record.get("inputs", {})]


# ---- reading -------------------------------------------------------------------------
def _rerun(path) -> str:
    return f"delete it (and {digest_path(path).name}) and rerun snakemake: it is rebuilt"


def _validate(frame: pd.DataFrame, kind: str, path, when: str = "reading") -> pd.DataFrame:
    if kind not in CONTRACTS:
        raise ValueError(f"no contract for a {kind!r} table; known: {sorted(CONTRACTS)}")
    schema, _ = CONTRACTS[kind]
    if frame.empty and when == "writing":
        return frame  # an empty sweep's table is written with its header (see coverage)
    try:
        return schema.validate(frame, lazy=True)
    except (SchemaError, SchemaErrors) as err:
        cases = getattr(err, "failure_cases", None)
        what = (sorted({f"{r.column}: {r.check}" for r in cases.itertuples()})
                if cases is not None and "column" in cases else [str(err)])
        hint = _rerun(path) if when == "reading" else "this is a bug in the writer"
        raise TableError(f"{path}: not a valid {kind} table when {when} it "
                         f"({'; '.join(map(str, what[:6]))}); {hint}") from None


def read(path: str | Path, kind: str, expect: Iterable | None = None) -> pd.DataFrame:
    """A summary table, checked: its record, its contract, and (``expect``: the
    (method, λ, seed) runs the config asks for) its coverage. Raises TableError."""
    path = Path(path)
    if not path.exists():
        raise TableError(f"{path} is missing: rerun snakemake to rebuild it")
    if path.stat().st_size == 0:
        raise TableError(f"{path} is empty (0 bytes): {_rerun(path)}")
    record_path = digest_path(path)
    try:
        record = json.loads(record_path.read_text())
    except FileNotFoundError:
        raise TableError(f"{path} has no record of what it was made from ({record_path.name} "
                         f"is missing), so it cannot be checked: {_rerun(path)}") from None
    except ValueError as err:
        raise TableError(f"{record_path} is not valid JSON ({err}): {_rerun(path)}") from None
    actual = sha256_file(path)
    if actual != record.get("sha256"):
        raise TableError(f"{path} was changed after the pipeline wrote it (sha256 "
                         f"{actual[:12]}, recorded {str(record.get('sha256'))[:12]}): "
                         f"{_rerun(path)}")
    try:
        frame = pd.read_csv(path)
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as err:
        raise TableError(f"{path} is not a readable CSV table ({err}): {_rerun(path)}") from None
    if record.get("rows") is not None and len(frame) != record["rows"]:
        raise TableError(f"{path} has {len(frame)} rows, its record says {record['rows']}: "
                         f"{_rerun(path)}")
    if not frame.empty:
        frame = _validate(frame, kind, path)
    if expect is not None:
        check_coverage(frame, kind, expect, path)
    return frame


def check_coverage(frame: pd.DataFrame, kind: str, expect: Iterable, path) -> None:
    """The runs the config asks for are all in the table and no others; in the runs
    table, each once."""
    _, has_runs = CONTRACTS[kind]
    if not has_runs:
        raise ValueError(f"a {kind} table has no runs to check coverage of")
    want = {run_key(*r) for r in expect}
    if frame.empty:
        found: list[tuple] = []
    else:
        found = [run_key(m, lam, s) for m, lam, s in
                 frame[list(RUN)].itertuples(index=False, name=None)]
    have = set(found)
    missing, extra = sorted(want - have), sorted(have - want)
    problems = []
    if missing:
        problems.append(f"lacks {len(missing)} run(s) the config asks for: {_runs(missing)}")
    if extra:
        problems.append(f"has {len(extra)} run(s) the config does not ask for: {_runs(extra)}")
    if kind == "runs" and len(found) != len(have):
        twice = sorted({k for k in found if found.count(k) > 1})
        problems.append(f"has run(s) more than once: {_runs(twice)}")
    if problems:
        raise TableError(f"{path}: {'; '.join(problems)}. The table does not match the "
                         f"config's sweep: {_rerun(path)}")


def _runs(keys: list[tuple]) -> str:
    shown = ", ".join(f"{m} λ={lam} seed {s}" for m, lam, s in keys[:5])
    return shown + (f" and {len(keys) - 5} more" if len(keys) > 5 else "")


def read_optional(path, kind: str, expect: Iterable | None = None) -> pd.DataFrame | None:
    return read(path, kind, expect) if path else None


# ---- auditing ------------------------------------------------------------------------
def audit(root: str | Path) -> list[tuple[Path, str]]:
    """Every summary table under ``root`` whose bytes or inputs differ from its record:
    [(table, what differs)]. A table without a record is listed too."""
    problems = []
    root = Path(root)
    for record_path in sorted(root.rglob(f"*.csv{DIGEST_SUFFIX}")):
        table = Path(str(record_path)[: -len(DIGEST_SUFFIX)])
        try:
            record = json.loads(record_path.read_text())
        except ValueError:
            problems.append((table, "its record is not valid JSON"))
            continue
        if not table.exists():
            problems.append((table, "missing (its record is there)"))
            continue
        if sha256_file(table) != record.get("sha256"):
            problems.append((table, "edited after it was written"))
        here = record_path.parent
        changed = [p for p, digest in record.get("inputs", {}).items()
                   if not (here / p).exists() or sha256_file(here / p) != digest]
        if changed:
            problems.append((table, f"{len(changed)} of its {len(record['inputs'])} inputs "
                                    f"changed or are gone since it was written: "
                                    + ", ".join(changed[:3])
                                    + (" …" if len(changed) > 3 else "")))
    for table in sorted(root.rglob("summary/*.csv")):
        if not digest_path(table).exists():
            problems.append((table, "no record of what it was made from"))
    return problems

