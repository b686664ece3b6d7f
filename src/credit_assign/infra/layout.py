"""Move results written in the layout before every recipe had a folder of its own:
``python -m credit_assign.infra.layout`` lists the moves, ``--apply`` makes them.

Before, the stated recipe's results were ``results/<dataset>/{train,summary,...}`` and a
recipe variant's ``results/<dataset>@<variant>/...``; now each recipe has its folder,
``results/<dataset>/<recipe>/...`` (paths.RECIPE; the stated recipe's is
paths.DEFAULT_RECIPE). A move is a rename: every file keeps its bytes and its time stamp,
so that the workflow finds the moved results up to date and reruns no job for them. The
logs stay where they are (no job reads them). Stdlib only.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path, PurePosixPath

from credit_assign.infra import paths

# what a recipe's folder holds: the folders the old layout had under results/<dataset>/
_DEPTH = len(PurePosixPath(paths.RECIPE).parts)  # results/{dataset}/{recipe}
RECIPE_FOLDERS = tuple(dict.fromkeys(
    PurePosixPath(p).parts[_DEPTH]
    for p in (paths.RUN_DIR, paths.NULL, paths.PROBE, paths.MEASURE, paths.SUMMARY,
              paths.CLAIMS)))
# folders of results/ that are no dataset's: the EP stack probe's, the primer check's
NOT_DATASETS = frozenset(PurePosixPath(p).parts[1] for p in (paths.EP_RESULT,
                                                             paths.PRIMER_CHECK))


class LayoutError(Exception):
    """A move that would overwrite a file of the new layout."""


def moves(root: str | Path = ".") -> list[tuple[Path, Path]]:
    """Every (old folder, new folder) to move under ``root``: each recipe folder
    (RECIPE_FOLDERS) directly under ``results/<dataset>`` or ``results/<dataset>@<v>``.
    None for results already in the new layout."""
    root = Path(root)
    results = root / PurePosixPath(paths.RECIPE).parts[0]
    out = []
    for top in sorted(results.iterdir()) if results.is_dir() else []:
        if not top.is_dir() or top.name in NOT_DATASETS:
            continue
        dataset, at, variant = top.name.partition("@")
        recipe = variant if at else paths.DEFAULT_RECIPE
        new_top = root / paths.fill(paths.RECIPE, dataset=dataset, recipe=recipe)
        out += [(top / name, new_top / name) for name in RECIPE_FOLDERS
                if (top / name).is_dir()]
    return out


def apply(planned: list[tuple[Path, Path]]) -> None:
    """Make the moves, each a rename; refused before any move where one would land on a
    folder that exists (both named)."""
    clashes = [f"{old} -> {new}" for old, new in planned if new.exists()]
    if clashes:
        raise LayoutError("these folders exist in both layouts; move or delete one of each "
                          "pair by hand, then rerun: " + "; ".join(clashes))
    for old, new in planned:
        new.parent.mkdir(parents=True, exist_ok=True)
        old.rename(new)
    for old, _ in planned:  # an old dataset@variant folder left empty goes
        top = old.parent
        if top.is_dir() and "@" in top.name and not any(top.iterdir()):
            top.rmdir()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m credit_assign.infra.layout",
        description="Move results/<dataset>[@<variant>]/... to results/<dataset>/<recipe>/... "
                    "(lists the moves; --apply makes them).")
    parser.add_argument("root", nargs="?", default=".", help="the checkout (default: .)")
    parser.add_argument("--apply", action="store_true", help="make the moves")
    args = parser.parse_args(argv)
    planned = moves(args.root)
    if not planned:
        print("nothing to move: no results in the old layout")
        return 0
    for old, new in planned:
        print(f"{old} -> {new}")
    if not args.apply:
        print(f"{len(planned)} folders to move; rerun with --apply to move them")
        return 0
    try:
        apply(planned)
    except LayoutError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"moved {len(planned)} folders; `snakemake -n` lists what still needs a job")
    return 0


if __name__ == "__main__":
    sys.exit(main())
