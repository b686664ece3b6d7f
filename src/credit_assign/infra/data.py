"""Dataset registry: decode once into a cached tensor file, then batches are tensor ops.

Datasets (their sources and decoding: infra.decode):
    ``cifar10``: the official python archive (downloaded with its md5 checked) or
        an image-folder layout ``train/<class>/*``, ``test/<class>/*`` given as a
        directory or a ``.tar`` of one.
    ``digits``: scikit-learn's embedded 8×8 digits (ships with the package: no
        network), with a fixed stratified train/test split.

A cache file holds uint8 images (N, C, H, W), int64 labels, and an ``info``
dict (classes, pixel scale, per-channel mean/std, where the data came from).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from credit_assign.infra import paths
from credit_assign.infra.checkpoints import atomic_torch_save
from credit_assign.infra.decode import DataFormatError, decode
from credit_assign.infra.files import atomic_write_text, dumps

CIFAR10_MEAN = (0.4914, 0.4822, 0.4465)
CIFAR10_STD = (0.2470, 0.2435, 0.2616)
def prepare(name: str, source: str | None, data_dir: Path, out: Path) -> dict[str, Any]:
    """Decode dataset ``name`` once into the cache file ``out``; returns its info."""
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; known: {sorted(DATASETS)}")
    raw, scale, origin = decode(name, source, Path(data_dir))
    train_x = torch.from_numpy(np.ascontiguousarray(raw["train_x"]))
    if name == "cifar10":
        mean, std = CIFAR10_MEAN, CIFAR10_STD
    else:  # per-channel statistics of the training split
        xs = train_x.double() / scale
        mean = tuple(xs.mean(dim=(0, 2, 3)).tolist())
        std = tuple(xs.std(dim=(0, 2, 3)).tolist())
    tensors = {
        "train_x": train_x, "train_y": torch.as_tensor(raw["train_y"], dtype=torch.int64),
        "test_x": torch.from_numpy(np.ascontiguousarray(raw["test_x"])),
        "test_y": torch.as_tensor(raw["test_y"], dtype=torch.int64),
    }
    info = {
        "name": name, "classes": list(raw["classes"]), "shape": list(train_x.shape[1:]),
        "scale": scale, "mean": list(mean), "std": list(std), "source": origin,
        "order": raw["order"], "n_train": len(train_x), "n_test": len(raw["test_x"]),
        "digest": data_digest(tensors),
    }
    atomic_torch_save({**tensors, "info": info}, out)
    return info


def data_digest(tensors: dict[str, Tensor]) -> str:
    """sha256 of the decoded images and labels, whatever form the source had: what a
    cache, its manifest and every result trained on it record, so that two caches of the
    same bytes agree and a cache of other data is told apart."""
    digest = hashlib.sha256()
    for key in ("train_x", "train_y", "test_x", "test_y"):
        t = tensors[key].contiguous()
        digest.update(f"{key}:{t.dtype}:{tuple(t.shape)};".encode())
        digest.update(t.numpy().tobytes())
    return digest.hexdigest()


DATASETS = ("cifar10", "digits")


def write_manifest(info: dict[str, Any], source: str | None, cache: str | Path) -> Path:
    """The manifest jobs depend on: the cache's info (with the data's digest) and the
    source it was decoded from, so that a job finding the cache gone can rebuild it."""
    path = paths.manifest(cache)
    atomic_write_text(path, dumps({**info, "rebuild_from": source or ""}))
    return path


def prepare_manifest(name: str, source: str | None, data_dir: Path, cache: Path) -> dict:
    """Step prepare_data: decode the data into ``cache`` and write its manifest."""
    with cache_lock(cache):
        info = prepare(name, source, data_dir, cache)
        write_manifest(info, source, cache)
    return info


@contextmanager
def cache_lock(cache: Path):
    """One job at a time rebuilds a cache (others wait): jobs started together on a
    missing cache decode it once."""
    import fcntl

    lock = Path(str(cache) + ".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _read_cache(path: Path) -> dict[str, Any]:
    try:
        data = torch.load(path, weights_only=True)
    except Exception as err:
        raise RuntimeError(f"cannot read dataset cache {path}: {err}; delete it and rerun") from err
    missing = {"train_x", "train_y", "test_x", "test_y", "info"} - set(data)
    if missing:
        raise RuntimeError(f"dataset cache {path} lacks {sorted(missing)}; delete it and rerun")
    return data


def read_current(cache: Path, read: Callable[[Path], Any], digest: Callable[[Any], Any],
                 want: Any, rebuild: Callable[[], None]) -> Any:
    """What a job reads from a cache whose manifest records ``want`` (a digest of the
    data): ``read(cache)`` when ``digest`` of it is ``want``; else ``rebuild()`` writes
    the cache again — one job at a time, a job that waited reads what the other wrote —
    and what it wrote is returned, for the caller to check against ``want``."""
    def current():
        if cache.exists():
            obj = read(cache)
            if digest(obj) == want:
                return obj
        return None

    if (obj := current()) is not None:
        return obj
    with cache_lock(cache):
        if (obj := current()) is not None:  # another job rebuilt it meanwhile
            return obj
        logging.getLogger(__name__).warning(
            "%s is %s; rebuilding it from the source its manifest %s names", cache,
            "made from other data" if cache.exists() else "missing", paths.manifest(cache))
        rebuild()
    return read(cache)


def load(path: str | Path) -> dict[str, Any]:
    """The decoded data a job reads: the cache file written by step prepare_data.

    Jobs depend on the small manifest beside the cache (data/<name>.json), not on the
    cache: a deleted cache is then no reason to rerun them. A cache that is missing, or
    whose data digest differs from the manifest's (made from other data), is rebuilt
    here from the source the manifest names, one job at a time."""
    path = Path(path)
    manifest = paths.manifest(path)
    if not manifest.exists():  # a cache used on its own (tests, notebooks)
        return _read_cache(path)
    want = json.loads(manifest.read_text())
    data = read_current(
        path, _read_cache, lambda d: d["info"].get("digest"), want.get("digest"),
        lambda: prepare(want["name"], want.get("rebuild_from") or None, path.parent, path))
    info = data["info"]
    if info.get("digest") != want.get("digest"):
        raise DataFormatError(
            f"{path} was rebuilt from {info['source']}, but its data (sha256 {info['digest']})"
            f" differ from what {manifest} records (sha256 {want.get('digest')}): the source "
            f"changed since the manifest was written. Delete {manifest} and rerun: every job "
            f"that reads the data reruns")
    return data
