"""Unit tests for chapter 9: the Vision Transformer (d2lite.vit) and its data (d2lite.vision)."""

from __future__ import annotations

import gzip
import hashlib
import re
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

import d2lite as d2l
from d2lite import vision

# -- PatchEmbedding -----------------------------------------------------------------------------


def test_patch_embedding_d2l_shape_check():
    emb = d2l.PatchEmbedding(img_size=96, patch_size=16, num_hiddens=512)
    out = emb(torch.zeros(4, 3, 96, 96))
    d2l.check_shape(out, (4, 36, 512))
    assert emb.num_patches == 36 and emb.grid == (6, 6)


def test_patch_embedding_accepts_height_width_pairs():
    emb = d2l.PatchEmbedding(img_size=(8, 12), patch_size=(2, 4), num_hiddens=5, in_channels=3)
    assert emb.grid == (4, 3) and emb.num_patches == 12
    d2l.check_shape(emb(torch.randn(2, 3, 8, 12)), (2, 12, 5))


@pytest.mark.parametrize(
    "img_size, patch_size, message",
    [
        (97, 16, r"img_size 97x97 is not divisible by patch_size 16x16"),
        ((8, 10), 4, r"img_size 8x10 is not divisible by patch_size 4x4: .*10 % 4 = 2"),
        (8, 0, r"patch_size must be a positive int, got int 0"),
        ((8, 8, 8), 2, r"img_size must be an int or a pair"),
        (8.0, 2, r"img_size must be a positive int, got float 8.0"),
    ],
)
def test_patch_embedding_rejects_bad_sizes(img_size, patch_size, message):
    with pytest.raises(ValueError, match=message):
        d2l.PatchEmbedding(img_size, patch_size, 4)


def test_patch_embedding_rejects_wrong_images():
    emb = d2l.PatchEmbedding(8, 2, 4, in_channels=1)
    with pytest.raises(ValueError, match=r"expected images of shape \(batch, 1, 8, 8\), got"):
        emb(torch.zeros(2, 1, 8, 9))
    with pytest.raises(ValueError, match=r"got \(2, 3, 8, 8\)"):
        emb(torch.zeros(2, 3, 8, 8))
    pattern = r"X must have shape \(batch, channels, height, width\), got shape \(8, 8\)"
    with pytest.raises(ValueError, match=pattern):
        emb(torch.zeros(8, 8))


def test_patch_embedding_is_a_linear_map_of_each_flattened_patch():
    torch.manual_seed(0)
    c, p, d = 2, 3, 7
    emb = d2l.PatchEmbedding((6, 9), p, d, in_channels=c)
    X = torch.randn(4, c, 6, 9)
    # Cut patches by hand, row by row, each flattened channel-first: (batch, m, c * p * p).
    patches = X.unfold(2, p, p).unfold(3, p, p)  # (batch, c, 2, 3, p, p)
    patches = patches.permute(0, 2, 3, 1, 4, 5).reshape(4, 6, c * p * p)
    W = emb.conv.weight.reshape(d, c * p * p)
    expected = patches @ W.T + emb.conv.bias
    torch.testing.assert_close(emb(X), expected, rtol=1e-5, atol=1e-5)


# -- ViTMLP, ViTBlock, ViT ----------------------------------------------------------------------


def test_vit_mlp_shapes_and_gelu():
    mlp = d2l.ViTMLP(16, 6, dropout=0.0, num_inputs=4)
    X = torch.randn(3, 5, 4)
    d2l.check_shape(mlp(X), (3, 5, 6))
    assert isinstance(mlp.act, nn.GELU)
    hidden = mlp.fc1(X)
    expected = mlp.fc2(hidden * 0.5 * (1 + torch.erf(hidden / 2**0.5)))
    torch.testing.assert_close(mlp(X), expected)
    lazy = d2l.ViTMLP(16, 6)  # d2l's signature: the input width is inferred
    d2l.check_shape(lazy.eval()(torch.randn(2, 9)), (2, 6))


def test_vit_block_shape_and_weights():
    blk = d2l.ViTBlock(24, 24, 48, 4, 0.0)
    assert blk.attention_weights is None
    X = torch.randn(2, 17, 24)
    d2l.check_shape(blk(X), (2, 17, 24))
    w = blk.attention_weights
    d2l.check_shape(w, (2, 4, 17, 17))
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 4, 17))
    with pytest.raises(ValueError, match=r"\(batch, steps, 24\), got shape \(2, 17"):
        blk(torch.randn(2, 17, 12))


