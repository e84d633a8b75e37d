"""The GPT shipped with the book: saving and loading a ``GPT`` with its tokenizer, and bits per
character on held-out text.

``python -m tools.train_lm`` trains the book's ``GPT`` (chapter 10) larger and longer on the
book's Korean prose and writes it with :func:`save_gpt` twice: into ``_static/gpt/`` for the
website's playground (read by ``_static/gpt/gpt.js``) and into ``d2lite/gpt_model/`` as package
data, so a notebook in Colab loads it with :func:`load_gpt` and nothing to download.

The format is two files:

* ``model.json``: ``config`` (the ``GPT`` constructor's arguments), ``tokenizer`` (``unit``,
  ``alphabet``, ``merges``: a ``BPETokenizer``), ``tensors`` (name, shape and offset in floats of
  every tensor, in the order of the file), and whatever the trainer records beside them (corpus
  hash, bits per character, training log).
* ``weights.bin``: the tensors' float32 values, little-endian, row-major, one after another in the
  order of ``tensors``: the parameters of ``GPT.state_dict()`` in its order, without
  ``head.weight`` (the output layer shares the token embedding's matrix).
"""

from __future__ import annotations

import hashlib
import json
import math
from importlib import resources
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .lm import GPT, BPETokenizer

FORMAT = "d2lite-gpt-1"
_TIED = "head.weight"


def corpus_sha256(paragraphs: list[str]) -> str:
    """The sha256 of the paragraphs joined by newlines (UTF-8), as model.json records it."""
    if not isinstance(paragraphs, (list, tuple)) or not all(
        isinstance(p, str) for p in paragraphs
    ):
        raise TypeError(f"paragraphs must be a list of str, got {type(paragraphs).__name__}")
    return hashlib.sha256("\n".join(paragraphs).encode("utf-8")).hexdigest()


def save_gpt(net: GPT, tok: BPETokenizer, directory: str | Path, **extra) -> Path:
    """Write net and tok to directory/model.json and directory/weights.bin; extra (JSON
    values) is recorded in model.json beside config, tokenizer and tensors. Returns the
    directory."""
    if not isinstance(net, GPT):
        raise TypeError(f"net must be a d2lite GPT, got {type(net).__name__}")
    if not isinstance(tok, BPETokenizer):
        raise TypeError(f"tok must be a BPETokenizer, got {type(tok).__name__}")
    if len(tok) != net.vocab_size:
        raise ValueError(f"tok has {len(tok)} tokens but net.vocab_size is {net.vocab_size}")
    for key in ("config", "tokenizer", "tensors", "format"):
        if key in extra:
            raise ValueError(f"extra must not set {key!r}: save_gpt writes it")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    blk = net.blks[0]
    config = {
        "vocab_size": net.vocab_size,
        "num_hiddens": net.ln.normalized_shape[0],
        "num_heads": blk.attention.num_heads,
        "num_blks": len(net.blks),
        "max_len": net.max_len,
        "layer_norm_eps": net.ln.eps,
    }
    tensors, chunks, offset = [], [], 0
    for name, value in net.state_dict().items():
        if name == _TIED:
            continue
        arr = value.detach().cpu().to(torch.float32).contiguous().numpy().astype("<f4")
        tensors.append({"name": name, "shape": list(arr.shape), "offset": offset})
        chunks.append(arr.tobytes())
        offset += arr.size
    meta = {
        "format": FORMAT,
        "config": config,
        "tokenizer": {"unit": tok.unit, "alphabet": tok.alphabet,
                      "merges": [list(m) for m in tok.merges]},
        "tensors": tensors,
        "num_floats": offset,
        **extra,
    }
    (directory / "weights.bin").write_bytes(b"".join(chunks))
    (directory / "model.json").write_text(
        json.dumps(meta, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    return directory


def _package_dir():
    return resources.files("d2lite").joinpath("gpt_model")


def load_gpt(directory: str | Path | None = None) -> tuple[GPT, BPETokenizer, dict]:
    """Read a GPT written by save_gpt -> (net in eval mode, tokenizer, everything model.json
    records). directory=None: the model shipped inside d2lite (trained by tools.train_lm)."""
    if directory is None:
        base = _package_dir()
    elif isinstance(directory, (str, Path)):
        base = Path(directory)
    else:
        raise TypeError(f"directory must be a path or None, got {type(directory).__name__}")
    meta_file, weight_file = base.joinpath("model.json"), base.joinpath("weights.bin")
    if not meta_file.is_file() or not weight_file.is_file():
        raise ValueError(f"directory must hold model.json and weights.bin, got {base}")
    meta = json.loads(meta_file.read_text(encoding="utf-8"))
    if meta.get("format") != FORMAT:
        raise ValueError(f"model.json must have format {FORMAT!r}, got {meta.get('format')!r}")
    cfg = meta["config"]
    t = meta["tokenizer"]
    tok = BPETokenizer(t["unit"], t["alphabet"], [tuple(m) for m in t["merges"]])
    net = GPT(cfg["vocab_size"], cfg["num_hiddens"], cfg["num_heads"], cfg["num_blks"],
              cfg["max_len"])  # fmt: skip
    data = np.frombuffer(weight_file.read_bytes(), dtype="<f4")
    if data.size != meta["num_floats"]:
        raise ValueError(f"weights.bin holds {data.size} floats, model.json says "
                         f"{meta['num_floats']}")
    state = {}
    for entry in meta["tensors"]:
        n = math.prod(entry["shape"])
        chunk = data[entry["offset"] : entry["offset"] + n].reshape(entry["shape"])
        state[entry["name"]] = torch.from_numpy(chunk.astype(np.float32))
    state[_TIED] = state["embedding.weight"]
    net.load_state_dict(state)
    return net.eval(), tok, meta


def bits_per_char(net: nn.Module, tok: BPETokenizer, texts: list[str],
                  num_steps: int) -> float:  # fmt: skip
    """Bits per character of net on texts (each followed by a newline, concatenated, encoded
    by tok), scored in consecutive windows of num_steps tokens: chapter 10's measure. The
    characters counted are those of the predicted tokens."""
    if not isinstance(tok, BPETokenizer):
        raise TypeError(f"tok must be a BPETokenizer, got {type(tok).__name__}")
    if not isinstance(texts, (list, tuple)) or not all(isinstance(s, str) for s in texts):
        raise TypeError(f"texts must be a list of str, got {type(texts).__name__}")
    if isinstance(num_steps, bool) or not isinstance(num_steps, int) or num_steps < 1:
        raise ValueError(f"num_steps must be a positive int, got {num_steps!r}")
    stream = torch.tensor([i for s in texts for i in tok.encode(s + "\n")])
    n = (len(stream) - 1) // num_steps * num_steps
    if n == 0:
        raise ValueError(f"texts give {len(stream)} tokens: too few for one window of "
                         f"num_steps={num_steps}")
    was_training = net.training
    net.eval()
    try:
        with torch.no_grad():
            nats = 0.0
            windows = stream[:n].reshape(-1, num_steps)
            targets = stream[1 : n + 1].reshape(-1, num_steps)
            for i in range(0, len(windows), 64):
                logits = net(windows[i : i + 64])
                nats += F.cross_entropy(logits.flatten(0, 1), targets[i : i + 64].flatten(),
                                        reduction="sum").item()  # fmt: skip
    finally:
        net.train(was_training)
    return nats / math.log(2) / len(tok.decode(stream[1 : n + 1]))


__all__ = ["bits_per_char", "corpus_sha256", "load_gpt", "save_gpt"]
