"""The process's share of the machine: exactly its rule's threads, and its device."""

from __future__ import annotations

import logging
import os
import sys

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
