"""Image data for the vision chapter: scikit-learn's 8×8 digits and an optional Fashion-MNIST.

The digits ship inside scikit-learn, so the book and its tests never download anything.
Fashion-MNIST (28×28) is for readers with a GPU (Colab): :func:`load_data_fashion_mnist`
downloads it once, checks it against published SHA-256 digests and caches it. Only a reader's
explicit call downloads: chapter 9 calls it only after the reader turns its
``use_fashion_mnist`` switch on, whatever the device (a GPU alone downloads nothing), and no
test downloads.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import struct
import sys
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import torch
from torch import Tensor
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset

from . import checks
from .utils import _seed
from .utils import generator as seeded_generator

__all__ = [
    "FASHION_MNIST_FILES",
    "FASHION_MNIST_LABELS",
    "FASHION_MNIST_MIRRORS",
    "download_verified",
    "load_data_digits",
    "load_data_fashion_mnist",
    "load_digits_tensors",
    "read_idx",
    "sha256_of",
]


# -- the 8×8 digits that ship with scikit-learn -----------------------------------------------


def load_digits_tensors(
    test_fraction: float = 0.2, seed: int = 0
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """The 1,797 scikit-learn digits split (stratified, seeded) and standardised.

    Returns ``X_train`` (n_train, 1, 8, 8), ``y_train`` (n_train,), ``X_test``, ``y_test``.
    Pixels (0–16) are standardised with the mean and standard deviation of the training
    images only, so nothing about the test images leaks into training.
    """
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"test_fraction must lie strictly between 0 and 1, got {test_fraction}")
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    images = digits.images.astype(np.float32)  # (1797, 8, 8), values 0..16
    X_tr, X_te, y_tr, y_te = train_test_split(
        images,
        digits.target,
        test_size=test_fraction,
        random_state=_seed(seed),
        stratify=digits.target,
    )
    mean, std = X_tr.mean(), X_tr.std()
    X_tr, X_te = (X_tr - mean) / std, (X_te - mean) / std
    return (
        torch.from_numpy(X_tr).unsqueeze(1),
        torch.from_numpy(y_tr).long(),
        torch.from_numpy(X_te).unsqueeze(1),
        torch.from_numpy(y_te).long(),
    )


def load_data_digits(
    batch_size: int = 64, test_fraction: float = 0.2, seed: int = 0
) -> tuple[DataLoader, DataLoader]:
    """DataLoaders over the 8×8 digits: minibatches X (batch, 1, 8, 8) and y (batch,).

    The training loader shuffles with its own generator seeded by ``seed``, so the order of
    minibatches repeats from run to run whatever else used the global random state.
    """
    batch_size = checks.check_scalar(batch_size, "batch_size", int, low=1)
    X_tr, y_tr, X_te, y_te = load_digits_tensors(test_fraction, seed)
    generator = seeded_generator(seed)
    train_iter = DataLoader(
        TensorDataset(X_tr, y_tr), batch_size=batch_size, shuffle=True, generator=generator
    )
    test_iter = DataLoader(TensorDataset(X_te, y_te), batch_size=batch_size, shuffle=False)
    return train_iter, test_iter


# -- Fashion-MNIST: download once, verify, cache ----------------------------------------------

#: Where the four archives can be fetched from, tried in order.
FASHION_MNIST_MIRRORS = [
    "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
    "https://raw.githubusercontent.com/zalandoresearch/fashion-mnist/master/data/fashion/",
]

#: SHA-256 digests of the published archives (Zalando Research's Fashion-MNIST release).
FASHION_MNIST_FILES = {
    "train-images-idx3-ubyte.gz": (
        "3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84"
    ),
    "train-labels-idx1-ubyte.gz": (
        "a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845"
    ),
    "t10k-images-idx3-ubyte.gz": (
        "346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073"
    ),
    "t10k-labels-idx1-ubyte.gz": (
        "67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5"
    ),
}

#: Class names, index = label.
FASHION_MNIST_LABELS = [
    "t-shirt",
    "trouser",
    "pullover",
    "dress",
    "coat",
    "sandal",
    "shirt",
    "sneaker",
    "bag",
    "ankle boot",
]

_CACHE_ENV = "D2LITE_DATA"


def _default_root() -> Path:
    return Path(os.environ.get(_CACHE_ENV, Path.home() / ".cache" / "d2lite")).expanduser()


def _file_digest(path: str | os.PathLike, algorithm: str = "sha256") -> str:
    """The hexadecimal digest of a file's bytes (``algorithm`` as ``hashlib.new`` names it)."""
    digest = hashlib.new(algorithm)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def sha256_of(path: str | os.PathLike) -> str:
    """The hexadecimal SHA-256 digest of a file's bytes."""
    return _file_digest(path, "sha256")


def _fetch(url: str, dest: Path, timeout: float = 60.0, progress: bool = False) -> None:
    """Copy the bytes at ``url`` into ``dest``; with ``progress``, a tqdm bar on stderr named
    after the URL's file (tests replace this, or ``urllib.request.urlopen``, to stay offline)."""
    from tqdm.std import tqdm

    name = url.rstrip("/").split("/")[-1]
    with urllib.request.urlopen(url, timeout=timeout) as response, open(dest, "wb") as out:
        total = response.headers.get("Content-Length") if progress else None
        with tqdm(total=int(total) if total else None, desc=name, unit="B", unit_scale=True,
                  unit_divisor=1024, file=sys.stderr, disable=not progress) as bar:
            for block in iter(lambda: response.read(1 << 16), b""):
                out.write(block)
                bar.update(len(block))


