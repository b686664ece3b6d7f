"""Dataset registry: decode once into a cached tensor file, then batches are tensor ops.

Datasets:
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
import io
import json
import logging
import pickle
import tarfile
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from credit_assign.infra import paths
from credit_assign.infra.checkpoints import atomic_torch_save
from credit_assign.infra.files import atomic_write_text, dumps
from credit_assign.infra.provenance import describe_source

CIFAR10_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
CIFAR10_MD5 = "c58f30108f718f92721af3b95e74349a"
CIFAR10_MEAN = (0.4914, 0.4822, 0.4465)
CIFAR10_STD = (0.2470, 0.2435, 0.2616)
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp")


class DataMissingError(FileNotFoundError):
    """The data a config asks for is not on disk and cannot be fetched."""


# ----------------------------------------------------------------------------- sources
MAX_MEMBER_BYTES = 16 * 2**20  # an image file larger than this is refused unread
MAX_IMAGE_PIXELS = 4096 * 4096  # ... and so is one whose header claims more pixels


class DataFormatError(ValueError):
    """A data source exists but is not what the pipeline can read; the message names
    the file (or archive member) and what to do."""


class _NumpyOnlyUnpickler(pickle.Unpickler):
    """Unpickles the official CIFAR-10 batches (dicts of bytes, lists and numpy arrays)
    and nothing else: any other class a pickle names is refused, so a crafted archive
    cannot run code."""

    ALLOWED = {("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray",
                                                           "_reconstruct"),
               ("numpy", "ndarray"), ("numpy", "dtype")}

    def find_class(self, module, name):
        if (module, name) in self.ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refused to load {module}.{name}: the CIFAR-10 "
                                     f"batches hold only numpy arrays, lists and bytes")


def _md5(path: Path) -> str:
    import pooch

    return pooch.file_hash(str(path), alg="md5")


def _cifar10_official(archive: Path) -> dict[str, Any]:
    """Read the official python archive without unpacking it to disk. Only the archive
    whose md5 is the published one is unpickled (and then only numpy arrays)."""
    digest = _md5(archive)
    if digest != CIFAR10_MD5:
        raise DataFormatError(
            f"{archive} is not the official CIFAR-10 python archive (md5 {digest}, expected "
            f"{CIFAR10_MD5}); its pickles are not read. Download {CIFAR10_URL} again, or "
            f"point data.cifar10.source at an image folder or a .tar of one.")
    with tarfile.open(archive, "r:gz") as tar:
        def batch(name):
            member = f"cifar-10-batches-py/{name}"
            try:
                fh = tar.extractfile(tar.getmember(member))
                return _NumpyOnlyUnpickler(fh, encoding="bytes").load()
            except (KeyError, pickle.UnpicklingError, EOFError) as err:
                raise DataFormatError(f"{archive}: member {member}: {err}") from err

        train = [batch(f"data_batch_{i}") for i in range(1, 6)]
        test = batch("test_batch")
        meta = batch("batches.meta")
    to_img = lambda b: np.asarray(b[b"data"], dtype=np.uint8).reshape(-1, 3, 32, 32)  # noqa: E731
    return {
        "train_x": np.concatenate([to_img(b) for b in train]),
        "train_y": np.concatenate([np.asarray(b[b"labels"]) for b in train]),
        "test_x": to_img(test),
        "test_y": np.asarray(test[b"labels"]),
        "classes": [c.decode() for c in meta[b"label_names"]],
        "order": "official",
    }


def _decode(data: bytes, name: str) -> np.ndarray:
    """An image's pixels as (3, H, W) uint8; ``name`` (file or member) names any failure."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as im:
            w, h = im.size  # read from the header, before any pixel is decoded
            if w * h > MAX_IMAGE_PIXELS:
                raise DataFormatError(f"{name}: {w}×{h} pixels, more than the "
                                      f"{MAX_IMAGE_PIXELS} allowed; remove it")
            return np.asarray(im.convert("RGB"), dtype=np.uint8).transpose(2, 0, 1)
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as err:
        if isinstance(err, DataFormatError):
            raise
        raise DataFormatError(f"{name}: not a readable image ({type(err).__name__}: "
                              f"{err}); replace or remove it") from err


