"""Checkpoints (torch): written atomically, read back with ``weights_only=True`` — tensors
and plain containers, never pickled code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from credit_assign.infra.files import CorruptFileError, atomic_open


def atomic_torch_save(obj: Any, path: str | Path) -> None:
    """torch.save through files.atomic_open: the last good file stays intact when the
    write fails (a full disk says so, naming the file)."""
    import torch

    with atomic_open(path, "wb", errors=(OSError, RuntimeError)) as fh:
        torch.save(obj, fh)


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
