"""Move results written in the layout before every recipe had a folder of its own:
``python -m credit_assign.migrations.layout`` lists the moves, ``--apply`` makes them.

Before, the stated recipe's results were ``results/<dataset>/{train,summary,...}`` and a
recipe variant's ``results/<dataset>@<variant>/...``; now each recipe has its folder,
``results/<dataset>/<recipe>/...`` (paths.RECIPE; the stated recipe's is
paths.DEFAULT_RECIPE). A move is a rename: every file keeps its bytes and its time stamp.
What names a moved file follows it:

- each summary table's record (``<table>.csv.digest.json``: its inputs, relative to its
  folder), so that ``analysis.stale`` still finds every table made from its inputs;
- Snakemake's record of each moved output (``.snakemake/metadata``, and an
  ``.snakemake/incomplete`` marker), under the new path, with the paths it holds and
  the two keys renamed with the recipe folders (a run's ``rule`` options, now
  ``options``; the probes' ``rules``, now ``methods``): so that the workflow reruns no
  job for a moved result, and still reruns one whose config changes later.

The logs stay where they are (no job reads them). Stdlib only.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from base64 import urlsafe_b64decode, urlsafe_b64encode
from pathlib import Path, PurePosixPath

from credit_assign.infra import paths

_DEPTH = len(PurePosixPath(paths.RECIPE).parts)  # results/{dataset}/{recipe}
# what a recipe's folder holds: the folders the old layout had under results/<dataset>/
RECIPE_FOLDERS = tuple(dict.fromkeys(
    PurePosixPath(p).parts[_DEPTH]
    for p in (paths.RUN_DIR, paths.NULL, paths.PROBE, paths.MEASURE, paths.SUMMARY,
              paths.CLAIMS)))
# folders of results/ that are no dataset's: the EP stack probe's, the primer check's
NOT_DATASETS = frozenset(PurePosixPath(p).parts[1] for p in (paths.EP_RESULT,
                                                             paths.PRIMER_CHECK))
RESULTS = PurePosixPath(paths.RECIPE).parts[0]
# Snakemake's records of a file (snakemake.persistence.file: the path's urlsafe base64,
# cut into pieces one shorter than the folder's longest file name, all but the last
# prefixed with "@")
SNAKEMAKE_RECORDS = (".snakemake/metadata", ".snakemake/incomplete")
# keys a job's params held before: (the step, the old key, the new one)
RENAMED_PARAMS = (("train", "'rule': {", "'options': {"),
                  ("alignment_probe", "'rules': {", "'methods': {"))


class LayoutError(Exception):
    """A move that would overwrite a file of the new layout, or two moves to one place."""


def moves(root: str | Path = ".") -> list[tuple[Path, Path]]:
    """Every (old folder, new folder) to move under ``root``: each recipe folder
    (RECIPE_FOLDERS) directly under ``results/<dataset>`` or ``results/<dataset>@<v>``.
    None for results already in the new layout (no recipe is named as one of these
    folders: the config's schema refuses it)."""
    root = Path(root)
    results = root / RESULTS
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


def _moved(path: Path, planned: list[tuple[Path, Path]]) -> Path:
    """Where ``path`` (absolute, or relative as the moves are) is after the moves."""
    for old, new in planned:
        if path == old or old in path.parents:
            return new / path.relative_to(old)
    return path


def _digests(root: Path, planned) -> dict[Path, str]:
    """Each table record under results/ whose inputs move (or that moves itself, its
    inputs then relative to another folder): its path after the moves → its new text."""
    out = {}
    for record in sorted((root / RESULTS).rglob(f"*{paths.DIGEST_SUFFIX}")):
        data = json.loads(record.read_text())
        new_record = _moved(record, planned)
        inputs = {os.path.relpath(_moved(Path(os.path.normpath(record.parent / name)), planned),
                                  new_record.parent): digest
                  for name, digest in data.get("inputs", {}).items()}
        if inputs != data.get("inputs", {}):
            out[new_record] = json.dumps({**data, "inputs": inputs}, indent=1,
                                         sort_keys=True) + "\n"
    return out


def _longest_name(folder: Path) -> int:
    return (os.pathconf(folder, "PC_NAME_MAX") if os.name == "posix" else 255) or 255


def _record_name(longest: int, path: str) -> PurePosixPath:
    b64 = urlsafe_b64encode(path.encode()).decode()
    pieces = [b64[i:i + longest - 1] for i in range(0, len(b64), longest - 1)]
    return PurePosixPath(*["@" + p for p in pieces[:-1]], pieces[-1])


def _record_path(name: Path) -> str | None:
    try:
        return urlsafe_b64decode("".join(p.lstrip("@") for p in name.parts)).decode()
    except ValueError:
        return None


def _snakemake_records(root: Path, planned) -> list[tuple[Path, Path, str | None]]:
    """Snakemake's record of each moved file, and each record that names one (a job's
    inputs): (old record, new record, its new text, or None for an incomplete marker,
    whose text is moved as it is)."""
    relative = [(PurePosixPath(old.relative_to(root).as_posix()),
                 PurePosixPath(new.relative_to(root).as_posix())) for old, new in planned]
    rel = [(a.as_posix(), b.as_posix()) for a, b in relative]
    out = []
    for subject in SNAKEMAKE_RECORDS:
        folder = root / subject
        if not folder.is_dir():
            continue
        longest = _longest_name(folder)
        for record in sorted(p for p in folder.rglob("*") if p.is_file()):
            path = _record_path(record.relative_to(folder))
            if path is None:
                continue
            new_path = _moved(PurePosixPath(path), relative).as_posix()
            text = None
            if subject.endswith("metadata"):
                old_text = text = record.read_text()
                for a, b in rel:
                    text = text.replace(f"{a}/", f"{b}/")
                if new_path == path and text == old_text:
                    continue
                meta = json.loads(text)
                for step, before, after in RENAMED_PARAMS:
                    if meta.get("rule") == step and isinstance(meta.get("params"), list):
                        meta["params"] = [p.replace(before, after) if isinstance(p, str)
                                          else p for p in meta["params"]]
                text = json.dumps(meta)
            elif new_path == path:
                continue
            out.append((record, folder / _record_name(longest, new_path), text))
    return out


def apply(root: str | Path, planned: list[tuple[Path, Path]]) -> None:
    """Make the moves, each a rename, and rewrite what names a moved file (the tables'
    records, Snakemake's records). Refused before any move where one would land on a
    folder that exists, or two on one folder (both named)."""
    root = Path(root)
    targets = [new for _, new in planned]
    clashes = [f"{old} -> {new}" for old, new in planned
               if new.exists() or targets.count(new) > 1]
    if clashes:
        raise LayoutError("these moves would land on a folder that exists or on one "
                          "folder twice; move or delete one of each by hand, then rerun: "
                          + "; ".join(clashes))
    digests = _digests(root, planned)
    records = _snakemake_records(root, planned)
    for old, new in planned:
        new.parent.mkdir(parents=True, exist_ok=True)
        old.rename(new)
    for record, text in digests.items():
        _rewrite(record, text)
    for old, new, text in records:
        new.parent.mkdir(parents=True, exist_ok=True)
        if new != old:
            old.rename(new)
        if text is not None:
            _rewrite(new, text)
    for old, _ in planned:  # an old dataset@variant folder left empty goes
        top = old.parent
        if top.is_dir() and "@" in top.name and not any(top.iterdir()):
            top.rmdir()


def _rewrite(path: Path, text: str) -> None:
    """New text, the file's time stamps kept (Snakemake compares them)."""
    stat = path.stat()
    path.write_text(text)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m credit_assign.migrations.layout",
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
        apply(args.root, planned)
    except LayoutError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"moved {len(planned)} folders; `snakemake -n` lists what still needs a job")
    return 0


if __name__ == "__main__":
    sys.exit(main())
