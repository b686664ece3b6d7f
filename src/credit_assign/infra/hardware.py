"""The process's share of the machine: exactly its step's threads (torch-free: its device
is infra.device's)."""

from __future__ import annotations

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
    several-fold (docs/performance.md), so every job obeys its step's ``threads``.
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
