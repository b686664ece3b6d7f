"""What was fixed when, read from git and the result files (findings, as data): the
commit that wrote a file or a line first, whether it touched anything else, and
whether a result's code already held it. The pages word these facts through
templates; outside a git checkout every fact is None and the pages say so.
"""

from __future__ import annotations

import json
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd


def git(root: str | Path, *args: str) -> str | None:
    """``git -C root args`` → its stdout, or None (no git, not a checkout, a failure)."""
    try:
        out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                             timeout=30, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout


def first_commit(root: str | Path, path: str, pickaxe: str | None = None) -> dict | None:
    """The oldest commit that added ``path`` (or, with ``pickaxe``, the oldest that
    added that string to it): its hash, its commit time and every file it touched."""
    args = ["log", "--reverse", "--format=%H %cI"]
    args += [f"-S{pickaxe}"] if pickaxe else ["--diff-filter=A"]
    out = git(root, *args, "--", path)
    if not out or not out.strip():
        return None
    commit, time = out.splitlines()[0].split(" ", 1)
    files = (git(root, "show", "--name-only", "--format=", commit) or "").split()
    return {"commit": commit, "short": commit[:7], "time": time, "files": sorted(files),
            "alone": files == [path]}


def commits_touching(root: str | Path, path: str) -> list[dict]:
    """Every commit that changed ``path``, oldest first."""
    out = git(root, "log", "--reverse", "--format=%H %cI", "--", path) or ""
    rows = [line.split(" ", 1) for line in out.splitlines() if line.strip()]
    return [{"commit": c, "short": c[:7], "time": t} for c, t in rows]


def is_ancestor(root: str | Path, older: str, newer: str) -> bool | None:
    """Whether commit ``older`` is in ``newer``'s history (None: git cannot say)."""
    try:
        done = subprocess.run(["git", "-C", str(root), "merge-base", "--is-ancestor",
                               older, newer], capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return {0: True, 1: False}.get(done.returncode)


def order(root: str | Path, spec_path: str, results: pd.DataFrame) -> dict:
    """Was the claims file committed, alone, before every result it judges? ``results``:
    one row per result with its ``git_commit`` and ``finished_at``. The check is the
    code: each result's commit must hold the claims file's first commit (a clock can be
    wrong; history cannot be reordered without changing every later hash)."""
    spec_path = repo_relative(root, spec_path)
    spec = first_commit(root, spec_path)
    later = commits_touching(root, spec_path)[1:]
    finished = results.finished_at.dropna().astype(str)
    commits = sorted(set(results.git_commit.dropna().astype(str)))
    held = ({c: is_ancestor(root, spec["commit"], c) for c in commits} if spec else {})
    return {
        "spec": spec, "amended": later,
        "results": int(len(results)),
        "first_result": utc(min(finished, key=utc)) if len(finished) else None,
        "last_result": utc(max(finished, key=utc)) if len(finished) else None,
        "result_commits": [c[:7] for c in commits],
        "without_commit": int(results.git_commit.isna().sum()),
        "all_after": bool(held) and all(held.values()) and not results.git_commit.isna().any(),
        "not_after": [c[:7] for c, ok in held.items() if not ok],
        "working_differs": bool(spec) and differs_from(root, spec_path, spec["commit"]),
    }


def repo_relative(root: str | Path, path: str | Path) -> str:
    """``path`` as git names it: relative to the checkout ``root`` (an absolute path
    inside it, as a run from another folder passes it), else as given."""
    try:
        return str(Path(path).resolve().relative_to(Path(root).resolve()))
    except ValueError:
        return str(path)


def differs_from(root: str | Path, path: str, commit: str) -> bool:
    """Whether the file read now differs from its bytes at ``commit`` (an uncommitted
    edit, or a later commit): git's blob hashes compared."""
    now = git(root, "hash-object", "--", path)
    then = git(root, "rev-parse", f"{commit}:{path}")
    return bool(now and then) and now.strip() != then.strip()


def utc(stamp: str | None) -> str | None:
    """A git or a result's time as one spelling, in UTC: 2026-12-01 17:51 UTC (so that
    two times compare as strings)."""
    if not stamp:
        return None
    when = datetime.strptime(stamp.replace("Z", "+0000"), "%Y-%m-%dT%H:%M:%S%z")
    return when.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def record_first(root: str | Path, path: str) -> str | None:
    """The earliest ``finished_at`` among the jobs a rebuild record lists
    (docs/rebuild_estimate.json)."""
    try:
        jobs = json.loads((Path(root) / path).read_text(encoding="utf-8"))["jobs"]
    except (OSError, ValueError, KeyError):
        return None
    times = [j["finished_at"] for j in jobs if j.get("finished_at")]
    return min(times, key=utc) if times else None


def events(root: str | Path, spec: list[dict]) -> list[dict]:
    """Each event of config/history.yaml with what git or the record says of it:
    ``commit`` (short hash, git events), ``time`` (UTC), ``found`` (False where neither
    git nor the record has it: a checkout without history, a missing record)."""
    out = []
    for event in spec:
        if "record" in event:
            stamp, commit = record_first(root, event["record"]), None
        else:
            found = first_commit(root, event["file"], event.get("added"))
            stamp, commit = (found["time"], found["short"]) if found else (None, None)
        out.append({**event, "commit": commit, "time": utc(stamp), "found": stamp is not None})
    return out


def read_events(root: str | Path, history_path: str | Path) -> list[dict]:
    """:func:`events` over the events a history file (config/history.yaml) names."""
    import yaml

    spec = yaml.safe_load(Path(history_path).read_text(encoding="utf-8"))["events"]
    return events(root, spec)
