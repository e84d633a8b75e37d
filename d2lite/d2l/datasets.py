"""d2l's data on the network: ``download`` and ``extract``, and the data modules
``MTFraEng`` and ``FashionMNIST``, downloaded on demand and verified by their digests."""

from __future__ import annotations

import importlib
import os
import zipfile
from pathlib import Path

import torch
from matplotlib import pyplot as plt
from torch.nn import functional as F

from .aliases import _pair
from .framework import DataModule, Vocab

#: Where d2l's data sets live.
DATA_URL = "http://d2l-data.s3-accelerate.amazonaws.com/"

#: file name -> (url, algorithm, digest). fra-eng.zip is pinned by the SHA-1 that d2l
#: publishes for it (no SHA-256 of the archive is published); the Fashion-MNIST files by the
#: SHA-256 digests of Zalando Research's release (``d2lite.vision.FASHION_MNIST_FILES``).
DATA_HUB: dict[str, tuple[str, str, str]] = {
    "fra-eng.zip": (DATA_URL + "fra-eng.zip", "sha1", "94646ad1522d915e7b0f9296181140edcf86a4f5"),
}


def download(url: str, folder: str | os.PathLike = "../data", digest: str | None = None,
             algorithm: str = "sha256", timeout: float = 60.0) -> str:
    """Download ``url`` into ``folder`` (once) with a progress bar; return the file's path.

    A cached file is reused when its digest matches. Without a network connection this
    raises ``OSError`` naming the URL and the place to put the file by hand; a file whose
    digest differs raises ``ValueError`` and is not kept. The work is done by the package's one
    downloader, the one behind ``d2lite.download_verified``.
    """
    vision = importlib.import_module("d2lite.vision")

    def fetch(url, dest):
        vision._fetch(url, dest, timeout, progress=True)

    path = Path(folder) / url.rstrip("/").split("/")[-1]
    return str(vision._fetch_verified([url], path, digest, algorithm, fetch))


def extract(filename: str | os.PathLike, folder: str | os.PathLike | None = None) -> str:
    """Unpack a zip archive next to it (or into ``folder``); return the folder."""
    filename = Path(filename)
    if filename.suffix != ".zip":
        raise ValueError(f"only zip archives can be extracted, got {filename}")
    folder = Path(folder) if folder is not None else filename.parent
    with zipfile.ZipFile(filename) as archive:
        archive.extractall(folder)
    return str(folder)


