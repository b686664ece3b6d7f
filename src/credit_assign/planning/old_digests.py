"""Job records from before two changes of issue #58, brought up to date.

1. Code digests taken over meaning. A computing job's ``code`` param was the sha256
   over its files' bytes; it is now over what they say (planning.code.file_digest: a
   comment or a docstring changes nothing).
2. Two packages renamed: credit_assign.spec is credit_assign.planning, and
   credit_assign.science.rules is credit_assign.science.learning_rules. A module that
   imports one says the new name (and sorts its imports anew), so its digest changed,
   though what it computes did not (tests/test_code_digest.py compares every computing
   file with its text at the commit before the rename, BEFORE_RENAME).

This rewrites, in the record's job records (results/.record/metadata) and Snakemake's
(.snakemake/metadata), each old digest of today's files — over their bytes (1), or over
their meaning at BEFORE_RENAME, read from git's history (2) — into today's digest: a
job made by today's code stays current, and any other keeps its old digest, so it stays
stale. Run once after a change, and again after ``record take`` from a checkout older
than it:

    python -m credit_assign.planning.old_digests

Delete (1) once no checkout older than the changes is taken into the record; (2)'s
reading of a file at its old path also serves analysis.stale.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sys
from pathlib import Path

from credit_assign.infra import record


def _bytes_digest(files: tuple[str, ...]) -> str:
    """A job's code param as it was written before: over each file's bytes."""
    from credit_assign.planning import code

    lines = "".join(f"{f} {hashlib.sha256((code.PACKAGE / f).read_bytes()).hexdigest()}\n"
                    for f in files)
    return hashlib.sha256(lines.encode()).hexdigest()


# (2): the last commit before the rename, and each new path, then the one it had
BEFORE_RENAME = "d4d256bf042eb620bc2a3728b61deba0c99222da"
RENAMED = (("science/learning_rules/", "science/rules/"), ("planning/", "spec/"))


def old_path(relpath: str) -> str:
    """A package file's path before the rename (2)."""
    for new, before in RENAMED:
        if relpath.startswith(new):
            return before + relpath.removeprefix(new)
    return relpath


# the new names written back as the old, in a module's text (a path in a message too)
RENAMED_NAMES = (("credit_assign.planning", "credit_assign.spec"),
                 ("credit_assign.science.learning_rules", "credit_assign.science.rules"),
                 ("science/learning_rules/", "science/rules/"))


def same_as_before_rename(then: str, now: str, name: str = "<source>") -> bool:
    """Whether a module says ``now`` what it said ``then``, before the rename (2): its
    new names written back as the old, each run of import statements in one order (an
    import sorted anew changes nothing it computes)."""
    import ast

    from credit_assign.planning.catalog import meaning

    def unordered(source: str) -> bytes:
        tree = ast.parse(source, name)
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body:
                out, run = [], []
                for stmt in [*body, None]:
                    if isinstance(stmt, ast.Import | ast.ImportFrom):
                        run.append(stmt)
                        continue
                    out += sorted(run, key=ast.dump)
                    run = []
                    if stmt is not None:
                        out.append(stmt)
                node.body = out
        return meaning(ast.unparse(tree), name)

    for new, old in RENAMED_NAMES:
        now = now.replace(new, old)
    return unordered(then) == unordered(now)


@functools.cache
def before_rename(relpath: str) -> str | None:
    """A package file's text at BEFORE_RENAME (None without git's history of it)."""
    import subprocess

    from credit_assign.planning import code

    out = subprocess.run(["git", "-C", str(code.ROOT), "show",
                          f"{BEFORE_RENAME}:src/credit_assign/{old_path(relpath)}"],
                         capture_output=True, text=True)
    return out.stdout if out.returncode == 0 else None


def _old_line(relpath: str) -> str | None:
    """A file's line of a code param at BEFORE_RENAME (its old path and the digest of
    what it said then); None where git's history of it is not here, or where it says
    today what it did not say then (an edit since)."""
    from credit_assign.planning import code
    from credit_assign.planning.catalog import meaning

    text = before_rename(relpath)
    if text is None or not same_as_before_rename(
            text, (code.PACKAGE / relpath).read_text(encoding="utf-8"), relpath):
        return None
    old = old_path(relpath)
    return f"{old} {hashlib.sha256(meaning(text, old)).hexdigest()}\n"


def _before_rename(files: tuple[str, ...], memo: dict | None = None) -> str | None:
    """A job's code param as its files were at BEFORE_RENAME (2); None where one file's
    line is (_old_line: no history, or an edit since: the jobs made before it are not
    today's). ``memo``: each file's line, shared by the steps that read it."""
    memo = {} if memo is None else memo
    lines = []  # sorted by the old paths, as the digest then sorted them
    for f in files:
        if f not in memo:
            memo[f] = _old_line(f)
        if memo[f] is None:
            return None
        lines.append(memo[f])
    return hashlib.sha256("".join(sorted(lines)).encode()).hexdigest()


def renamed() -> dict[str, str]:
    """Each computing job's old code param (over bytes, or over meaning before the
    rename) → its param today, for today's files: every step with no method, with each
    rule's, and the alignment probes' set. Every file of a computing step is a Python
    module (planning.code.ENTRY and what they import)."""
    from credit_assign.planning import catalog, code

    rules = catalog.load()
    probed = tuple(m for m, r in rules.items() if r["probed"])
    out, memo = {}, {}
    for step in code.ENTRY:
        for methods in ((), probed, *((m,) for m in rules)):
            files = code.files(step, methods, rules)
            today = code.digest(step, methods)
            out[_bytes_digest(files)] = today
            if (before := _before_rename(files, memo)) not in (None, today):
                out[before] = today
    return out


def migrate(root: str | Path = ".") -> dict[str, int]:
    """Rewrite the old code params of today's code in the job records under ``root``;
    returns how many records were rewritten and how many read."""
    root = Path(root)
    swap = {json.dumps(repr(old)): json.dumps(repr(new)) for old, new in renamed().items()}
    counts = {"read": 0, "rewritten": 0}
    for folder in (root / record.METADATA, root / record.SNAKEMAKE_METADATA):
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            text = new = path.read_text()
            counts["read"] += 1
            for old_param, new_param in swap.items():  # the params' JSON, as written
                new = new.replace(old_param, new_param)
            if new != text:
                path.write_text(new)
                counts["rewritten"] += 1
    return counts


if __name__ == "__main__":
    print(migrate(sys.argv[1] if len(sys.argv) > 1 else "."))
