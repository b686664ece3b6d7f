"""The record: every small result a table, figure or page reads, kept in git.

Training a study takes hours and a machine's ``results/`` lasts only as long as the
machine. The record is what outlives it (results/README.md): each run's metrics and
timings, each fresh-B null, measurement and alignment probe, each EP probe's result —
the files under results/ git does not ignore that match :data:`PATTERNS` — plus, in
:data:`paths.RECORD`, what Snakemake needs to trust them on another machine:

* ``manifests/``: copies of the data's manifests the results were made from
  (``data/<dataset>.json``, ``data/corpus/<corpus>.json``: the data's digest and its
  source's name and checksum; data/ itself is never committed), put back in data/ by
  ``restore``;
* ``metadata/``: Snakemake's own record of the job that wrote each file (its params, the
  code digest among them, its inputs, its script), copied from ``.snakemake/metadata``
  — of each of the job's outputs, the weights it does not keep included, since Snakemake
  compares a job's params only where it has a record of every output — so that a
  changed config or learning rule reruns exactly the runs it touches on a fresh clone
  too;
* ``index.json``: each file's sha256 and size, and the end time of the job that wrote it.

``save`` (after every successful ``snakemake``: the Snakefile's ``onsuccess``) writes
them; ``restore`` (a fresh clone: ``make paper-from-record``) puts Snakemake's records
back and gives the files modification times in the order of the jobs (git checks files
out in any order: an input newer than its output reruns the job); ``check`` names every
file that does not match its record. :func:`check_file` is asked by every reader of a
result (``infra.results.read_result``): a recorded file edited, truncated or replaced
outside a job is named, never silently used.

Weights are not recorded (``temp()``: rebuilt on demand; ``snakemake --notemp`` keeps
them). Neither are the data's manifests' Snakemake records: their params name the
machine's copy of the data.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from base64 import urlsafe_b64decode, urlsafe_b64encode
from pathlib import Path, PurePosixPath
from typing import Any

from credit_assign.infra import paths
from credit_assign.infra.files import atomic_write_text, dumps, sha256_file

# the files of the record, by the order of the jobs that write them: a layer's files
# are inputs of the next layer's jobs only (restore's modification times)
LAYERS: tuple[tuple[str, ...], ...] = (
    (paths.DATA_MANIFEST, paths.CORPUS_MANIFEST),
    (paths.METRICS, paths.TIMINGS, paths.EP_RESULT, paths.EP_TIMINGS, paths.EP_FIXED_POINT,
     paths.EP_FIXED_POINT_TIMINGS, paths.EP_ESTIMATOR, paths.EP_QUESTION2),
    (paths.NULL, paths.PROBE, paths.MEASURE),
)
PATTERNS = tuple(p for layer in LAYERS for p in layer)
# files whose Snakemake record is machine-specific (the path of the data's source)
NO_METADATA = (paths.DATA_MANIFEST, paths.CORPUS_MANIFEST)
SNAKEMAKE_METADATA = ".snakemake/metadata"
INDEX = f"{paths.RECORD}/index.json"
METADATA = f"{paths.RECORD}/metadata"
MANIFESTS = f"{paths.RECORD}/manifests"  # copies of the data's manifests (data/ is ignored)
# a file written this long after its job's recorded end was not written by it
SLACK_S = 5.0


class RecordError(ValueError):
    """A recorded file that does not match its record."""


_REGEXES = [(layer, paths.regex(p), p) for layer, ps in enumerate(LAYERS) for p in ps]


def pattern_of(path: str) -> tuple[int, str] | None:
    """(layer, pattern) of a record file's path (relative, posix), or None."""
    for layer, regex, pattern in _REGEXES:
        if regex.fullmatch(path):
            return layer, pattern
    return None


def _git_files(root: Path) -> list[str] | None:
    """The files under results/ and data/ that git tracks or would (not ignored), or
    None outside a git checkout."""
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others",
             "--exclude-standard", "--", "results", "data"],
            capture_output=True, check=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return [p for p in out.decode().split("\0") if p]


def manifests_of(results: list[str]) -> list[str]:
    """The data's manifests the recorded results were made from: the dataset of each
    results/<dataset>/... and the corpus of each results/ep_stack/<corpus>/...."""
    out = set()
    for path in results:
        parts = path.split("/")
        if parts[1] == "ep_stack":
            out.add(paths.fill(paths.CORPUS_MANIFEST, corpus=parts[2]))
        else:
            out.add(paths.fill(paths.DATA_MANIFEST, dataset=parts[1]))
    return sorted(out)


