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

from credit_assign.infra import paths
from credit_assign.migrations.claims_findings import LEGACY


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
    added that string to it), following the file across renames (a module moved keeps
    its history): its hash, its commit time and every file it touched."""
    args = ["log", "--follow", "--format=%H %cI"]  # newest first: --follow ignores --reverse
    args += [f"-S{pickaxe}"] if pickaxe else ["--diff-filter=A"]
    out = git(root, *args, "--", path)
    if not out or not out.strip():
        return None
    commit, time = out.strip().splitlines()[-1].split(" ", 1)
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


READER = "workflow/rules/claims.smk"  # the code that reads the claims file (its target)


def order(root: str | Path, spec_path: str, results: pd.DataFrame,
          reader_path: str = READER) -> dict:
    """What git and the results say of the order of the claims file, the code that reads
    it (``reader_path``) and the results it judges — facts, for the page to state.
    ``results``: one row per
    result (aggregate.provenance_table: its kind, ``git_commit``, ``git_dirty``,
    ``finished_at``). A result's code holds the claims file when its commit descends
    from the file's first commit (a clock can be wrong; history cannot be reordered
    without changing every later hash); a result made from a tree with uncommitted
    changes (``git_dirty``) ran code that no commit holds, so its commit proves nothing
    of the code it ran. ``all_after`` holds only when every result's commit holds the
    claims file and the code that reads it, none was made from a dirty tree, and every
    one recorded both; ``shown``: :func:`shown`."""
    spec_path = repo_relative(root, spec_path)
    spec = first_commit(root, spec_path)
    reader = first_commit(root, reader_path)
    later = commits_touching(root, spec_path)[1:]
    finished = results.finished_at.dropna().astype(str)
    commits = sorted(set(results.git_commit.dropna().astype(str)))
    held = ({c: is_ancestor(root, spec["commit"], c) for c in commits} if spec else {})
    read = ({c: is_ancestor(root, reader["commit"], c) for c in commits} if reader else {})
    dirty = results.git_dirty if "git_dirty" in results else pd.Series(
        [None] * len(results), dtype=object)
    kinds = results["kind"] if "kind" in results else pd.Series(["train"] * len(results))
    by_kind = {k: {"results": int((kinds == k).sum()),
                   "dirty": int((dirty[kinds == k] == True).sum()),  # noqa: E712
                   "dirty_unknown": int(dirty[kinds == k].isna().sum())}
               for k in dict.fromkeys(kinds)}
    first = utc(min(finished, key=utc)) if len(finished) else None
    n_dirty = sum(v["dirty"] for v in by_kind.values())
    unknown = sum(v["dirty_unknown"] for v in by_kind.values())
    facts = {
        "spec": spec, "amended": later, "reader": reader,
        "results": int(len(results)), "by_kind": by_kind,
        "first_result": first,
        "last_result": utc(max(finished, key=utc)) if len(finished) else None,
        "reader_after_first_result": bool(reader and first and utc(reader["time"]) > first),
        "result_commits": [c[:7] for c in commits],
        "without_commit": int(results.git_commit.isna().sum()),
        "dirty": n_dirty, "dirty_unknown": unknown,
        "all_after": bool(held) and all(held.values()) and bool(read)
        and all(read.values()) and not results.git_commit.isna().any()
        and n_dirty == 0 and unknown == 0,
        "not_after": [c[:7] for c, ok in held.items() if not ok],
        "reader_not_held": [c[:7] for c, ok in read.items() if not ok],
        "working_differs": bool(spec) and differs_from(root, spec_path, spec["commit"]),
    }
    facts["shown"] = shown(facts)
    return facts


def reader_facts(root: str | Path, reader: dict | None, commits: list[str],
                 first_result: str | None) -> dict:
    """Of results that record ``commits`` and whose first finished at ``first_result``:
    whether that was before the code that reads the claims (``reader``, first_commit)
    was committed, and which of the commits lack that code."""
    return {"reader_after_first_result": bool(reader and first_result
                                              and utc(reader["time"]) > first_result),
            "reader_not_held": [c for c in commits if reader
                                and not is_ancestor(root, reader["commit"], c)]}


def shown(order: dict) -> bool:
    """Whether :func:`order`'s facts show the order: the file first committed alone and
    not changed since, the file read the one committed, and every result's commit
    holding it and the code that reads it, from a committed tree (``all_after``)."""
    spec = order.get("spec") or {}
    return bool(spec.get("alone") and order.get("all_after") and not order.get("amended")
                and not order.get("working_differs"))


def first_publication(root: str | Path, name: str) -> tuple[dict, dict] | None:
    """The commit that first published section ``name``'s findings ({commit, short,
    time}) and those findings as published then: in the group's own file of before one
    findings file where it had one (migrations.claims_findings.LEGACY: the claims'), else in
    the one findings file (paths.PUBLISHED_FINDINGS, the first version holding the
    section; for the study, a version without sections counts only from then on). None
    without one."""
    if legacy := LEGACY.get(name):
        first = first_commit(root, legacy)
        text = first and git(root, "show", f"{first['commit']}:{legacy}")
        if text:
            return {k: first[k] for k in ("commit", "short", "time")}, json.loads(text)
    for commit in commits_touching(root, paths.PUBLISHED_FINDINGS):
        text = git(root, "show", f"{commit['commit']}:{paths.PUBLISHED_FINDINGS}")
        whole = json.loads(text) if text else {}
        if "about" in whole and name in whole:
            return commit, whole[name]
    return None


def earlier_runs(root: str | Path, by_seed: list[dict], now: dict) -> dict | None:
    """When the claims' findings were first published from runs that finished before
    the first result judged now (``now``: :func:`order` of today's results), those
    numbers were seen before today's runs were made: what that first publication
    recorded of its fresh-seed results (their number, times and commits: it kept no
    more), whether the first of them finished before the code that reads the claims was
    committed and which of their commits lack that code, and how many of its per-seed
    effects ``by_seed`` gives back exactly, per seed set (the same key: claim, part,
    seed, seed set). None without such a publication."""
    found = first_publication(root, "claims")
    if found is None:
        return None
    first, old = found
    was = old.get("order") or {}
    if not (was.get("first_result") and now.get("first_result")
            and was["first_result"] < now["first_result"]):
        return None

    def key(r):
        return r["claim"], r.get("part") or "", int(r["seed"]), r["seed_set"]

    def same(a, b):  # a diverged effect is None in JSON and NaN before it
        return a == b or all(x is None or x != x for x in (a, b))

    then = {key(r): r["effect"] for r in old.get("by_seed", [])}
    today = {key(r): r["effect"] for r in by_seed}
    common = sorted(then.keys() & today.keys())
    commits = was.get("result_commits", [])
    by_set, differ = {}, []
    for k in common:
        counts = by_set.setdefault(k[3], {"equal": 0, "compared": 0})
        counts["compared"] += 1
        if same(then[k], today[k]):
            counts["equal"] += 1
        else:
            claim, part, seed, seed_set = k
            differ.append(f"{claim} {part} seed {seed} ({seed_set})".replace("  ", " "))
    equal = len(common) - len(differ)
    return {"published": {"short": first["short"], "time": utc(first["time"])},
            "results": was.get("results"), "first_result": was["first_result"],
            "last_result": was.get("last_result"), "result_commits": commits,
            **reader_facts(root, now.get("reader"), commits, was["first_result"]),
            "effects": len(then), "compared": len(common), "equal": equal,
            "all_equal": equal == len(common) == len(then) == len(today),
            "by_set": by_set, "differ": differ}


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
    (bench/rebuild_estimate.json)."""
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
