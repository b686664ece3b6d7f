"""Honest file writes and reads: atomic, shareable, no NaN in JSON, no pickled code."""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any


def sanitize(obj: Any, path: str = "", flags: list | None = None) -> tuple[Any, list]:
    """Replace non-finite floats by ``None`` and list where each one was.

    JSON has no NaN/Inf; a diverged run is data, not a crash, so each
    non-finite value becomes ``null`` and a flag ``{"path", "value"}``.
    """
    flags = [] if flags is None else flags
    if isinstance(obj, float):
        if math.isfinite(obj):
            return obj, flags
        flags.append({"path": path or "$", "value": repr(obj)})
        return None, flags
    if isinstance(obj, dict):
        clean = {k: sanitize(v, f"{path}.{k}" if path else k, flags)[0] for k, v in obj.items()}
        return clean, flags
    if isinstance(obj, (list, tuple)):
        return [sanitize(v, f"{path}[{i}]", flags)[0] for i, v in enumerate(obj)], flags
    return obj, flags


def dumps(obj: Any) -> str:
    """Deterministic JSON text (sorted keys, fixed float repr, no NaN)."""
    return json.dumps(obj, indent=1, sort_keys=True, allow_nan=False) + "\n"


def sha256_file(path: str | Path) -> str:
    """The sha256 of a file's bytes, read in 1 MiB chunks (the one file hash)."""
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _umask_mode() -> int:
    """0o666 less the process umask: what open() would give a new file."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def atomic_open(path: str | Path, mode: str = "w", errors=(OSError,)):
    """The one atomic write: a file handle on a temporary file in ``path``'s folder,
    fsync'd and renamed over ``path`` when the block ends; on any error the temporary file
    is removed and the previous ``path`` (if any) is intact, so readers never see a
    half-written file and a killed job leaves none that looks complete. ``errors``: the
    exceptions raised inside the block that are the write's own (a full disk), reported
    as a WriteError naming the file; any other propagates as it is (a missing input the
    block reads names itself). The flush, fsync and rename are always the write's own."""
    path = Path(path)
    try:  # the folder, and the temporary file in it: a read-only folder is named
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as err:
        raise WriteError(_write_advice(path, err)) from err
    written = False
    try:
        os.fchmod(fd, _umask_mode())  # mkstemp makes 0600; results are meant to be shared
        with os.fdopen(fd, mode) as fh:
            try:
                yield fh
            except errors as err:
                raise WriteError(_write_advice(path, err)) from err
            written = True
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as err:
        Path(tmp).unlink(missing_ok=True)
        if written and isinstance(err, OSError) and not isinstance(err, WriteError):
            raise WriteError(_write_advice(path, err)) from err
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    """``text`` to ``path`` atomically (atomic_open)."""
    with atomic_open(path) as fh:
        fh.write(text)


class WriteError(OSError):
    """A result or checkpoint could not be written; the message names the file."""


class CorruptFileError(RuntimeError):
    """A file the pipeline wrote cannot be read back; the message names it."""


def _write_advice(path: Path, err: BaseException) -> str:
    text = str(err).splitlines()[0] if str(err) else type(err).__name__
    full = "No space left" in str(err) or "enforce fail" in str(err) or getattr(
        err, "errno", None) == 28
    denied = getattr(err, "errno", None) in (errno.EACCES, errno.EPERM, errno.EROFS)
    why = "the disk is full" if full else (
        f"its folder {path.parent} is not writable ({text})" if denied else text)
    return (f"cannot write {path}: {why}. The previous version of the file (if any) is "
            f"intact; free space or fix the folder's permissions and rerun snakemake.")