def test_vit_block_is_pre_norm():
    """With both branches zeroed the block is the identity: no norm sits on the residual path."""
    blk = d2l.ViTBlock(8, 8, 16, 2, 0.0)
    with torch.no_grad():
        blk.attention.W_o.weight.zero_()
        blk.mlp.fc2.weight.zero_()
        blk.mlp.fc2.bias.zero_()
    X = 5 * torch.randn(3, 4, 8) + 2
    torch.testing.assert_close(blk(X), X)


def _small_vit(**kwargs) -> d2l.ViT:
    args = dict(img_size=8, patch_size=2, num_hiddens=16, mlp_num_hiddens=32, num_heads=2,
                num_blks=2, emb_dropout=0.0, blk_dropout=0.0, in_channels=1)  # fmt: skip
    args.update(kwargs)
    return d2l.ViT(**args)


def test_vit_shapes_parameters_and_attention_maps():
    torch.manual_seed(0)
    net = _small_vit(num_classes=7, lr=0.01)
    assert net.lr == 0.01
    d2l.check_shape(net.pos_embedding, (1, 17, 16))
    d2l.check_shape(net.cls_token, (1, 1, 16))
    logits = net(torch.randn(5, 1, 8, 8))
    d2l.check_shape(logits, (5, 7))
    maps = net.attention_weights
    assert len(maps) == 2
    for w in maps:
        d2l.check_shape(w, (5, 2, 17, 17))
    d, mlp, m = 16, 32, 16
    stem = (1 * 2 * 2 * d + d) + d + (m + 1) * d  # patch conv, [CLS], positions
    block = 2 * 2 * d + 4 * d * d + (d * mlp + mlp) + (mlp * d + d)  # 2 LNs, W_q/k/v/o, MLP
    head = 2 * d + d * 7 + 7
    assert sum(p.numel() for p in net.parameters()) == stem + 2 * block + head


def test_vit_classifies_from_cls_only():
    """The logits depend on the patches only through the [CLS] position."""
    torch.manual_seed(0)
    net = _small_vit(num_blks=1).eval()
    X = torch.randn(2, 1, 8, 8)
    captured = {}
    net.head.register_forward_hook(lambda mod, inp, out: captured.update(x=inp[0]))
    logits = net(X)
    d2l.check_shape(captured["x"], (2, 16))
    torch.testing.assert_close(net.head(captured["x"]), logits)


def test_vit_without_positions_ignores_patch_order():
    """Zero position embeddings: shuffling the patches leaves the logits unchanged."""
    torch.manual_seed(0)
    net = _small_vit().eval()
    X = torch.randn(3, 1, 8, 8)
    # Swap the top-left and bottom-right 2x2 patches of every image.
    Y = X.clone()
    Y[..., 0:2, 0:2], Y[..., 6:8, 6:8] = X[..., 6:8, 6:8], X[..., 0:2, 0:2]
    assert not torch.allclose(net(X), net(Y), atol=1e-4)
    with torch.no_grad():
        net.pos_embedding.zero_()
    torch.testing.assert_close(net(X), net(Y), rtol=1e-4, atol=1e-5)


def test_vit_rejects_bad_images():
    net = _small_vit()
    with pytest.raises(ValueError, match=r"expected images of shape \(batch, 1, 8, 8\)"):
        net(torch.zeros(2, 1, 9, 9))
    with pytest.raises(ValueError, match="not divisible"):
        _small_vit(img_size=9)


# -- the scikit-learn digits -------------------------------------------------------------------


def test_digits_split_sizes_and_normalisation():
    X_tr, y_tr, X_te, y_te = d2l.load_digits_tensors(test_fraction=0.2, seed=0)
    assert X_tr.shape == (1437, 1, 8, 8) and X_te.shape == (360, 1, 8, 8)
    assert y_tr.shape == (1437,) and y_te.shape == (360,)
    assert X_tr.dtype == torch.float32 and y_tr.dtype == torch.long
    assert abs(float(X_tr.mean())) < 1e-5 and abs(float(X_tr.std()) - 1) < 1e-3
    # Stratified: each of the ten digits makes up about a tenth of either split.
    for y in (y_tr, y_te):
        counts = torch.bincount(y, minlength=10).float() / len(y)
        assert float(counts.min()) > 0.09 and float(counts.max()) < 0.11


def test_digits_split_is_seeded():
    a = d2l.load_digits_tensors(seed=3)
    b = d2l.load_digits_tensors(seed=3)
    c = d2l.load_digits_tensors(seed=4)
    assert all(torch.equal(u, v) for u, v in zip(a, b))
    assert not torch.equal(a[1], c[1])