def _split_class(name: str) -> tuple[str, str] | None:
    """('train'|'test', class) for a path ending in split/class/file.<image>, else None."""
    parts = Path(name).parts
    if len(parts) >= 3 and parts[-3] in ("train", "test") and \
            Path(name).suffix.lower() in IMAGE_SUFFIXES:
        return parts[-3], parts[-2]
    return None


def _folder_files(source: Path) -> list[Path]:
    """Every file below an image folder, sorted; the data are what the folder holds. A
    symbolic link (to a file or a folder) whose target lies outside the folder is refused
    by name; one whose target lies inside is skipped (its target is read where it is, once,
    under its own class)."""
    import os

    root = source.resolve()
    files = []
    for folder, dirs, names in os.walk(source):  # does not descend into linked folders
        for path in (Path(folder) / name for name in sorted(dirs) + sorted(names)):
            if not path.is_symlink():
                if path.is_file():
                    files.append(path)
            elif not (target := path.resolve()).is_relative_to(root):
                raise DataFormatError(
                    f"{source}: {path.relative_to(source)} is a symbolic link to {target}, "
                    f"outside the data folder; copy the file into the folder or remove the "
                    f"link")
    return sorted(files)


def _image_folder(source: Path, progress: bool = True) -> dict[str, Any]:
    """Decode an image folder (a directory or a .tar of one, compressed or not), sorted by
    class then file. Bounded: a member over MAX_MEMBER_BYTES or an image over
    MAX_IMAGE_PIXELS is refused before it is read; every error names the file."""
    import logging
    from contextlib import ExitStack

    from tqdm import tqdm

    log = logging.getLogger(__name__)
    with ExitStack() as stack:
        if source.is_dir():
            files = _folder_files(source)
            entries = [(str(p.relative_to(source)), p.stat().st_size, p.read_bytes)
                       for p in files]
        else:
            try:
                tar = stack.enter_context(tarfile.open(source))
                members = sorted((m for m in tar if m.isfile()), key=lambda m: m.name)
            except (tarfile.TarError, EOFError, OSError) as err:
                raise DataFormatError(
                    f"{source} is not a readable tar archive ({type(err).__name__}: {err}); "
                    f"point data.cifar10.source at an image folder, a .tar of one, or the "
                    f"official cifar-10-python.tar.gz") from err
            entries = [(m.name, m.size, lambda m=m: tar.extractfile(m).read())
                       for m in members]
        items, skipped = [], []
        for name, size, read in entries:
            where = _split_class(name)
            if where is None:
                skipped.append(name)
                continue
            if size > MAX_MEMBER_BYTES:
                raise DataFormatError(f"{source}: {name} is {size} bytes, more than the "
                                      f"{MAX_MEMBER_BYTES} an image may have; remove it")
            items.append((where, name, read))
        if skipped:
            log.warning("%s: skipped %d files outside the layout train/<class>/<image> "
                        "(images: %s): %s%s", source.name, len(skipped),
                        ", ".join(IMAGE_SUFFIXES), ", ".join(skipped[:5]),
                        " ..." if len(skipped) > 5 else "")
        if not items:
            raise DataMissingError(
                f"{source} holds no images in the layout train/<class>/*, test/<class>/*"
            )
        by_split = {split: sorted({cls for (sp, cls), _, _ in items if sp == split})
                    for split in ("train", "test")}
        for split, found in by_split.items():
            if not found:
                raise DataFormatError(f"{source} has no {split}/<class>/ images; both "
                                      f"train/ and test/ are needed")
        if by_split["train"] != by_split["test"]:
            raise DataFormatError(
                f"{source}: the classes of train/ {by_split['train']} and test/ "
                f"{by_split['test']} differ; both splits need the same class folders")
        classes = by_split["train"]
        index = {c: i for i, c in enumerate(classes)}
        out: dict[str, list] = {"train_x": [], "train_y": [], "test_x": [], "test_y": []}
        shape, first = None, None
        for (split, cls), name, read in tqdm(items, desc=f"decoding {source.name}",
                                             disable=not progress, mininterval=10):
            img = _decode(read(), f"{source}: {name}")
            if shape is None:
                shape, first = img.shape, name
            elif img.shape != shape:
                raise DataFormatError(
                    f"{source}: {name} is {img.shape[2]}×{img.shape[1]} pixels but {first} "
                    f"is {shape[2]}×{shape[1]}; every image must have the same size")
            out[f"{split}_x"].append(img)
            out[f"{split}_y"].append(index[cls])
    arrays = {k: np.stack(v) if k.endswith("_x") else np.asarray(v) for k, v in out.items()}
    return {**arrays, "classes": classes, "order": "image-folder (sorted by class, then file name)"}


