"""The process's torch device, and what a result records of the machine it ran on that
only torch knows (its version, the CUDA device's name, its thread pool). Imports torch;
its torch-free neighbours, infra.hardware (threads) and infra.provenance (code version,
host, data sources), are what every script: job imports, the torch-free ones too
(aggregation, figures), and an import-linter contract keeps them so.
"""

from __future__ import annotations

import logging
import platform
from importlib import metadata
from typing import Any

import torch

from credit_assign.infra.provenance import code_version


def resolve_device(name: str = "auto", cpu_fallback: bool = False) -> torch.device:
    """``auto`` → CUDA when available, else CPU; otherwise the named device. With
    ``cpu_fallback`` (jobs that only evaluate a saved model: the null, the probes), a
    CUDA device on a node without one falls back to the CPU with a warning instead of
    failing: on a cluster those jobs may land on a CPU node."""
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


def provenance(device=None, threads: int | None = None,
               code: dict[str, Any] | None = None) -> dict[str, Any]:
    """What a result was made with: code (``code``: the version read when the job
    started, infra.provenance.code_version; by default, now), packages, device, threads.
    Deterministic for a given checkout and machine, so identical runs write identical
    files. Here and not in infra.provenance because the packages, the device and the
    threads are torch's (infra.provenance stays torch-free)."""
    import numpy

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
        "code": code if code is not None else code_version(),
        "packages": packages,
        "device": dev,
        "threads": threads if threads is not None else torch.get_num_threads(),
        "platform": platform.platform(),
    }