class MTFraEng(DataModule):
    """The English-French pairs d2l trains on, downloaded on demand (``fra-eng.zip``).

    ``arrays`` = (src, tgt_input, src_valid_len, tgt_label); vocabularies keep tokens seen at
    least twice; every sentence is padded or cut to ``num_steps``.
    """

    def __init__(self, batch_size, num_steps=9, num_train=512, num_val=128, root="../data"):
        super().__init__(root=root)
        self.save_hyperparameters()
        self.arrays, self.src_vocab, self.tgt_vocab = self._build_arrays(self._download())

    def _download(self) -> str:
        url, algorithm, digest = DATA_HUB["fra-eng.zip"]
        folder = extract(download(url, self.root, digest, algorithm))
        with open(Path(folder) / "fra-eng" / "fra.txt", encoding="utf-8") as f:
            return f.read()

    def _preprocess(self, text: str) -> str:
        text = text.replace("\u202f", " ").replace("\xa0", " ").lower()
        out = []
        for i, char in enumerate(text):
            if i > 0 and char in ",.!?" and text[i - 1] != " ":
                out.append(" ")
            out.append(char)
        return "".join(out)

    def _tokenize(self, text: str, max_examples=None):
        src, tgt = [], []
        for i, line in enumerate(text.split("\n")):
            if max_examples and i > max_examples:
                break
            parts = line.split("\t")
            if len(parts) == 2:
                src.append([t for t in f"{parts[0]} <eos>".split(" ") if t])
                tgt.append([t for t in f"{parts[1]} <eos>".split(" ") if t])
        return src, tgt

    def _build_arrays(self, raw_text, src_vocab=None, tgt_vocab=None):
        def build(sentences, vocab, is_tgt=False):
            t = self.num_steps
            sentences = [s[:t] if len(s) > t else s + ["<pad>"] * (t - len(s)) for s in sentences]
            if is_tgt:
                sentences = [["<bos>", *s] for s in sentences]
            if vocab is None:
                vocab = Vocab(sentences, min_freq=2)
            array = torch.tensor([vocab[s] for s in sentences])
            valid_len = (array != vocab["<pad>"]).type(torch.int32).sum(1)
            return array, vocab, valid_len

        src, tgt = self._tokenize(self._preprocess(raw_text), self.num_train + self.num_val)
        src_array, src_vocab, src_valid_len = build(src, src_vocab)
        tgt_array, tgt_vocab, _ = build(tgt, tgt_vocab, True)
        return ((src_array, tgt_array[:, :-1], src_valid_len, tgt_array[:, 1:]),
                src_vocab, tgt_vocab)

    def get_dataloader(self, train):
        idx = slice(0, self.num_train) if train else slice(self.num_train, None)
        return self.get_tensorloader(self.arrays, train, idx)

    def build(self, src_sentences, tgt_sentences):
        raw_text = "\n".join(f"{s}\t{t}" for s, t in zip(src_sentences, tgt_sentences))
        arrays, _, _ = self._build_arrays(raw_text, self.src_vocab, self.tgt_vocab)
        return arrays


class FashionMNIST(DataModule):
    """Fashion-MNIST as d2l 1.0's data module: images (batch, 1, h, w) in [0, 1], resized to
    ``resize``; the four archives are downloaded on demand and checked by SHA-256."""

    MIRROR = "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"

    def __init__(self, batch_size=64, resize=(28, 28), root="../data"):
        super().__init__(root=root)
        self.save_hyperparameters()
        vision = importlib.import_module("d2lite.vision")

        folder = Path(root) / "FashionMNIST"
        paths = {name: download(self.MIRROR + name, folder, digest, "sha256")
                 for name, digest in vision.FASHION_MNIST_FILES.items()}

        def split(prefix):  # kept as uint8; converted and resized batch by batch
            images = vision.read_idx(paths[f"{prefix}-images-idx3-ubyte.gz"])
            labels = vision.read_idx(paths[f"{prefix}-labels-idx1-ubyte.gz"])
            return torch.from_numpy(images.copy()), torch.from_numpy(labels.copy()).long()

        self.train = split("train")
        self.val = split("t10k")

    def _collate(self, batch):
        X = torch.stack([x for x, _ in batch]).unsqueeze(1).float() / 255
        if tuple(X.shape[-2:]) != _pair(self.resize):
            X = F.interpolate(X, size=_pair(self.resize), mode="bilinear", align_corners=False)
        return X, torch.stack([y for _, y in batch])

    def text_labels(self, indices):
        vision = importlib.import_module("d2lite.vision")

        return [vision.FASHION_MNIST_LABELS[int(i)] for i in indices]

    def get_dataloader(self, train):
        data = torch.utils.data.TensorDataset(*(self.train if train else self.val))
        return torch.utils.data.DataLoader(data, self.batch_size, shuffle=train,
                                           collate_fn=self._collate)

    def visualize(self, batch, nrows=1, ncols=8, labels=()):
        X, y = batch
        if not labels:
            labels = self.text_labels(y)
        fig, axes = plt.subplots(nrows, ncols, figsize=(1.2 * ncols, 1.4 * nrows), squeeze=False)
        for ax, img, label in zip(axes.flat, X.squeeze(1), labels):
            ax.imshow(img.detach().cpu().numpy(), cmap="gray")
            ax.set_title(label)
            ax.axis("off")