def _fetch_verified(
    urls: list[str],
    path: str | os.PathLike,
    digest: str | None,
    algorithm: str = "sha256",
    fetch=None,
) -> Path:
    """The one downloader of the package (``download_verified`` and ``d2lite.d2l.download``).

    Return ``path``, first downloading it from the first of ``urls`` that answers unless a
    file is there whose ``algorithm`` digest equals ``digest`` (any file when ``digest`` is
    None); a stale or damaged copy is removed first. A download whose digest differs raises
    ``ValueError`` (expected vs received digest) and leaves nothing behind; when no URL
    answers, ``OSError`` lists each URL with its error and says where to put the file by hand.
    ``fetch(url, dest)`` copies the bytes, ``_fetch`` by default.
    """
    if not urls:
        raise ValueError(f"no URL given for {path}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        if digest is None or _file_digest(path, algorithm) == digest:
            return path
        path.unlink()  # a stale or damaged copy: fetch it again
    tmp = path.with_name(path.name + ".part")
    errors = []
    for url in urls:
        try:
            (fetch or _fetch)(url, tmp)
        except (urllib.error.URLError, OSError) as err:
            errors.append((url, err))
            tmp.unlink(missing_ok=True)
            continue
        if digest is not None:
            got = _file_digest(tmp, algorithm)
            if got != digest:
                tmp.unlink()
                raise ValueError(
                    f"{algorithm} mismatch for {path.name} from {url}: expected {digest}, got {got}"
                )
        os.replace(tmp, path)
        return path
    tried = "\n  ".join(f"{url}: {err}" for url, err in errors)
    raise OSError(
        f"could not download {path.name}; tried:\n  {tried}\nAre you offline? Download it "
        f"elsewhere and put it at {path.resolve()}"
    ) from errors[-1][1]


def download_verified(
    name: str, mirrors: list[str], sha256: str, root: str | os.PathLike | None = None
) -> Path:
    """Return the cached path of file ``name``, downloading it first if needed.

    A cached file is used only when its SHA-256 equals ``sha256``; otherwise it is fetched
    again from the first mirror that answers. A download whose digest differs raises
    ``ValueError`` (expected vs received digest) and leaves nothing in the cache.
    """
    if not mirrors:
        raise ValueError(f"no mirror given for {name}")
    root = Path(root) if root is not None else _default_root()
    urls = [base.rstrip("/") + "/" + name for base in mirrors]
    return _fetch_verified(urls, root / name, sha256, "sha256")


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Read a gzipped IDX file (the MNIST format): uint8 images (n, rows, cols) or labels (n,)."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError(f"{path}: {len(data)} bytes is too short for an IDX header")
    magic, count = struct.unpack(">II", data[:8])
    if magic == 2049:  # labels
        shape, offset = (count,), 8
    elif magic == 2051:  # images
        rows, cols = struct.unpack(">II", data[8:16])
        shape, offset = (count, rows, cols), 16
    else:
        raise ValueError(f"{path}: IDX magic number must be 2049 or 2051, got {magic}")
    expected = int(np.prod(shape))
    if len(data) - offset != expected:
        raise ValueError(
            f"{path}: header promises shape {shape} ({expected} bytes), "
            f"the file holds {len(data) - offset}"
        )
    return np.frombuffer(data, dtype=np.uint8, offset=offset).reshape(shape)


def load_data_fashion_mnist(
    batch_size: int,
    resize: int | tuple[int, int] | None = None,
    root: str | os.PathLike | None = None,
    seed: int = 0,
) -> tuple[DataLoader, DataLoader]:
    """Fashion-MNIST loaders (downloads ~30 MB once): X (batch, 1, h, w) in [0, 1], y (batch,).

    Images are 28×28 unless ``resize`` is given (an int or ``(h, w)``; resized per minibatch
    with bilinear interpolation). The cache lives in ``root``, by default ``$D2LITE_DATA`` or
    ``~/.cache/d2lite``. Meant for Colab or a GPU; the book's chapters use the digits.
    """
    batch_size = checks.check_scalar(batch_size, "batch_size", int, low=1)
    if resize is not None:
        pair = isinstance(resize, (tuple, list))
        size = tuple(resize) if pair else (resize, resize)
        if len(size) != 2:
            raise ValueError(f"resize must be a positive int or (h, w), got {resize!r}")
        size = tuple(checks.check_scalar(v, "resize", int, low=1) for v in size)
    paths = {
        name: download_verified(name, FASHION_MNIST_MIRRORS, digest, root)
        for name, digest in FASHION_MNIST_FILES.items()
    }

    def split(prefix: str) -> TensorDataset:
        images = read_idx(paths[f"{prefix}-images-idx3-ubyte.gz"])
        labels = read_idx(paths[f"{prefix}-labels-idx1-ubyte.gz"])
        if len(images) != len(labels):
            raise ValueError(f"{prefix}: {len(images)} images but {len(labels)} labels")
        return TensorDataset(torch.from_numpy(images.copy()), torch.from_numpy(labels.copy()))

    def collate(batch):
        X = torch.stack([x for x, _ in batch]).unsqueeze(1).float() / 255
        y = torch.stack([y for _, y in batch]).long()
        if resize is not None and X.shape[-2:] != size:
            X = F.interpolate(X, size=size, mode="bilinear", align_corners=False)
        return X, y

    generator = seeded_generator(seed)
    train_iter = DataLoader(
        split("train"), batch_size, shuffle=True, collate_fn=collate, generator=generator
    )
    test_iter = DataLoader(split("t10k"), batch_size, shuffle=False, collate_fn=collate)
    return train_iter, test_iter
