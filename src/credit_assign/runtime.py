"""Process-level concerns: threads, device, provenance, atomic and honest file writes."""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import platform
import socket
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
)


def set_threads(n: int) -> None:
    """Make this process use exactly ``n`` CPU threads (OpenMP, MKL, torch).

    Sets the thread variables (read when torch loads its OpenMP runtime) and,
    if torch is already imported, its intra- and inter-op pools. Two jobs that
    each spin more threads than their share of cores slow each other down
    several-fold (docs/performance.md), so every job obeys its rule's ``threads``.
    """
    if n < 1:
        raise ValueError(f"threads must be >= 1, got {n}")
    for var in THREAD_VARIABLES:
        os.environ[var] = str(n)
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        torch.set_num_threads(n)
        try:
            torch.set_num_interop_threads(n)
        except RuntimeError:  # only settable before the first parallel work; harmless
            pass


def adamw(params, lr: float, weight_decay: float):
    """``torch.optim.AdamW`` with the fused kernel where torch has one (CPU and CUDA
    float tensors): one vectorised pass over every parameter instead of a Python loop
    of about ten tensor ops per parameter — on the paper model 7.3 → 2.7 ms per step,
    where the loop was a third of a BP step's time (docs/performance.md). Same update,
    other rounding."""
    import torch

    params = list(params)  # tensors, or param groups (dicts with "params")
    tensors = [t for p in params for t in (p["params"] if isinstance(p, dict) else [p])]
    fused = all(p.device.type in ("cpu", "cuda") and p.is_floating_point() for p in tensors)
    return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, fused=fused or None)


def resolve_device(name: str = "auto", cpu_fallback: bool = False):
    """``auto`` → CUDA when available, else CPU; otherwise the named device. With
    ``cpu_fallback`` (jobs that only evaluate a saved model: the null, the probes), a
    CUDA device on a node without one falls back to the CPU with a warning instead of
    failing: on a cluster those jobs may land on a CPU node."""
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        if cpu_fallback:
            logging.getLogger(__name__).warning(
                "device %r requested but this node has no CUDA device; evaluating on the "
                "CPU (the saved model is loaded there)", name)
            return torch.device("cpu")
        raise RuntimeError(f"device {name!r} requested but CUDA is not available")
    return device


def code_version(root: Path | None = None) -> dict[str, Any]:
    """Git commit of the code (and whether the tree had local changes), when known."""
    root = root or Path(__file__).resolve().parents[2]
    out: dict[str, Any] = {"package": _package_version(), "git_commit": None, "git_dirty": None,
                           "library_sha256": library_digest()}
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout.strip()
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout
        out["git_commit"] = commit
        out["git_dirty"] = bool(status.strip())
    except (OSError, subprocess.SubprocessError):
        pass
    return out


def _package_version() -> str:
    from credit_assign import __version__

    return __version__


