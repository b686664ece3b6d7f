"""Data sources → decoded arrays: where each dataset's bytes come from (the official
CIFAR-10 archive, downloaded with its md5 checked, or an image folder, a directory or a
.tar of one; scikit-learn's embedded digits) and how they are read — safely: a pickle
may hold numpy arrays only, an image file or header too large is refused unread, a
member outside the folder is refused. infra.data caches what this returns."""

from __future__ import annotations

import io
import logging
import pickle
import tarfile
from pathlib import Path
from typing import Any

import numpy as np

from credit_assign.infra.provenance import describe_source

CIFAR10_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
CIFAR10_MD5 = "c58f30108f718f92721af3b95e74349a"

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


def decode(name: str, source: str | None, data_dir: Path) -> tuple[dict[str, Any], float, str]:
    """Dataset ``name`` decoded: (arrays and classes, the pixel scale, where it came from:
    a file by name and sha256)."""
    if name == "digits":
        return _digits(), 16.0, "sklearn.datasets.load_digits (embedded)"
    path = resolve_cifar10(source or "download", data_dir)
    # the official archive is recognised by its md5, never by its name: any other file is
    # read as an image folder (a .tar of one, compressed or not)
    official = path.is_file() and (path.name == "cifar-10-python.tar.gz" or (
        path.name.endswith(".tar.gz") and _md5(path) == CIFAR10_MD5))
    raw = _cifar10_official(path) if official else _image_folder(path)
    return raw, 255.0, describe_source(path)
