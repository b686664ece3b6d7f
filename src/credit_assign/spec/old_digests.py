"""Job records from before code digests were taken over meaning (issue #58).

A computing job's ``code`` param was the sha256 over its files' bytes; it is now over
what they say (spec.code.file_digest: a comment or a docstring changes nothing). This
rewrites, in the record's job records (results/.record/metadata) and Snakemake's
(.snakemake/metadata), each old digest that is the digest of today's files into today's
digest: a job made by today's code stays current, and any other keeps its old digest,
so it stays stale. Run once after the change, and again after ``record take`` from a
checkout older than it:

    python -m credit_assign.spec.old_digests

Delete this module once no checkout older than the change is taken into the record.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from credit_assign.infra import record


def _bytes_digest(files: tuple[str, ...]) -> str:
    """A job's code param as it was written before: over each file's bytes."""
    from credit_assign.spec import code

    lines = "".join(f"{f} {hashlib.sha256((code.PACKAGE / f).read_bytes()).hexdigest()}\n"
                    for f in files)
    return hashlib.sha256(lines.encode()).hexdigest()


def renamed() -> dict[str, str]:
    """Each computing job's old code param (over bytes) → its param today, for today's
    files: every step with no method, with each rule's, and the alignment probes' set."""
    from credit_assign.spec import catalog, code

    rules = catalog.load()
    probed = tuple(m for m, r in rules.items() if r["probed"])
    out = {}
    for step in code.ENTRY:
        for methods in ((), probed, *((m,) for m in rules)):
            files = code.files(step, methods, rules)
            out[_bytes_digest(files)] = code.digest(step, methods)
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
