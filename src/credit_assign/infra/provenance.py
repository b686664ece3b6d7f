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
    """The files of the checkout at ``root`` whose changes are not committed — tracked
    and changed, or new and not ignored: the code a job would run differs from its
    commit — but the record's (results/, data/: each run changes them). Raises
    OSError / SubprocessError where git cannot say (no git, not a checkout)."""
    status = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=normal", "--",
         ".", *(f":(exclude){p}" for p in NOT_CODE)],
        capture_output=True, text=True, timeout=10, check=True).stdout
    return [line[3:] for line in status.splitlines() if line.strip()]


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