def provenance(device=None, threads: int | None = None) -> dict[str, Any]:
    """What a result was made with: code, packages, device, threads. Deterministic
    for a given checkout and machine, so identical runs write identical files."""
    import numpy
    import torch

    packages = {"python": platform.python_version(), "torch": torch.__version__,
                "numpy": numpy.__version__}
    for dist in ("snakemake", "pandas", "scikit-learn", "pillow"):
        try:
            packages[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            packages[dist] = None
    dev = {"type": "cpu", "name": platform.processor() or platform.machine()}
    if device is not None and device.type == "cuda":
        dev = {"type": "cuda", "name": torch.cuda.get_device_name(device)}
    return {
        "code": code_version(),
        "packages": packages,
        "device": dev,
        "threads": threads if threads is not None else torch.get_num_threads(),
        "platform": platform.platform(),
    }


def run_record() -> dict[str, Any]:
    """Where and when a job ran: differs between identical runs, so it is kept out
    of the deterministic result files (training writes it to timings.json)."""
    import time

    return {"host": socket.gethostname(), "argv": sys.argv, "pid": os.getpid(),
            "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}


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


def _umask_mode() -> int:
    """0o666 less the process umask: what open() would give a new file."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write via a temporary file in the same folder, then rename: readers never
    see a half-written file, and a killed job leaves no file that looks complete."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, _umask_mode())  # mkstemp makes 0600; results are meant to be shared
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as err:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(err, OSError):
            raise WriteError(_write_advice(path, err)) from err
        raise


def atomic_torch_save(obj: Any, path: str | Path) -> None:
    """torch.save via a temporary file, fsync'd, then renamed over ``path``: the last
    good file stays intact when the write fails (a full disk says so, naming the file)."""
    import torch

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.fchmod(fd, _umask_mode())
    try:
        with os.fdopen(fd, "wb") as fh:
            torch.save(obj, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as err:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(err, (OSError, RuntimeError)):
            raise WriteError(_write_advice(path, err)) from err
        raise


class WriteError(OSError):
    """A result or checkpoint could not be written; the message names the file."""


class CorruptFileError(RuntimeError):
    """A file the pipeline wrote cannot be read back; the message names it."""


def _write_advice(path: Path, err: BaseException) -> str:
    text = str(err).splitlines()[0] if str(err) else type(err).__name__
    full = "No space left" in str(err) or "enforce fail" in str(err) or getattr(
        err, "errno", None) == 28
    why = "the disk is full" if full else text
    return (f"cannot write {path}: {why}. The previous version of the file (if any) is "
            f"intact; free space or fix the folder's permissions and rerun snakemake.")


def load_checkpoint(path: str | Path, what: str, map_location=None) -> Any:
    """``torch.load(path, weights_only=True)``: tensors and plain containers only, never
    pickled code. A missing or damaged file raises an error naming it and what to do."""
    import torch

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{what} {path} is missing: rerun snakemake, which "
                                f"rebuilds it")
    try:
        return torch.load(path, weights_only=True, map_location=map_location)
    except Exception as err:  # truncated zip, foreign pickle, wrong format, ...
        first = (str(err).splitlines() or [type(err).__name__])[0][:200]
        raise CorruptFileError(
            f"cannot read {what} {path} ({type(err).__name__}: {first}). It is damaged "
            f"(a killed write, a full disk) or was not written by this pipeline. Delete it "
            f"and rerun snakemake: the job that writes it reruns.") from err


def load_resume(path: str | Path | None, expected: dict[str, Any], map_location=None,
                logger=None) -> dict | None:
    """The resume state at ``path`` if it was written with exactly ``expected`` (config,
    code, ...: the ``"written_for"`` entry of the state); else None. A state that cannot be
    read or was written for anything else is moved aside to ``<name>.rejected`` with a
    warning naming it, so the job starts afresh instead of failing on every retry."""
    log = logger or logging.getLogger(__name__)
    if not path:
        return None
    path = Path(path)
    if not path.exists():
        return None
    try:
        state = load_checkpoint(path, "resume state", map_location)
        written_for = state.get("written_for") if isinstance(state, dict) else None
        if written_for != expected:
            differs = sorted(k for k in expected
                             if not isinstance(written_for, dict)
                             or written_for.get(k) != expected[k])
            reason = f"written for another {', '.join(differs) or 'format'}"
        else:
            return state
    except CorruptFileError as err:
        reason = f"unreadable ({err.__cause__.__class__.__name__})"
    _set_aside(path, reason, log)
    return None


def _set_aside(path: Path, reason: str, log) -> None:
    """Move a resume state the job cannot use to ``<name>.rejected``, saying why, so the
    job starts afresh instead of failing on every retry."""
    aside = path.with_name(path.name + ".rejected")
    os.replace(path, aside)
    log.warning("not resuming from %s: %s; moved it to %s and starting afresh", path, reason,
                aside)


class ResumeState:
    """A job's resume file, one mechanism for every resumable job (training, the EP stack
    probe): saved atomically after each unit of work with the ``written_for`` record
    (config, code, ...), read back only when written for exactly this job, set aside
    when it cannot be restored, removed when the job is done. ``path = None``: no
    resume file (nothing is saved or read)."""

    def __init__(self, path: str | Path | None, written_for: dict[str, Any], logger=None):
        self.path = Path(path) if path else None
        self.written_for = written_for
        self.log = logger or logging.getLogger(__name__)

    def load(self, map_location=None) -> dict | None:
        return load_resume(self.path, self.written_for, map_location, self.log)

    def save(self, state: dict[str, Any]) -> None:
        if self.path:
            atomic_torch_save({"written_for": self.written_for, **state}, self.path)

    def reject(self, err: Exception) -> None:
        """A state that loaded but cannot be restored: move it aside, say why."""
        _set_aside(self.path, f"it cannot be restored ({type(err).__name__}: {err})", self.log)

    def done(self) -> None:
        if self.path:
            self.path.unlink(missing_ok=True)


def library_digest() -> str:
    """sha256 over the library's own source files (names and bytes): the code version of
    a result, whether or not the code is in a git checkout or committed."""
    digest = hashlib.sha256()
    root = Path(__file__).resolve().parent
    for f in sorted(root.rglob("*.py")):
        digest.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes() + b"\0")
    return digest.hexdigest()


def dumps(obj: Any) -> str:
    """Deterministic JSON text (sorted keys, fixed float repr, no NaN)."""
    return json.dumps(obj, indent=1, sort_keys=True, allow_nan=False) + "\n"


def _job_paths(smk) -> list[str]:
    """The files a job writes: its outputs and its resume state (params.resume)."""
    paths = [str(p) for p in getattr(smk, "output", [])]
    resume = getattr(getattr(smk, "params", None), "resume", None)
    if isinstance(resume, str):
        paths.append(resume)
    return paths


class job:
    """Context for a Snakemake ``script:`` job: log to the rule's log file, use
    exactly the rule's threads, and record a failure in the log before re-raising.

        with job(snakemake) as threads:
            ...
    """

    def __init__(self, smk):
        self.smk = smk
        self.attempt = int(getattr(smk, "attempt", 1) or 1)
        log_path = smk.log[0] if len(smk.log) else None
        self.log_path = Path(log_path) if log_path else None

    def __enter__(self) -> int:
        handlers = [logging.StreamHandler()]
        if self.log_path:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            # a retry appends: every attempt of the job stays readable in one log
            handlers.append(logging.FileHandler(self.log_path,
                                                mode="a" if self.attempt > 1 else "w"))
        logging.basicConfig(level=logging.WARNING, handlers=handlers, force=True,
                            format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        logging.getLogger("credit_assign").setLevel(logging.INFO)
        if self.attempt > 1:
            logging.getLogger("credit_assign").warning("---- attempt %d of this job ----",
                                                       self.attempt)
        # temporary files a killed attempt left beside this job's outputs (our atomic
        # writes name them .<output>.<random>.tmp); nothing else writes them
        for out in _job_paths(self.smk):
            for tmp in Path(out).parent.glob(f".{Path(out).name}.*.tmp"):
                tmp.unlink(missing_ok=True)
                logging.getLogger("credit_assign").warning(
                    "removed %s, left by a killed write", tmp)
        set_threads(int(self.smk.threads))
        return int(self.smk.threads)

    def __exit__(self, exc_type, exc, tb):
        failures = self.log_path.with_name(self.log_path.name + ".failures") \
            if self.log_path else None
        if exc is None:
            if failures:
                failures.unlink(missing_ok=True)
            return False
        log = logging.getLogger("credit_assign")
        log.error("job failed (attempt %d)", self.attempt, exc_info=(exc_type, exc, tb))
        if failures:
            # a failure that repeats exactly is not a pre-emption: say that retrying
            # (the cluster profiles' `retries`) cannot help
            this = f"{exc_type.__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            before = failures.read_text().splitlines() if failures.exists() else []
            if before and before[-1] == this:
                log.error("attempt %d failed exactly as the one before (%s): this failure "
                          "does not go away by retrying; fix its cause (above) and rerun",
                          self.attempt, this)
            with open(failures, "a") as fh:
                fh.write(this + "\n")
        return False


def describe_source(path: str | Path) -> str:
    """A data source as results and docs record it: the file name and its sha256 (a
    folder: its name), never the path of the machine that read it."""
    path = Path(path).expanduser()
    if path.is_dir():
        return f"{path.name}/ (image folder)"
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return f"{path.name} (sha256 {digest.hexdigest()})"