def files(root: str | Path = ".") -> list[str]:
    """The record's files present under ``root``: the results matching PATTERNS that git
    does not ignore (.gitignore says which datasets and corpora are recorded; outside a
    checkout, every match) and the manifests of the data they were made from (data/ is
    ignored: the record keeps their copies, MANIFESTS)."""
    root = Path(root)
    listed = _git_files(root)
    if listed is None:
        listed = [p.relative_to(root).as_posix() for p in (root / "results").rglob("*")
                  if p.is_file()] if (root / "results").is_dir() else []
    results = sorted(p for p in listed if p.split("/")[0] == "results" and pattern_of(p)
                     and (root / p).is_file())
    return sorted(results + [m for m in manifests_of(results) if (root / m).is_file()])


# ---- Snakemake's records, named as Snakemake names them (persistence/file.py)
def _longest(folder: Path) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    return os.pathconf(folder, "PC_NAME_MAX") or 255


def record_name(path: str, longest: int = 255) -> PurePosixPath:
    b64 = urlsafe_b64encode(path.encode()).decode()
    pieces = [b64[i:i + longest - 1] for i in range(0, len(b64), longest - 1)]
    return PurePosixPath(*["@" + p for p in pieces[:-1]], pieces[-1])


def record_path(name: PurePosixPath | Path) -> str | None:
    try:
        return urlsafe_b64decode("".join(p.lstrip("@") for p in name.parts)).decode()
    except ValueError:
        return None


def _metadata(root: Path, path: str) -> dict[str, Any] | None:
    folder = root / SNAKEMAKE_METADATA
    rec = folder / record_name(path, _longest(folder))
    try:
        return json.loads(rec.read_text())
    except (OSError, ValueError):
        return None


def recorded(root: str | Path = ".") -> dict[str, dict[str, Any]]:
    """The record's index: each file's sha256, size and job end time, by path ({} where
    there is no record)."""
    return _read_index(Path(root))


def _read_index(root: Path) -> dict[str, dict[str, Any]]:
    index = root / INDEX
    try:
        st = index.stat()
    except OSError:
        return {}
    return _parsed_index(str(index.resolve()), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=8)
def _parsed_index(index: str, mtime_ns: int, size: int) -> dict[str, dict[str, Any]]:
    """The index file's entries, parsed once per version of the file (every reader of a
    result asks: check_file)."""
    try:
        return json.loads(Path(index).read_text())["files"]
    except (ValueError, KeyError, TypeError) as err:
        raise RecordError(f"{INDEX}: not a record index ({err}); restore it from git "
                          "(git checkout -- results/.record) or write it again: "
                          "python -m credit_assign.infra.record save") from err


def weights_of(path: str) -> list[str]:
    """The temporary outputs of the job that wrote a record file (a training run's
    model.pt and snapshots.pt): not kept, but Snakemake's record of them is — it asks
    for a record of every output of a job before it compares the job's params, code and
    inputs with their record."""
    if pattern_of(path)[1] != paths.METRICS:
        return []
    return [str(paths.beside(path, p)) for p in (paths.MODEL, paths.SNAPSHOTS)]


# ---- the data's manifests, as the record keeps them
def manifest_text(path: Path) -> str:
    """A data manifest as the record keeps it: what it says of the data (its digest, its
    source by file name and sha256), without ``rebuild_from`` — where the machine that
    prepared it rebuilds its cache from, a path of that machine. A job finding the cache
    missing builds it from its own config's source (infra.snakejob.ensure_data)."""
    try:
        data = json.loads(path.read_text())
    except ValueError as err:
        raise RecordError(f"{path}: not a data manifest ({err}); delete it and rerun: "
                          "the data step writes it again") from None
    data.pop("rebuild_from", None)
    return dumps(data)


def _as_recorded(root: Path, meta: dict[str, Any]) -> dict[str, Any]:
    """A job's Snakemake record as the record keeps it: the checksum of a data manifest
    it read is that of the manifest as the record keeps it (manifest_text), the bytes a
    fresh clone's restore puts back."""
    sums = meta.get("input_checksums") or {}
    fixed = {f: f"sha256:{recorded_sha(f, root)}"
             if (pattern_of(f) or (0, None))[1] in NO_METADATA and (root / f).is_file()
             else v
             for f, v in sums.items()}
    return {**meta, "input_checksums": fixed} if fixed != sums else meta


