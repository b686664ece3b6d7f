"""Dataset registry: sources, caches, splits, augmentation."""

import io
import json
import tarfile
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from credit_assign.infra import data, decode
from credit_assign.science import inputs


def test_digits_cache_is_deterministic_and_stratified(tmp_path):
    a = data.prepare("digits", None, tmp_path, tmp_path / "a.pt")
    data.prepare("digits", None, tmp_path, tmp_path / "b.pt")
    da, db = data.load(tmp_path / "a.pt"), data.load(tmp_path / "b.pt")
    assert torch.equal(da["train_x"], db["train_x"]) and torch.equal(da["test_y"], db["test_y"])
    assert a["shape"] == [1, 8, 8] and a["n_train"] + a["n_test"] == 1797
    counts = torch.bincount(da["test_y"], minlength=10)
    assert counts.min() >= 48 and counts.max() <= 51  # 500 test images, stratified


def test_diagnostic_set_is_fixed_and_class_stratified():
    labels = torch.arange(10).repeat_interleave(100)  # class-sorted, like an image folder
    idx = inputs.diagnostic_indices(labels, 200, seed=0)
    assert torch.equal(idx, inputs.diagnostic_indices(labels, 200, seed=0))
    assert torch.bincount(labels[idx], minlength=10).tolist() == [20] * 10
    assert len(inputs.diagnostic_indices(labels, 5000, seed=0)) == 1000


def _jpeg(color):
    buf = io.BytesIO()
    Image.new("RGB", (32, 32), color).save(buf, format="PNG")
    return buf.getvalue()


def test_image_folder_tar_is_decoded_with_sorted_classes(tmp_path):
    archive = tmp_path / "tiny.tar"
    with tarfile.open(archive, "w") as tar:
        for split, n in (("train", 3), ("test", 2)):
            for cls, color in (("cat", (255, 0, 0)), ("airplane", (0, 0, 255))):
                for i in range(n):
                    blob = _jpeg(color)
                    info = tarfile.TarInfo(f"cifar/{split}/{cls}/{i:04d}.png")
                    info.size = len(blob)
                    tar.addfile(info, io.BytesIO(blob))
    info = data.prepare("cifar10", str(archive), tmp_path, tmp_path / "c.pt")
    cache = data.load(tmp_path / "c.pt")
    assert info["classes"] == ["airplane", "cat"]
    assert cache["train_x"].shape == (6, 3, 32, 32) and cache["test_x"].shape == (4, 3, 32, 32)
    # airplane (label 0) is blue, cat (label 1) red
    assert cache["train_x"][cache["train_y"] == 0][:, 2].float().mean() == 255
    assert cache["train_x"][cache["train_y"] == 1][:, 0].float().mean() == 255


def test_missing_cifar_path_names_the_path(tmp_path):
    with pytest.raises(decode.DataMissingError, match="nowhere/cifar"):
        data.prepare("cifar10", str(tmp_path / "nowhere/cifar"), tmp_path, tmp_path / "c.pt")


def test_failed_download_names_the_file_to_fill_and_the_url(tmp_path, monkeypatch):
    import pooch

    def offline(*args, **kwargs):
        raise ConnectionError("no network")

    monkeypatch.setattr(pooch, "retrieve", offline)
    with pytest.raises(decode.DataMissingError) as err:
        decode.resolve_cifar10("download", tmp_path)
    assert str(tmp_path / "cifar-10-python.tar.gz") in str(err.value)
    assert decode.CIFAR10_URL in str(err.value) and decode.CIFAR10_MD5 in str(err.value)


