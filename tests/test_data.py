"""Dataset registry: sources, caches, splits, augmentation."""

import io
import tarfile

import numpy as np
import pytest
import torch
from PIL import Image

from credit_assign import data


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
    idx = data.diagnostic_indices(labels, 200, seed=0)
    assert torch.equal(idx, data.diagnostic_indices(labels, 200, seed=0))
    assert torch.bincount(labels[idx], minlength=10).tolist() == [20] * 10
    assert len(data.diagnostic_indices(labels, 5000, seed=0)) == 1000


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
    with pytest.raises(data.DataMissingError, match="nowhere/cifar"):
        data.prepare("cifar10", str(tmp_path / "nowhere/cifar"), tmp_path, tmp_path / "c.pt")


def test_failed_download_names_the_file_to_fill_and_the_url(tmp_path, monkeypatch):
    import pooch

    def offline(*args, **kwargs):
        raise ConnectionError("no network")

    monkeypatch.setattr(pooch, "retrieve", offline)
    with pytest.raises(data.DataMissingError) as err:
        data.resolve_cifar10("download", tmp_path)
    assert str(tmp_path / "cifar-10-python.tar.gz") in str(err.value)
    assert data.CIFAR10_URL in str(err.value) and data.CIFAR10_MD5 in str(err.value)


def test_crop_flip_outputs_are_shifted_or_mirrored_crops():
    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, 255, (32, 3, 8, 8), dtype=torch.uint8)
    out = data.crop_flip(x, 2, g)
    padded = torch.nn.functional.pad(x, (2, 2, 2, 2))
    for i in range(len(x)):
        crops = [padded[i, :, r:r + 8, c:c + 8] for r in range(5) for c in range(5)]
        assert any(torch.equal(out[i], c) or torch.equal(out[i], c.flip(-1)) for c in crops)
    same = data.crop_flip(x, 0, torch.Generator().manual_seed(1))
    flipped = [not torch.equal(same[i], x[i]) for i in range(len(x))]
    assert 0 < sum(flipped) < len(x)


def test_normalizer_standardises_per_channel(tmp_path):
    info = {"scale": 255.0, "mean": [0.5, 0.25, 0.0], "std": [0.5, 0.25, 1.0]}
    x = torch.full((2, 3, 4, 4), 255, dtype=torch.uint8)
    out = data.Normalizer(info, "cpu")(x).view(2, 3, 16)
    np.testing.assert_allclose(out[:, :, 0].numpy(), [[1.0, 3.0, 1.0]] * 2, rtol=1e-6)