def recorded_sha(path: str, root: str | Path = ".") -> str:
    """A record file's sha256 as the index holds it (a data manifest's: of
    manifest_text, without the path of the machine that prepared it)."""
    return _sha_size(Path(root), path)[0]


def _sha_size(root: Path, path: str) -> tuple[str, int]:
    """A record file's sha256 and size as the index holds them (a manifest's: of
    manifest_text)."""
    if pattern_of(path)[1] in NO_METADATA:
        text = manifest_text(root / path).encode()
        return hashlib.sha256(text).hexdigest(), len(text)
    return sha256_file(root / path), (root / path).stat().st_size


# ---- save
def save(root: str | Path = ".") -> dict[str, int]:
    """Write the index and copy Snakemake's record of every record file present (its
    job's params, code and inputs); drop the entries of files no longer there. A file
    without a finished Snakemake record (written by hand, or its job unfinished) is
    left out of the index, and named."""
    root = Path(root)
    present = files(root)
    if not present and not (root / paths.RECORD).exists():
        return {"files": 0, "unrecorded": 0}  # nothing to record: no folder is made
    meta_dir = root / METADATA
    longest = _longest(meta_dir)
    entries, kept_meta, unrecorded, changed, later = {}, set(), [], [], []
    index = _read_index(root)
    for path in present:
        _, pattern = pattern_of(path)
        meta = _metadata(root, path)
        if meta is not None and meta.get("incomplete"):
            unrecorded.append(path)
            continue
        if meta is None and pattern not in NO_METADATA:
            old = index.get(path)
            if old is None:
                unrecorded.append(path)
                continue
            if old["sha256"] != sha256_file(root / path):  # other bytes, and no job: kept
                changed.append(path)
                entries[path] = old
                kept_meta.update(record_name(p, longest) for p in [path, *weights_of(path)])
                continue
            entries[path] = old  # restored from git and unchanged: its copy stands
            kept_meta.update(record_name(p, longest) for p in [path, *weights_of(path)])
            continue
        before = index.get(path)
        if before is None and pattern not in NO_METADATA and _after_its_job(root / path, meta):
            # no entry (deleted, then saved) and bytes put back after its job ended: an
            # edited copy is never vouched for
            later.append(path)
            continue
        if (before is not None and pattern not in NO_METADATA
                and before["sha256"] != sha256_file(root / path)
                and not _rewritten_by_a_job(root / path, meta, before)):
            # other bytes, and no job wrote them since the entry: an edit, a truncation,
            # a copy; the entry stands (and names it) until a job writes the file again
            changed.append(path)
            entries[path] = before
            kept_meta.update(record_name(p, longest) for p in [path, *weights_of(path)])
            continue
        digest, size = _sha_size(root, path)
        entries[path] = {"sha256": digest, "bytes": size,
                         # a manifest's job record stays on its machine: no end time
                         "endtime": meta.get("endtime") if meta and pattern not in NO_METADATA
                         else None}
        if pattern not in NO_METADATA and meta is not None:
            for kept, kept_meta_of in [(path, meta)] + [
                    (w, _metadata(root, w)) for w in weights_of(path)]:
                if kept_meta_of is None:
                    continue
                name = record_name(kept, longest)
                kept_meta.add(name)
                text = json.dumps(_as_recorded(root, kept_meta_of), sort_keys=True,
                                  indent=0) + "\n"
                target = meta_dir / name
                if not target.is_file() or target.read_text() != text:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    atomic_write_text(target, text)
    for old in [p for p in meta_dir.rglob("*") if p.is_file()]:
        if PurePosixPath(old.relative_to(meta_dir).as_posix()) not in kept_meta:
            old.unlink()
    copies = root / MANIFESTS
    # a manifest the recorded results name but this machine never prepared (a clone that
    # ran only something else, make quick say): the record's copy and entry stand
    for path in manifests_of([p for p in entries if pattern_of(p)[1] not in NO_METADATA]):
        if path not in entries and path in index and (copies / path).is_file():
            entries[path] = index[path]
    kept_copies = set()
    for path in entries:
        if pattern_of(path)[1] in NO_METADATA:
            copy = copies / path
            kept_copies.add(copy)
            if (root / path).is_file() and (
                    not copy.is_file() or copy.read_text() != manifest_text(root / path)):
                copy.parent.mkdir(parents=True, exist_ok=True)
                atomic_write_text(copy, manifest_text(root / path))
    for old in [p for p in copies.rglob("*") if p.is_file()] if copies.is_dir() else []:
        if old not in kept_copies:
            old.unlink()
    text = json.dumps({"about": "the record: results/README.md; written by python -m "
                       "credit_assign.infra.record save", "files": entries},
                      sort_keys=True, indent=1) + "\n"
    if not (root / INDEX).is_file() or (root / INDEX).read_text() != text:
        atomic_write_text(root / INDEX, text)
    for path in unrecorded:
        print(f"record: {path} has no finished Snakemake record (written outside a job, "
              "or its job did not finish): not recorded", file=sys.stderr)
    for path in later:
        print(f"record: {path} was written after the job that made it ended (put back by "
              "hand? edited?): not recorded; delete it and rerun its job, or restore it "
              "with git checkout", file=sys.stderr)
    for path in changed:
        print(f"record: {path} is not what its job wrote and no job has written it since "
              "(edited by hand? truncated? copied?): the record keeps its entry and goes on "
              "naming it; rerun its job, or put it back with git checkout", file=sys.stderr)
    return {"files": len(entries), "unrecorded": len(unrecorded) + len(later),
            **({"changed": len(changed)} if changed else {})}