def test_crop_flip_outputs_are_shifted_or_mirrored_crops():
    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, 255, (32, 3, 8, 8), dtype=torch.uint8)
    out = inputs.crop_flip(x, 2, g)
    padded = torch.nn.functional.pad(x, (2, 2, 2, 2))
    for i in range(len(x)):
        crops = [padded[i, :, r:r + 8, c:c + 8] for r in range(5) for c in range(5)]
        assert any(torch.equal(out[i], c) or torch.equal(out[i], c.flip(-1)) for c in crops)
    same = inputs.crop_flip(x, 0, torch.Generator().manual_seed(1))
    flipped = [not torch.equal(same[i], x[i]) for i in range(len(x))]
    assert 0 < sum(flipped) < len(x)


def test_normalizer_standardises_per_channel(tmp_path):
    info = {"scale": 255.0, "mean": [0.5, 0.25, 0.0], "std": [0.5, 0.25, 1.0]}
    x = torch.full((2, 3, 4, 4), 255, dtype=torch.uint8)
    out = inputs.Normalizer(info, "cpu")(x).view(2, 3, 16)
    np.testing.assert_allclose(out[:, :, 0].numpy(), [[1.0, 3.0, 1.0]] * 2, rtol=1e-6)


# ---- untrusted sources: nothing executed, everything bounded, every error named ------
def _tar(path, files: dict, mode="w"):
    with tarfile.open(path, mode) as tar:
        for name, blob in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(blob)
            tar.addfile(info, io.BytesIO(blob))
    return path


def _layout(extra=None, skip=()):
    files = {f"c/{split}/{cls}/{i}.png": _jpeg(color)
             for split in ("train", "test") for cls, color in (("a", (1, 2, 3)), ("b", (4, 5, 6)))
             for i in range(2) if f"{split}/{cls}" not in skip}
    files.update(extra or {})
    return files


class _Payload:
    def __reduce__(self):
        import os

        return (os.system, ("touch PAYLOAD_RAN",))


