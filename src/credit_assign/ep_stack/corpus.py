"""Character-level corpora for the EP stack probe.

Corpora:
    ``tinyshakespeare``: Karpathy's Tiny Shakespeare (1,115,394 characters, 65
        symbols), downloaded with its sha256 checked, or read from a local path.
    ``pydoc``: the English text of Python's own documentation topics
        (``pydoc_data.topics``, shipped with every Python): the offline corpus.

Both are encoded the same way (vocabulary = sorted distinct characters), split
90/10 into train/val, and sampled the same way: random windows of ``T``
characters, targets the next character (:meth:`CharCorpus.get_batch`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import torch

from credit_assign.infra import paths
from credit_assign.infra.checkpoints import atomic_torch_save, load_checkpoint
from credit_assign.infra.data import cache_lock, read_current
from credit_assign.infra.decode import DataMissingError
from credit_assign.infra.files import atomic_write_text, dumps

CORPORA = ("tinyshakespeare", "pydoc")
TINY_SHAKESPEARE_URL = (
    "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"
)
TINY_SHAKESPEARE_SHA256 = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"
TRAIN_FRACTION = 0.9


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _pydoc_text() -> str:
    from pydoc_data.topics import topics

    return "\n\n".join(topics[key] for key in sorted(topics))


def read_corpus(name: str, source: str = "download", data_dir: Path = Path("data")) -> str:
    """The corpus text. ``source``: 'download' or a file path (tinyshakespeare only)."""
    if name == "pydoc":
        return _pydoc_text()
    if name != "tinyshakespeare":
        raise ValueError(f"unknown corpus {name!r}; expected one of {CORPORA}")
    if source == "download":
        import pooch

        try:
            path = pooch.retrieve(TINY_SHAKESPEARE_URL,
                                  known_hash=f"sha256:{TINY_SHAKESPEARE_SHA256}",
                                  fname="tinyshakespeare.txt", path=data_dir, progressbar=False)
        except Exception as err:  # no network, a proxy page, a changed file
            raise DataMissingError(
                f"could not fetch Tiny Shakespeare ({err}). Download {TINY_SHAKESPEARE_URL} "
                f"(sha256 {TINY_SHAKESPEARE_SHA256}) to {data_dir / 'tinyshakespeare.txt'}, "
                "or set data.tinyshakespeare.source to a local copy."
            ) from err
        return Path(path).read_text(encoding="utf-8")
    path = Path(source).expanduser()
    if not path.is_file():
        raise DataMissingError(f"data.tinyshakespeare.source = {source!r} is not a file")
    size = path.stat().st_size
    if size > 4 * 2**20:  # Tiny Shakespeare is 1.1 MB: refuse to read a big file whole
        raise DataMissingError(f"{path} is not Tiny Shakespeare: {size} bytes, expected "
                               f"1,115,394; point data.tinyshakespeare.source at a copy")
    raw = path.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    if digest != TINY_SHAKESPEARE_SHA256:
        raise DataMissingError(
            f"{path} is not Tiny Shakespeare: sha256 {digest} != "
            f"{TINY_SHAKESPEARE_SHA256} (expected 1,115,394 characters)"
        )
    return raw.decode("utf-8")


def encode(text: str) -> dict[str, Any]:
    vocab = "".join(sorted(set(text)))
    stoi = {ch: i for i, ch in enumerate(vocab)}
    ids = torch.tensor([stoi[ch] for ch in text], dtype=torch.int16)
    return {"ids": ids, "vocab": vocab, "sha256": _sha256(text), "n_chars": len(text)}


def prepare_manifest(name: str, source: str, data_dir: Path, cache: Path) -> dict[str, Any]:
    """Step prepare_corpus: encode the corpus into ``cache`` and write the manifest jobs
    depend on (name, sha256 of the text, size, vocabulary, and where to rebuild from)."""
    with cache_lock(cache):
        encoded = prepare_corpus(name, source, data_dir, cache)
        manifest = {k: encoded[k] for k in ("name", "sha256", "n_chars", "vocab")}
        manifest["rebuild_from"] = {"source": source, "data_dir": str(data_dir)}
        atomic_write_text(paths.manifest(cache), dumps(manifest))
    return encoded


def prepare_corpus(name: str, source: str, data_dir: Path, out: Path) -> dict[str, Any]:
    """Read (or fetch) a corpus, encode it, and cache it as a tensor file."""
    encoded = {"name": name, "source": source if name == "tinyshakespeare" else "pydoc_data",
               **encode(read_corpus(name, source, data_dir))}
    atomic_torch_save(encoded, out)
    return encoded


class CharCorpus:
    """An encoded corpus with its 90/10 train/val split and seeded batch sampler."""

    def __init__(self, encoded: dict[str, Any]):
        self.name, self.vocab = encoded["name"], encoded["vocab"]
        ids = encoded["ids"].long()
        n = int(TRAIN_FRACTION * len(ids))
        self.splits = {"train": ids[:n], "val": ids[n:]}

    @classmethod
    def load(cls, path: str | Path) -> CharCorpus:
        """The encoded corpus of a cache file. Jobs depend on the manifest beside it
        (data/corpus/<name>.json), not on the cache: a missing cache is rebuilt here
        (one job at a time) from the source its manifest names, and must encode the same
        text (sha256) the manifest records."""
        path = Path(path)
        manifest = paths.manifest(path)
        if not manifest.exists():  # a cache used on its own (tests, benchmarks)
            return cls(load_checkpoint(path, "corpus cache"))
        want = json.loads(manifest.read_text())
        rebuild = want.get("rebuild_from") or {}
        encoded = read_current(
            path, lambda p: load_checkpoint(p, "corpus cache"), lambda e: e.get("sha256"),
            want["sha256"],
            lambda: prepare_corpus(want["name"], rebuild.get("source", "download"),
                                   Path(rebuild.get("data_dir", path.parent)), path))
        if encoded.get("sha256") != want["sha256"]:
            raise DataMissingError(
                f"{path} was rebuilt, but its text (sha256 {encoded.get('sha256')}) differs "
                f"from what {manifest} records ({want['sha256']}); delete {manifest} and "
                f"rerun")
        return cls(encoded)

    def get_batch(self, split: str, batch: int, context: int, generator: torch.Generator):
        """``batch`` random windows of ``context`` characters and their next characters."""
        data = self.splits[split]
        if len(data) <= context + 1:
            raise ValueError(f"{self.name}/{split} has {len(data)} characters, "
                             f"too few for windows of {context}")
        start = torch.randint(len(data) - context, (batch,), generator=generator)
        offsets = torch.arange(context)
        x = data[start[:, None] + offsets]
        y = data[start[:, None] + offsets + 1]
        return x, y
