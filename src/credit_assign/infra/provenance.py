"""What a result was made with: the code version, the host; a data source's name and
checksum (torch-free; infra.device.provenance adds torch's: packages, device, threads)."""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from credit_assign.infra.files import sha256_file


def code_version(root: Path | None = None) -> dict[str, Any]:
    """Git commit of the code (and whether the tree had local changes), when known."""
    root = root or Path(__file__).resolve().parents[3]
    out: dict[str, Any] = {"package": _package_version(), "git_commit": None, "git_dirty": None,
                           "library_sha256": library_digest()}
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout.strip()
        out["git_commit"] = commit
        out["git_dirty"] = bool(uncommitted(root))
    except (OSError, subprocess.SubprocessError):
        pass
    return out


# what is data, not code: the record (results/README.md) changes with every run
NOT_CODE = ("results", "data")


def uncommitted(root: str | Path) -> list[str]:
    """The files of the checkout at ``root`` that differ from its HEAD commit — a tracked
    file whose bytes are not HEAD's, one HEAD has and the checkout lacks, a new file the
    committed .gitignore files do not ignore — but the record's (results/, data/: each run
    changes them). Compared against HEAD's tree, not git status, so nothing git is told to
    overlook (``update-index --assume-unchanged``, ``.git/info/exclude``) hides code a
    job would run. Raises OSError / SubprocessError where git cannot say."""
    def git(*args: str) -> bytes:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True,
                              timeout=30, check=True).stdout

    top = Path(git("rev-parse", "--show-toplevel").decode().strip())
    here = Path(root).resolve().relative_to(top.resolve()).as_posix()
    prefix = "" if here == "." else f"{here}/"
    head = {}  # path -> (mode, blob)
    for entry in git("ls-tree", "-r", "-z", "--full-tree", "HEAD").split(b"\0"):
        if entry:
            meta, path = entry.decode().split("\t", 1)
            mode, kind, blob = meta.split()
            if path.startswith(prefix) and kind == "blob":
                head[path[len(prefix):]] = (mode, blob)
    changed = []
    for path, (mode, blob) in head.items():
        if path.split("/")[0] in NOT_CODE:
            continue
        file = Path(root) / path
        if mode == "120000":  # a symlink: its target is its content
            data = os.readlink(file).encode() if file.is_symlink() else None
        else:
            data = file.read_bytes() if file.is_file() and not file.is_symlink() else None
        if data is None or hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() != blob \
                or (mode == "100755") != (mode != "120000" and os.access(file, os.X_OK)):
            changed.append(path)
    # every file git lists that HEAD lacks: staged (in the index) or new and not ignored
    listed = git("ls-files", "-z", "--cached", "--others",
                 "--exclude-per-directory=.gitignore").split(b"\0")
    changed += [p for p in (x.decode() for x in listed if x)
                if p not in head and p.split("/")[0] not in NOT_CODE]
    return sorted(set(changed))


def _package_version() -> str:
    from credit_assign import __version__

    return __version__


def run_record() -> dict[str, Any]:
    """Where and when a job ran: differs between identical runs, so it is kept out
    of the deterministic result files (training writes it to timings.json)."""
    import time

    # the command relative to the working folder: a result kept in the record (git)
    # carries no absolute path of the machine that made it
    argv = [os.path.relpath(a) if os.path.isabs(a) else a for a in sys.argv]
    return {"host": socket.gethostname(), "argv": argv, "pid": os.getpid(),
            "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}


def library_digest() -> str:
    """sha256 over the library's own source files (names and bytes): the code version of
    a result, whether or not the code is in a git checkout or committed."""
    digest = hashlib.sha256()
    root = Path(__file__).resolve().parents[1]  # the credit_assign package
    for f in sorted(root.rglob("*.py")):
        digest.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes() + b"\0")
    return digest.hexdigest()


def describe_source(path: str | Path) -> str:
    """A data source as results and docs record it: the file name and its sha256 (a
    folder: its name), never the path of the machine that read it."""
    path = Path(path).expanduser()
    if path.is_dir():
        return f"{path.name}/ (image folder)"
    return f"{path.name} (sha256 {sha256_file(path)})"


def package_dir() -> Path:
    """The folder of the credit_assign package this process imported."""
    return Path(__file__).resolve().parents[1]


def check_checkout(where: str | Path = ".") -> None:
    """Refuse to report on or write into one checkout with another's code: the nearest
    folder at or above ``where`` that holds a checkout's package (src/credit_assign/)
    must be the package this process imported (two clones sharing one environment: an
    editable install points at the first). RuntimeError naming both; nothing to check
    outside a checkout."""
    here = Path(where).resolve()
    for folder in (here, *here.parents):
        local = folder / "src" / "credit_assign"
        if (local / "__init__.py").is_file():
            if local.resolve() != package_dir():
                raise RuntimeError(
                    f"this checkout's package is {local}, but Python imported "
                    f"{package_dir()} (another checkout: an editable install of it, or "
                    f"PYTHONPATH); run with PYTHONPATH={folder / 'src'} or install this "
                    "checkout")
            return
