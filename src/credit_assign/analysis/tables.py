"""Summary tables as data with a contract: written with a record of what they were made
from, and checked whenever a figure, the paper or the notes read them.

Every summary table (``results/<dataset>/<recipe>/summary/*.csv``,
``results/ep_stack/summary/*.csv``) is written by :func:`write`, which checks the frame
against its contract and puts a record beside it (``<table>.csv.digest.json``: the
table's sha256, and the sha256 of each file it was made from). :func:`read` is the only
way the reporting code reads one:

* a missing, empty, truncated or unparsable table, one whose columns or dtypes break its
  contract (a pandera schema), or whose bytes differ from its record (edited by hand), is
  a :class:`TableError` that names the file and says what to do — before any figure or
  table is written from it;
* with ``expect``, its coverage is checked too: the (method, λ, seed) runs the config
  asks for are all there, and no other (each once in a one-row-per-run table).

:func:`audit` (``python -m credit_assign.analysis.stale``) lists the tables whose inputs changed
after they were written. Pure pandas and pandera: no torch.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

import pandas as pd
from pandera.errors import SchemaError, SchemaErrors

from credit_assign.analysis.table_contracts import CONTRACTS, RUN, TableError
from credit_assign.infra import paths
from credit_assign.infra.files import atomic_write_text, sha256_file
from credit_assign.planning.matrix import run_key, same_lam

DIGEST_SUFFIX = paths.DIGEST_SUFFIX


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
        raise TableError(_invalid(err, frame, kind, path, when)) from None


def _invalid(err, frame: pd.DataFrame, kind: str, path, when: str) -> str:
    """What a table's contract refused: each check once (a check of the whole frame is
    reported once per column: named once here), with the rows it refused named by their
    result file (``path``) or run; writing, the fault is in those results."""
    cases = getattr(err, "failure_cases", None)
    hint = _rerun(path) if when == "reading" else (
        "the results named hold what the table refuses: check them (a hand edit? a run "
        "that diverged unrecorded?) and rerun their jobs")
    if cases is None or "check" not in cases:
        return f"{path}: not a valid {kind} table when {when} it ({err}); {hint}"
    columns = cases.groupby(cases["check"].astype(str))["column"].nunique()
    checks: dict[str, set] = {}
    for r in cases.itertuples():
        whole = columns[str(r.check)] > 1 or not isinstance(r.column, str)
        key = str(r.check) if whole else f"{r.column}: {r.check}"
        index = getattr(r, "index", None)
        checks.setdefault(key, set()).update([index] if pd.notna(index) else [])
    ident = [c for c in ("path", "recipe", "method", "lam", "seed") if c in frame]

    def name(i):
        if i not in frame.index or not ident:
            return f"row {i}"
        row = frame.loc[i]
        return str(row["path"]) if "path" in ident else " ".join(
            f"{c}={row[c]}" for c in ident)

    what = [f"{check}" + (f" (in {', '.join(name(i) for i in sorted(rows)[:4])}"
                          f"{' …' if len(rows) > 4 else ''})" if rows else "")
            for check, rows in sorted(checks.items())]
    return (f"{path}: not a valid {kind} table when {when} it "
            f"({'; '.join(what[:6])}); {hint}")


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
    expect = list(expect)
    want = {run_key(*r) for r in expect}
    asked: dict[str, list[float]] = {}
    for m, lam, _ in expect:
        asked.setdefault(str(m), []).append(float(lam))

    def key(method, lam, seed) -> tuple[str, str, int]:
        # λ matched by the one equality (a table written with "%.6g" still holds 1/3),
        # then spelled as the config's
        same = [x for x in asked.get(str(method), ()) if same_lam(lam, x)]
        return run_key(method, same[0] if same else lam, seed)

    if frame.empty:
        found: list[tuple] = []
    else:
        found = [key(m, lam, s) for m, lam, s in
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

