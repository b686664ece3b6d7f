"""List the results that other library code made.

Snakemake reruns a job when its config (params), its script or its inputs change, but
not when the library in ``src/credit_assign`` changes: a docstring or a plotting fix
must not retrain every model. Instead every result records the sha256 of the library
that wrote it (``provenance.code.library_sha256``), and this command lists the
results whose library differs from the one installed now:

    python -m credit_assign.analysis.stale               # results/ under the current folder
    python -m credit_assign.analysis.stale results/digits --rerun   # print the snakemake command

It also lists the summary tables (``summary/*.csv``) that no longer match what they were
made from: edited after they were written, or made from result files that have changed
or gone since (each table's record, ``<table>.csv.digest.json``, holds the sha256 of the
table and of its inputs; credit_assign.analysis.tables).

Exit status 0 when every result and table is current, 1 when some are not (a CI step can
require a fresh tree). A resumed job never mixes code versions: its resume state is
tied to the library digest too (``infra.resume.load_resume``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from credit_assign.analysis.tables import audit
from credit_assign.infra.provenance import check_checkout, library_digest


def scan(root: Path, current: str | None = None) -> tuple[list[Path], list[tuple[Path, str]]]:
    """(current results, [(other result, its library digest or 'unknown')])."""
    current = current or library_digest()
    fresh, stale = [], []
    for path in sorted(root.rglob("*.json")):
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            stale.append((path, "unreadable"))
            continue
        code = (doc.get("provenance") or {}).get("code") if isinstance(doc, dict) else None
        if code is None:
            continue  # not a result file (timings, table records, ...)
        digest = code.get("library_sha256") or "unknown"
        (fresh.append(path) if digest == current else stale.append((path, digest)))
    return fresh, stale


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", nargs="?", default="results", type=Path)
    ap.add_argument("--rerun", action="store_true",
                    help="print a snakemake command that rebuilds the listed results")
    args = ap.parse_args(argv)
    try:  # the library digest must be this checkout's, not another's on sys.path
        check_checkout(args.root)
    except RuntimeError as err:
        print(f"stale: {err}", file=sys.stderr)
        return 2
    if not args.root.is_dir():
        print(f"{args.root} is not a folder of results", file=sys.stderr)
        return 2
    current = library_digest()
    fresh, stale = scan(args.root, current)
    print(f"library sha256 now: {current[:12]}; {len(fresh)} results current, "
          f"{len(stale)} made by other code")
    for path, digest in stale:
        print(f"  {path}  (library {digest[:12]})")
    tables = audit(args.root)
    print(f"{len(tables)} summary table(s) that do not match what they were made from")
    for path, why in tables:
        print(f"  {path}  ({why})")
    targets = [str(p) for p, _ in stale] + sorted({str(p) for p, _ in tables})
    if targets and args.rerun:
        print("rebuild them (and, on the next plain run, what depends on them) with:\n"
              "  snakemake --cores N --force " + " ".join(targets))
    return 1 if stale or tables else 0


def run(argv=None) -> int:
    """main(), quiet when its reader stops early (``stale | head``): a closed pipe ends
    the listing, not a traceback."""
    try:
        code = main(argv)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        # Python's recipe: point stdout at devnull so the interpreter's final flush
        # does not raise again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(run())