def test_crafted_cifar_archive_is_refused_and_its_payload_never_runs(tmp_path, monkeypatch):
    import pickle

    monkeypatch.chdir(tmp_path)
    blob = pickle.dumps({b"data": _Payload(), b"labels": [0]})
    archive = _tar(tmp_path / "cifar-10-python.tar.gz",
                   {f"cifar-10-batches-py/{n}": blob for n in
                    [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch", "batches.meta"]},
                   mode="w:gz")
    with pytest.raises(decode.DataFormatError, match="not the official CIFAR-10.*md5"):
        data.prepare("cifar10", str(archive), tmp_path, tmp_path / "c.pt")
    # the restricted unpickler refuses it too, should the md5 check ever be bypassed
    monkeypatch.setattr(decode, "_md5", lambda path: decode.CIFAR10_MD5)
    with pytest.raises(decode.DataFormatError, match="refused to load .*system"):
        data.prepare("cifar10", str(archive), tmp_path, tmp_path / "c.pt")
    assert not (tmp_path / "PAYLOAD_RAN").exists()
    assert not (tmp_path / "c.pt").exists()


def test_oversized_member_is_refused_unread(tmp_path, monkeypatch):
    monkeypatch.setattr(decode, "MAX_MEMBER_BYTES", 10_000)
    big = b"\0" * 300_000  # compresses to a few hundred bytes
    archive = _tar(tmp_path / "bomb.tar.gz", _layout({"c/train/a/huge.png": big}), "w:gz")
    assert archive.stat().st_size < 10_000
    read = []
    real = tarfile.TarFile.extractfile
    monkeypatch.setattr(tarfile.TarFile, "extractfile",
                        lambda self, m: read.append(m.name) or real(self, m))
    with pytest.raises(decode.DataFormatError, match="huge.png is 300000 bytes"):
        data.prepare("cifar10", str(archive), tmp_path, tmp_path / "c.pt")
    assert read == []  # refused before a byte of any image was read


def test_image_claiming_too_many_pixels_is_refused_before_decoding(tmp_path, monkeypatch):
    monkeypatch.setattr(decode, "MAX_IMAGE_PIXELS", 32 * 32)
    buf = io.BytesIO()
    Image.new("RGB", (64, 64)).save(buf, format="PNG")
    archive = _tar(tmp_path / "d.tar", _layout({"c/test/b/wide.png": buf.getvalue()}))
    with pytest.raises(decode.DataFormatError, match="wide.png: 64×64 pixels"):
        data.prepare("cifar10", str(archive), tmp_path, tmp_path / "c.pt")


@pytest.mark.parametrize("files, match", [
    (_layout({"c/train/a/broken.jpg": b"not an image"}), "broken.jpg: not a readable image"),
    (_layout(skip=("test/a", "test/b")), "no test/<class>/ images"),
    (_layout(skip=("test/b",)), r"classes of train/ \['a', 'b'\] and test/ \['a'\] differ"),
])
def test_bad_image_folders_name_the_file_and_the_fix(tmp_path, files, match):
    archive = _tar(tmp_path / "d.tar", files)
    with pytest.raises(decode.DataFormatError, match=match):
        data.prepare("cifar10", str(archive), tmp_path, tmp_path / "c.pt")


def test_images_of_another_size_are_named(tmp_path):
    buf = io.BytesIO()
    Image.new("RGB", (16, 32)).save(buf, format="PNG")
    folder = tmp_path / "f"
    for name, blob in _layout({"c/train/b/small.png": buf.getvalue()}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(blob)
    with pytest.raises(decode.DataFormatError, match=r"small.png is 16×32 pixels but .* 32×32"):
        data.prepare("cifar10", str(folder), tmp_path, tmp_path / "c.pt")


def test_gzipped_image_folder_is_read_and_stray_files_are_listed(tmp_path, caplog):
    archive = _tar(tmp_path / "folder.tar.gz", _layout({"c/README.txt": b"hi",
                                                        "c/train/a/notes.txt": b"x"}), "w:gz")
    info = data.prepare("cifar10", str(archive), tmp_path, tmp_path / "c.pt")
    assert info["n_train"] == 4 and info["n_test"] == 4
    assert "skipped 2 files" in caplog.text and "c/README.txt" in caplog.text
    assert info["source"].startswith("folder.tar.gz (sha256 ")


def test_not_a_tar_is_named(tmp_path):
    bad = tmp_path / "x.tar"
    bad.write_bytes(b"garbage" * 100)
    with pytest.raises(decode.DataFormatError, match="x.tar is not a readable tar archive"):
        data.prepare("cifar10", str(bad), tmp_path, tmp_path / "c.pt")


def test_the_manifest_is_the_path_tables(tmp_path, monkeypatch):
    """The manifest rule prepare_data writes, and load reads, is paths.DATA_MANIFEST
    filled in (beside paths.DATA_CACHE), and the corpus's is paths.CORPUS_MANIFEST."""
    from credit_assign.ep_stack import corpus
    from credit_assign.infra import paths

    monkeypatch.chdir(tmp_path)
    cache = paths.fill(paths.DATA_CACHE, dataset="digits")
    info = data.prepare_manifest("digits", None, tmp_path / "source", Path(cache))
    manifest = Path(paths.fill(paths.DATA_MANIFEST, dataset="digits"))
    assert json.loads(manifest.read_text())["digest"] == info["digest"]
    assert sorted(p.name for p in manifest.parent.glob("*.json")) == [manifest.name]
    Path(cache).unlink()  # load rebuilds it from the manifest it reads
    assert data.load(cache)["info"]["digest"] == info["digest"]

    cache = paths.fill(paths.CORPUS_CACHE, corpus="pydoc")
    encoded = corpus.prepare_manifest("pydoc", "download", tmp_path / "source", Path(cache))
    manifest = Path(paths.fill(paths.CORPUS_MANIFEST, corpus="pydoc"))
    assert json.loads(manifest.read_text())["sha256"] == encoded["sha256"]
    assert paths.manifest(tmp_path / "elsewhere" / "x.pt") == tmp_path / "elsewhere" / "x.json"
    with pytest.raises(ValueError, match="not a cache's name"):
        paths.manifest("data/digits.npz")


def test_an_overwrite_with_the_same_size_and_a_restored_mtime_is_seen(tmp_path):
    """Another image of the same size written over one, its mtime set back (touch -r, or
    cp -p from a copy): the listing's ctime and inode still differ, so the source is
    re-read and its new bytes change the stamp (the readers rerun)."""
    import os
    import shutil

    from credit_assign.infra import sources

    folder = tmp_path / "src" / "train" / "cat"
    folder.mkdir(parents=True)
    image = folder / "1.png"
    image.write_bytes(b"aaaa")
    cache = tmp_path / "digests.json"
    first = sources.source_digest(tmp_path / "src", cache)
    before = os.stat(image)
    other = tmp_path / "other.png"
    other.write_bytes(b"bbbb")  # the same size
    os.utime(other, ns=(before.st_atime_ns, before.st_mtime_ns))
    shutil.copy2(other, image)  # cp -p: bytes replaced, mtime restored
    assert os.stat(image).st_mtime_ns == before.st_mtime_ns
    assert os.stat(image).st_size == before.st_size
    assert sources.source_digest(tmp_path / "src", cache) != first
    # the same for a single file (an archive) overwritten in place, mtime set back
    tar = tmp_path / "a.tar"
    tar.write_bytes(b"archive1")
    stamp = sources.source_digest(tar, cache)
    st = os.stat(tar)
    tar.write_bytes(b"archive2")
    os.utime(tar, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert sources.source_digest(tar, cache) != stamp


# ---- a data source's stamp: its bytes, not its mtimes (infra.sources) ----------------
def test_a_sources_stamp_follows_its_bytes_not_its_mtimes(tmp_path, monkeypatch):
    """A copy or a touch (same bytes, new mtimes) keeps the stamp, so prepare_data and its
    readers do not rerun; changed bytes, an added file or a renamed one change it. The
    cache re-reads a source only when its listing (names, sizes, mtimes, ctimes,
    inodes) changed."""
    import os
    import shutil

    from credit_assign.infra import sources

    folder = tmp_path / "src" / "train" / "cat"
    folder.mkdir(parents=True)
    (folder / "1.png").write_bytes(b"one")
    (folder / "2.png").write_bytes(b"two")
    cache = tmp_path / "digests.json"
    first = sources.source_digest(tmp_path / "src", cache)
    assert first.startswith("sha256:")
    os.utime(folder / "1.png", ns=(1, 10**18))  # touched: same bytes
    copy = tmp_path / "copy"
    shutil.copytree(tmp_path / "src", copy)  # copied: same bytes, new mtimes
    assert sources.source_digest(tmp_path / "src", cache) == first
    assert sources.source_digest(copy, cache) == first
    # an unchanged listing is answered from the cache without reading a file
    monkeypatch.setattr(sources, "sha256_file", lambda path: pytest.fail(f"read {path}"))
    assert sources.source_digest(copy, cache) == first
    monkeypatch.undo()
    (folder / "2.png").write_bytes(b"TWO")
    changed = sources.source_digest(tmp_path / "src", cache)
    (folder / "3.png").write_bytes(b"three")
    added = sources.source_digest(tmp_path / "src", cache)
    os.rename(folder / "3.png", folder / "4.png")
    renamed = sources.source_digest(tmp_path / "src", cache)
    assert len({first, changed, added, renamed}) == 4
    # a single file (an archive) the same way
    tar = tmp_path / "a.tar"
    tar.write_bytes(b"archive")
    stamp = sources.source_digest(tar, cache)
    os.utime(tar, ns=(1, 10**18))
    assert sources.source_digest(tar, cache) == stamp
    tar.write_bytes(b"archive2")
    assert sources.source_digest(tar, cache) != stamp