def _digits(split_seed: int = 0, test_size: int = 500) -> dict[str, Any]:
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    x = digits.images.astype(np.uint8)[:, None]  # (1797, 1, 8, 8), values 0..16
    idx_train, idx_test = train_test_split(
        np.arange(len(x)), test_size=test_size, stratify=digits.target, random_state=split_seed
    )
    return {
        "train_x": x[idx_train], "train_y": digits.target[idx_train],
        "test_x": x[idx_test], "test_y": digits.target[idx_test],
        "classes": [str(c) for c in range(10)],
        "order": f"stratified split, random_state={split_seed}",
    }


# ----------------------------------------------------------------------------- registry
def resolve_cifar10(source: str, data_dir: Path) -> Path:
    """Where the CIFAR-10 bytes are: a local path, or the official archive
    (downloaded into ``data_dir`` with its md5 checked)."""
    if source != "download":
        path = Path(source).expanduser()
        if not path.exists():
            raise DataMissingError(
                f"CIFAR-10 source {path} does not exist. Set data.cifar10.source to an "
                f"image folder (train/<class>/*, test/<class>/*), a .tar of one, the "
                f"official archive, or 'download' (fetches {CIFAR10_URL})."
            )
        return path
    archive = data_dir / "cifar-10-python.tar.gz"
    try:
        import pooch

        return Path(pooch.retrieve(CIFAR10_URL, known_hash=f"md5:{CIFAR10_MD5}",
                                   fname=archive.name, path=data_dir, progressbar=False))
    except Exception as err:  # network down, hash mismatch, …: say what to do
        raise DataMissingError(
            f"CIFAR-10 is not at {archive} and could not be downloaded ({err}). "
            f"Download {CIFAR10_URL} (md5 {CIFAR10_MD5}) to {archive}, or set "
            f"data.cifar10.source to a local image folder or archive."
        ) from err


def prepare(name: str, source: str | None, data_dir: Path, out: Path) -> dict[str, Any]:
    """Decode dataset ``name`` once into the cache file ``out``; returns its info."""
    if name == "digits":
        raw, scale = _digits(), 16.0
        origin = "sklearn.datasets.load_digits (embedded)"
    elif name == "cifar10":
        path = resolve_cifar10(source or "download", Path(data_dir))
        # the official archive is recognised by its md5, never by its name: any other
        # file is read as an image folder (a .tar of one, compressed or not)
        official = path.is_file() and (path.name == "cifar-10-python.tar.gz" or (
            path.name.endswith(".tar.gz") and _md5(path) == CIFAR10_MD5))
        raw = _cifar10_official(path) if official else _image_folder(path)
        scale, origin = 255.0, describe_source(path)
    else:
        raise ValueError(f"unknown dataset {name!r}; known: {sorted(DATASETS)}")
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
    """Rule prepare_data: decode the data into ``cache`` and write its manifest."""
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
    """The decoded data a job reads: the cache file written by rule prepare_data.

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