def test_digits_loaders_batches_and_order():
    train_iter, test_iter = d2l.load_data_digits(batch_size=32, seed=0)
    X, y = next(iter(train_iter))
    assert X.shape == (32, 1, 8, 8) and y.shape == (32,)
    assert sum(len(y) for _, y in test_iter) == 360
    again, _ = d2l.load_data_digits(batch_size=32, seed=0)
    torch.manual_seed(123)  # the global state must not change the order
    assert torch.equal(next(iter(again))[1], y)


@pytest.mark.parametrize("kwargs", [dict(test_fraction=0.0), dict(test_fraction=1.0)])
def test_digits_rejects_bad_fraction(kwargs):
    with pytest.raises(ValueError, match="test_fraction"):
        d2l.load_digits_tensors(**kwargs)


def test_digits_rejects_bad_batch_size():
    with pytest.raises(ValueError, match="batch_size must be a positive int, got int 0"):
        d2l.load_data_digits(batch_size=0)


# -- Fashion-MNIST, offline on a fake archive ----------------------------------------------------


def _write_idx(path: Path, array: np.ndarray) -> None:
    if array.ndim == 3:
        header = struct.pack(">IIII", 2051, *array.shape)
    else:
        header = struct.pack(">II", 2049, len(array))
    with gzip.open(path, "wb") as f:
        f.write(header + array.astype(np.uint8).tobytes())


@pytest.fixture
def fake_mirror(tmp_path, monkeypatch) -> Path:
    """A folder that looks like the Fashion-MNIST server: 6 training and 4 test images."""
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    rng = np.random.default_rng(0)
    arrays = {
        "train-images-idx3-ubyte.gz": rng.integers(0, 256, (6, 28, 28)),
        "train-labels-idx1-ubyte.gz": np.arange(6) % 10,
        "t10k-images-idx3-ubyte.gz": rng.integers(0, 256, (4, 28, 28)),
        "t10k-labels-idx1-ubyte.gz": np.array([9, 8, 7, 6]),
    }
    digests = {}
    for name, array in arrays.items():
        _write_idx(mirror / name, array)
        digests[name] = hashlib.sha256((mirror / name).read_bytes()).hexdigest()
    monkeypatch.setattr(vision, "FASHION_MNIST_FILES", digests)
    monkeypatch.setattr(vision, "FASHION_MNIST_MIRRORS", ["https://fashion.invalid/data/"])
    return mirror


def _serve_from(mirror: Path, calls: list[str]):
    """A stand-in for the URL fetch that copies files out of a local folder."""

    def fetch(url: str, dest: Path, timeout: float = 60.0) -> None:
        calls.append(url)
        shutil.copyfile(mirror / url.rsplit("/", 1)[1], dest)

    return fetch


def test_fashion_mnist_downloads_verifies_and_caches(fake_mirror, tmp_path, monkeypatch):
    calls: list[str] = []
    monkeypatch.setattr(vision, "_fetch", _serve_from(fake_mirror, calls))
    cache = tmp_path / "cache"
    train_iter, test_iter = d2l.load_data_fashion_mnist(4, resize=14, root=cache)
    assert calls == [f"https://fashion.invalid/data/{n}" for n in vision.FASHION_MNIST_FILES]
    X, y = next(iter(train_iter))
    assert X.shape == (4, 1, 14, 14) and X.dtype == torch.float32 and y.dtype == torch.long
    assert 0 <= float(X.min()) and float(X.max()) <= 1
    X_te, y_te = next(iter(test_iter))
    assert X_te.shape == (4, 1, 14, 14) and y_te.tolist() == [9, 8, 7, 6]
    assert sorted(p.name for p in cache.iterdir()) == sorted(vision.FASHION_MNIST_FILES)
    # A second call reads the verified cache and fetches nothing.
    calls.clear()
    train_iter, _ = d2l.load_data_fashion_mnist(3, root=cache)
    assert calls == []
    assert next(iter(train_iter))[0].shape == (3, 1, 28, 28)


def test_fashion_mnist_file_urls_without_network(fake_mirror, tmp_path, monkeypatch):
    """The real fetch, pointed at a local folder through file:// URLs."""
    monkeypatch.setattr(vision, "FASHION_MNIST_MIRRORS", [fake_mirror.as_uri() + "/"])
    _, test_iter = d2l.load_data_fashion_mnist(2, root=tmp_path / "cache")
    assert sum(len(y) for _, y in test_iter) == 4