def _after_its_job(path: Path, meta: dict | None) -> bool:
    """Whether ``path`` was written after the job its Snakemake record names ended."""
    end = (meta or {}).get("endtime")
    return end is not None and not (meta or {}).get("incomplete") \
        and path.stat().st_mtime > end + SLACK_S


def _rewritten_by_a_job(path: Path, meta: dict | None, before: dict) -> bool:
    """Whether a job other than the one its index entry records wrote ``path``: its
    Snakemake record is another job's, and the file was not changed after that job
    ended."""
    end = (meta or {}).get("endtime")
    return end is not None and end != before.get("endtime") and not _after_its_job(path, meta)


# ---- restore
def restore(root: str | Path = ".", now: float | None = None) -> dict[str, int]:
    """On a fresh clone: check the record (a RecordError names every file that does
    not match), put Snakemake's records back where it has none, and give the record's
    files modification times in the order of their jobs, after every file of the
    checkout (the scripts: a script newer than a result reruns its job). Where
    Snakemake's records were all there already (a checkout in use), it changes nothing:
    every make target that runs the workflow calls it first."""
    root = Path(root)
    meta_dir, target = root / METADATA, root / SNAKEMAKE_METADATA
    records = [(rec, record_path(PurePosixPath(rec.relative_to(meta_dir).as_posix())))
               for rec in sorted(p for p in meta_dir.rglob("*") if p.is_file())]
    longest = _longest(target) if records else 255
    missing = [(rec, path) for rec, path in records if path is not None
               and not (target / record_name(path, longest)).exists()]
    copies, restored = root / MANIFESTS, 0
    if missing and copies.is_dir():  # a fresh clone: no data/, the manifests the results name
        for copy in sorted(p for p in copies.rglob("*") if p.is_file()):
            live = root / copy.relative_to(copies)
            if not live.exists():
                live.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(copy, live)
                restored += 1
    problems = check(root)
    if problems:
        raise RecordError("the record does not match its files; nothing restored:\n  "
                          + "\n  ".join(problems))
    copied = 0
    for rec, path in missing:
        dest = target / record_name(path, longest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(rec, dest)
        copied += 1
    index = _read_index(root)
    if not copied and not restored:  # a checkout in use, not a fresh clone
        return {"files": 0, "metadata": 0}
    now = time.time() if now is None else now
    for path in index:
        if (root / path).is_file():
            layer, _ = pattern_of(path)
            t = now + layer
            os.utime(root / path, (t, t))
    return {"files": len(index), "metadata": copied}


def restore_if_fresh(root: str | Path = ".") -> dict[str, int] | None:
    """restore, where it has something to do: a record file without Snakemake's record of
    its job here (a fresh clone, a deleted .snakemake/). None, and nothing read, where
    every record is there (a checkout in use). The Snakefile calls it before the DAG is
    built, so the bare ``snakemake`` on a fresh clone reads the record as its jobs wrote
    it and plans no training; a record file that does not match is a RecordError."""
    root = Path(root)
    meta_dir, target = root / METADATA, root / SNAKEMAKE_METADATA
    if not meta_dir.is_dir():
        return None
    longest = _longest(target) if target.is_dir() else 255
    for rec in (p for p in meta_dir.rglob("*") if p.is_file()):
        path = record_path(PurePosixPath(rec.relative_to(meta_dir).as_posix()))
        if path is not None and not (target / record_name(path, longest)).exists():
            return restore(root)
    return None


# ---- check
def _check_one(root: Path, path: str, entry: dict[str, Any]) -> str | None:
    f = root / path
    manifest = pattern_of(path)[1] in NO_METADATA
    if manifest and (not f.is_file() or (_metadata(root, path) or {}).get("incomplete") is False):
        # deleted to prepare the data again, or prepared again by its job here: a change
        # of data, which reruns what reads it (the record follows at the next save)
        return None
    if not f.is_file():
        return f"{path}: in the record ({INDEX}) but missing; restore it with git " \
               f"(git checkout -- {path}) or delete its entry: python -m " \
               "credit_assign.infra.record save"
    if manifest:  # as the record keeps it, or as an index of before that kept its bytes
        if _sha_size(root, path) == (entry["sha256"], entry["bytes"]) or (
                f.stat().st_size == entry["bytes"] and sha256_file(f) == entry["sha256"]):
            return None
    elif f.stat().st_size == entry["bytes"] and sha256_file(f) == entry["sha256"]:
        return None
    meta = _metadata(root, path)
    if meta is not None and entry.get("endtime") is not None and \
            meta.get("endtime") not in (None, entry["endtime"]) and not meta.get("incomplete"):
        # a job rewrote it since the record was saved (a rerun): the record is behind
        return None if not _after_its_job(f, meta) else (
            f"{path}: changed after the job that wrote it last ended (edited, truncated "
            "or replaced by hand); delete it and rerun")
    return (f"{path}: does not match the record ({INDEX}: sha256 "
            f"{entry['sha256'][:12]}…, {entry['bytes']} bytes): edited, truncated or "
            "replaced since its job wrote it; restore it with git (git checkout -- "
            f"{path}), or delete it and rerun the job that writes it")


def _run_config(meta: dict | None) -> dict | None:
    """The run config a training job was given (its ``run`` param, as Snakemake's
    record writes it: a Python literal), or None."""
    import ast

    for param in (meta or {}).get("params") or []:
        if isinstance(param, str) and param.startswith("{'dataset'"):
            try:
                return ast.literal_eval(param)
            except (ValueError, SyntaxError):
                return None
    return None


def _config_problem(root: Path, path: str) -> str | None:
    """A training result whose recorded config is not the one its job was given (a file
    from another run or config put in its place), named."""
    if pattern_of(path)[1] != paths.METRICS:
        return None
    given = _run_config(_metadata(root, path))
    if given is None:
        return None
    try:
        ran = json.loads((root / path).read_text())["config"]
    except (OSError, ValueError, KeyError, TypeError):
        return None  # unreadable: named by the index, or by its reader's schema check
    differ = sorted(k for k, v in given.items() if json.loads(json.dumps(v)) != ran.get(k))
    if differ:
        return (f"{path}: made by a run of another config than its job's ({', '.join(differ)} "
                "differ from Snakemake's record of the job): a file of another run in its "
                "place; delete it and rerun")
    return None


def check(root: str | Path = ".") -> list[str]:
    """Every record file that does not match the record, named with what to do; every
    training result whose config is not its job's; and every record file that names
    this machine's absolute paths."""
    root = Path(root)
    problems = []
    index = _read_index(root)
    for path, entry in sorted(index.items()):
        if (problem := _check_one(root, path, entry)) is not None:
            problems.append(problem)
        elif (problem := _config_problem(root, path)) is not None:
            problems.append(problem)
    where = str(root.resolve())
    for path in index:
        f = root / path
        if f.is_file() and where in f.read_text(errors="replace"):
            problems.append(f"{path}: names this machine's folder {where}: a committed "
                            "result carries no absolute path")
    return problems


def check_file(path: str | Path) -> None:
    """Raise a RecordError naming ``path`` when it is a record file (relative to the
    working folder, as Snakemake's jobs name their inputs) that does not match the
    record: what every reader of a result asks before it uses it."""
    root = Path.cwd()
    p = Path(path)
    try:
        rel = (p.resolve().relative_to(root.resolve()) if p.is_absolute() else p).as_posix()
    except ValueError:
        return
    if pattern_of(rel) is None or not (root / INDEX).is_file():
        return
    entry = _read_index(root).get(rel)
    if entry is not None and (problem := _check_one(root, rel, entry)) is not None:
        raise RecordError(problem)
    if entry is None and pattern_of(rel)[1] not in NO_METADATA and (root / rel).is_file() \
            and _after_its_job(root / rel, _metadata(root, rel)):
        raise RecordError(f"{rel}: not in the record ({INDEX}) and written after the job "
                          "that made it ended (put back by hand? edited?); delete it and "
                          "rerun its job, or restore it with git checkout")
    if (problem := _config_problem(root, rel)) is not None:
        raise RecordError(problem)


# ---- take: another checkout's finished runs
def _data_of(manifest: Path) -> dict[str, Any]:
    """What a data manifest says of the data, less where this machine rebuilds it from
    (``rebuild_from``: a local path, the same data from another copy)."""
    data = json.loads(manifest.read_text())
    data.pop("rebuild_from", None)
    return data


def take(other: str | Path, root: str | Path = ".") -> dict[str, Any]:
    """Bring the record files another checkout of this repository made (a clean worktree
    that ran a pre-registered study while this one was being edited; a second machine's
    clone) into this one: each file of ``other``'s record that this checkout lacks, with
    Snakemake's record of its job (copied into ``.snakemake/metadata``, as the job had run
    here), then ``save`` here. Nothing moves where anything is wrong, and each problem is
    named: ``other``'s record does not match its files (checked before its save, so a
    file edited there is caught), a file it saves now was changed after its job ended or
    has no job record, a file both checkouts hold with different bytes (but a rerun
    there: unedited here, its job there ended after the one recorded here, from the same
    code commit or a later one, its data the same: taken and listed as ``rerun``; the
    reverse, a later rerun here of theirs, is kept and listed as ``kept``), a data
    manifest
    the runs were made from that differs here, or a file this checkout has an unfinished
    job for (``.snakemake/incomplete``). The same bytes are left as they are. Returns the
    paths taken."""
    root, other = Path(root), Path(other)
    if not (other / paths.RECORD).is_dir() and not files(other):
        raise RecordError(f"{other}: no record and no record files: nothing to take")
    problems = check(other)  # before its save: an edited file there is named, not saved
    before = _read_index(other)
    save(other)
    theirs = {p: e for p, e in _read_index(other).items()
              if pattern_of(p)[1] not in NO_METADATA}
    for path, entry in theirs.items():
        meta = _metadata(other, path)
        if entry != before.get(path) and (
                meta is None or meta.get("endtime") is None
                or (other / path).stat().st_mtime > meta["endtime"] + SLACK_S):
            problems.append(f"{other / path}: changed after the job that wrote it ended, or "
                            "written outside a job")
    missing = [p for p in theirs if not (root / p).is_file()]
    # a file both hold with other bytes, unedited here (its bytes are its index entry's):
    # a rerun there when its job there ended after the one recorded here (a model rebuilt
    # for a null, newer code): taken; the reverse, a later rerun here from the same or a
    # later commit (the other checkout was cut before it was recorded): kept here
    ours = _read_index(root)
    both = {p: sha256_file(root / p) for p in theirs if (root / p).is_file()}
    unedited = [p for p, h in both.items()
                if h != theirs[p]["sha256"] and h == (ours.get(p) or {}).get("sha256")]
    rerun = [p for p in unedited
             if (ours[p].get("endtime") or 0) < (theirs[p].get("endtime") or 0)]
    newer_here = [p for p in unedited
                  if (ours[p].get("endtime") or 0) > (theirs[p].get("endtime") or 0)
                  and _follows(root, _commit_of(other / p), _commit_of(root / p))]
    their_longest = _longest(other / METADATA)
    for path in missing:
        if not (other / METADATA / record_name(path, their_longest)).is_file():
            problems.append(f"{other / path}: no record of its job in {other / METADATA}")
        if (root / ".snakemake" / "incomplete" / record_name(path)).exists():
            problems.append(f"{path}: this checkout has an unfinished job for it "
                            "(.snakemake/incomplete): finish or clean it up first")
    problems += [f"{path}: differs between the two checkouts and is no later rerun there "
                 "(edited here, or made here after it was made there): delete one side's "
                 "file, or rerun its job" for path, e in theirs.items()
                 if path not in rerun and path not in newer_here and path in both
                 and both[path] != e["sha256"]]
    for path in rerun:
        if (root / ".snakemake" / "incomplete" / record_name(path)).exists():
            problems.append(f"{path}: this checkout has an unfinished job for it "
                            "(.snakemake/incomplete): finish or clean it up first")
        mine, there = _commit_of(root / path), _commit_of(other / path)
        if not _follows(root, mine, there):
            problems.append(f"{path}: its rerun there was made from commit {there or '?'}, "
                            f"which does not follow this file's {mine or '?'}: not taken "
                            "over a result of newer (or other) code; delete one side's file")
    for path in manifests_of(missing + rerun):
        copy = other / MANIFESTS / path
        if (root / path).is_file() and copy.is_file() and \
                _data_of(root / path) != _data_of(copy):
            problems.append(f"{path}: the data the runs were made from differs from this "
                            "checkout's (its manifest)")
    if problems:
        raise RecordError("nothing taken:\n  " + "\n  ".join(problems))
    target = root / SNAKEMAKE_METADATA
    longest = _longest(target)
    for path in sorted(missing + rerun):
        for kept in [path, *weights_of(path)]:
            meta = other / METADATA / record_name(kept, their_longest)
            if meta.is_file():
                dest = target / record_name(kept, longest)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(meta, dest)
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(other / path, root / path)  # its time too: written by that job
    for path in manifests_of(missing):  # the data the runs were made from, if missing here
        copy = other / MANIFESTS / path
        if not (root / path).exists() and copy.is_file():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(copy, root / path)
    save(root)
    return {"taken": sorted(missing), "rerun": sorted(rerun), "kept": sorted(newer_here)}


def _commit_of(path: Path) -> str | None:
    """The code commit a result file records (its provenance's git_commit), or None."""
    try:
        todo = [json.loads(path.read_text(encoding="utf-8"))]
    except (OSError, ValueError):
        return None
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            if isinstance(node.get("git_commit"), str):
                return node["git_commit"]
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    return None


def _follows(root: Path, older: str | None, newer: str | None) -> bool:
    """Whether a result of commit ``newer`` was made from the same code as one of
    ``older``, or from a later commit (both unknown: the same)."""
    return older == newer or bool(older and newer and _is_ancestor(root, older, newer))


def _is_ancestor(root: Path, older: str, newer: str) -> bool:
    """Whether commit ``older`` is ``newer`` or one of its ancestors, in ``root``'s git."""
    try:
        return subprocess.run(["git", "-C", str(root), "merge-base", "--is-ancestor", older,
                               newer], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def size(root: str | Path = ".") -> dict[str, Any]:
    """What the record holds: files and bytes on disk (results, data's manifests, the
    index and Snakemake's records)."""
    root = Path(root)
    every = files(root) + [p.relative_to(root).as_posix()
                           for p in (root / paths.RECORD).rglob("*") if p.is_file()]
    return {"files": len(every), "bytes": sum((root / p).stat().st_size for p in every)}


def main(argv: list[str]) -> int:
    usage = ("usage: python -m credit_assign.infra.record {save|restore|check|size|take OTHER}"
             "  (from the repository root; results/README.md)")
    if not ((len(argv) == 1 and argv[0] in ("save", "restore", "check", "size"))
            or (len(argv) == 2 and argv[0] == "take")):
        print(usage, file=sys.stderr)
        return 2
    try:
        if argv[0] == "take":
            found = take(argv[1])
            for path in found["taken"]:
                print(f"record: took {path}")
            for path in found["rerun"]:
                print(f"record: took {path} (its job rerun there after the one here)")
            print(f"record: {len(found['taken'])} files taken from {argv[1]}, "
                  f"{len(found['rerun'])} replaced by a later rerun there, "
                  f"{len(found['kept'])} kept here (a later rerun of theirs)")
        elif argv[0] == "save":
            print("record: {files} files saved, {unrecorded} not recorded".format(**save()))
        elif argv[0] == "restore":
            print("record: {files} files restored in job order, {metadata} Snakemake "
                  "records put back".format(**restore()))
        elif argv[0] == "size":
            print("record: {files} files, {bytes} bytes".format(**size()))
        else:
            problems = check()
            for p in problems:
                print(p, file=sys.stderr)
            print(f"record: {len(_read_index(Path('.')))} files, {len(problems)} problems")
            return 1 if problems else 0
    except RecordError as err:
        print(err, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