def test_fashion_mnist_sha256_mismatch(fake_mirror, tmp_path, monkeypatch):
    monkeypatch.setattr(vision, "_fetch", _serve_from(fake_mirror, []))
    digests = dict(vision.FASHION_MNIST_FILES)
    digests["train-labels-idx1-ubyte.gz"] = "0" * 64
    monkeypatch.setattr(vision, "FASHION_MNIST_FILES", digests)
    cache = tmp_path / "cache"
    with pytest.raises(ValueError, match=r"sha256 mismatch for train-labels-idx1-ubyte.gz .*"
                       r"expected 0{64}, got [0-9a-f]{64}"):  # fmt: skip
        d2l.load_data_fashion_mnist(2, root=cache)
    assert not (cache / "train-labels-idx1-ubyte.gz").exists()
    assert not list(cache.glob("*.part"))


def test_fashion_mnist_refetches_a_damaged_cache(fake_mirror, tmp_path, monkeypatch):
    calls: list[str] = []
    monkeypatch.setattr(vision, "_fetch", _serve_from(fake_mirror, calls))
    cache = tmp_path / "cache"
    d2l.load_data_fashion_mnist(2, root=cache)
    (cache / "t10k-labels-idx1-ubyte.gz").write_bytes(b"damaged")
    calls.clear()
    d2l.load_data_fashion_mnist(2, root=cache)
    assert calls == ["https://fashion.invalid/data/t10k-labels-idx1-ubyte.gz"]


def test_download_tries_the_next_mirror_and_reports_failures(fake_mirror, tmp_path, monkeypatch):
    calls: list[str] = []
    serve = _serve_from(fake_mirror, calls)

    def flaky(url: str, dest: Path, timeout: float = 60.0) -> None:
        if "down.invalid" in url:
            calls.append(url)
            raise OSError("connection refused")
        serve(url, dest)

    monkeypatch.setattr(vision, "_fetch", flaky)
    name = "t10k-labels-idx1-ubyte.gz"
    digest = vision.FASHION_MNIST_FILES[name]
    path = d2l.download_verified(name, ["https://down.invalid/", "https://up.invalid/"], digest,
                                 tmp_path / "a")  # fmt: skip
    assert path.read_bytes() == (fake_mirror / name).read_bytes()
    assert [u.split("/")[2] for u in calls] == ["down.invalid", "up.invalid"]
    with pytest.raises(OSError, match="(?s)could not download .*down.invalid.*connection refused"):
        d2l.download_verified(name, ["https://down.invalid/"], digest, tmp_path / "b")


def test_read_idx_rejects_bad_files(tmp_path):
    bad_magic = tmp_path / "magic.gz"
    with gzip.open(bad_magic, "wb") as f:
        f.write(struct.pack(">II", 1234, 0))
    with pytest.raises(ValueError, match="magic number must be 2049 or 2051, got 1234"):
        d2l.read_idx(bad_magic)
    short = tmp_path / "short.gz"
    with gzip.open(short, "wb") as f:
        f.write(struct.pack(">IIII", 2051, 2, 28, 28) + bytes(100))
    with pytest.raises(ValueError, match=r"promises shape \(2, 28, 28\) \(1568 bytes\)"):
        d2l.read_idx(short)


def test_fashion_mnist_published_digests_look_right():
    assert set(vision.FASHION_MNIST_FILES) == {
        "train-images-idx3-ubyte.gz",
        "train-labels-idx1-ubyte.gz",
        "t10k-images-idx3-ubyte.gz",
        "t10k-labels-idx1-ubyte.gz",
    }
    for digest in vision.FASHION_MNIST_FILES.values():
        assert re.fullmatch(r"[0-9a-f]{64}", digest), digest  # a lower-case sha256 digest
    assert len(vision.FASHION_MNIST_LABELS) == 10


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(batch_size=0), "batch_size must be a positive int, got int 0"),
        (dict(batch_size=4, resize=(28, 0)), r"resize must be a positive int, got int 0"),
        (dict(batch_size=4, resize=(1, 2, 3)), r"resize must be a positive int or \(h, w\)"),
    ],
)
def test_fashion_mnist_rejects_bad_arguments_before_downloading(kwargs, message, monkeypatch):
    def no_network(url: str, dest: Path, timeout: float = 60.0) -> None:
        raise AssertionError("nothing may be fetched")

    monkeypatch.setattr(vision, "_fetch", no_network)
    with pytest.raises(ValueError, match=message):
        d2l.load_data_fashion_mnist(**kwargs)
