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
import html
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


def _check_paragraphs(paragraphs: object) -> None:
    if not isinstance(paragraphs, (list, tuple)) or not all(isinstance(p, str) for p in paragraphs):
        raise TypeError(f"paragraphs must be a list of str, got {type(paragraphs).__name__}")


def corpus_sha256(paragraphs: list[str]) -> str:
    """The sha256 of the paragraphs joined by newlines (UTF-8), as model.json records it."""
    _check_paragraphs(paragraphs)
    return hashlib.sha256("\n".join(paragraphs).encode("utf-8")).hexdigest()


def paragraph_keys(paragraphs: list[str]) -> list[str]:
    """A short fingerprint of each paragraph (the first 16 hex digits of its sha256): what
    model.json keeps of its training text, so that a held-out paragraph can be checked against
    it without shipping the text."""
    _check_paragraphs(paragraphs)
    return [hashlib.sha256(p.encode("utf-8")).hexdigest()[:16] for p in paragraphs]


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
        "tokenizer": {
            "unit": tok.unit,
            "alphabet": tok.alphabet,
            "merges": [list(m) for m in tok.merges],
        },
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
        raise ValueError(
            f"weights.bin holds {data.size} floats, model.json says {meta['num_floats']}"
        )
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
        raise ValueError(
            f"texts give {len(stream)} tokens: too few for one window of num_steps={num_steps}"
        )
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


def _piece(tok: BPETokenizer, i: int) -> str:
    """One token as BPETokenizer.pieces shows it (bytes of part of a character as <0xNN>)."""
    piece = tok.decode([i])
    if "\ufffd" in piece:
        piece = "".join(f"<0x{b:02X}>" if b < 256 else tok.alphabet[b - 256]
                        for b in tok.parts[i])  # fmt: skip
    return piece


def generation_trace(net: GPT, tok: BPETokenizer, prompt: str, steps: int,
                     top: int = 3, top_p: float = 0.9) -> list[dict]:  # fmt: skip
    """Greedy generation from prompt, step by step with the key-value cache: for each step the
    context length before it, the token drawn, the top candidates (piece, probability), how
    many candidates top-p would keep, and the key/value rows computed per block with the cache
    (1) and without it (the whole context)."""
    if not isinstance(prompt, str) or not prompt:
        raise ValueError(f"prompt must be a non-empty str, got {prompt!r}")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be a positive int, got {steps!r}")
    ids = tok.encode(prompt)
    if len(ids) + steps > net.max_len:
        raise ValueError(
            f"a prompt of {len(ids)} tokens and steps={steps} exceed max_len {net.max_len}"
        )
    net.eval()
    rows, cache = [], net.init_cache()
    with torch.no_grad():
        logits = net(torch.tensor([ids]), cache)[0, -1]
        for _ in range(steps):
            probs = torch.softmax(logits, -1)
            ranked, order = torch.sort(probs, descending=True, stable=True)
            kept = int(((ranked.cumsum(-1) - ranked) < top_p).sum())
            pick = int(order[0])
            rows.append({
                "context": len(cache[0]), "id": pick, "token": _piece(tok, pick),
                "candidates": [(_piece(tok, int(i)), float(p))
                               for p, i in zip(ranked[:top], order[:top])],
                "top_p_kept": kept, "rows_cached": 1, "rows_uncached": len(cache[0]) + 1,
            })  # fmt: skip
            logits = net(torch.tensor([[pick]]), cache)[0, -1]
    return rows


def _show(piece: str) -> str:
    return html.escape(piece.replace(" ", "\u2423").replace("\n", "\u21b5"))


def _both(ko: str, en: str, tag: str = "span") -> str:
    return (
        f'<{tag} class="lang-ko" lang="ko">{ko}</{tag}>'
        f'<{tag} class="lang-en" lang="en">{en}</{tag}>'
    )


class GPTPlayground:
    """The book's GPT in the reader's browser (the website's _static/gpt/playground.js), with
    a static trace of one greedy generation that only print (and the PDF) shows.

    Displayed in a notebook, the live part needs the website's files (static_base, relative to
    the page); elsewhere (Colab, a plain Jupyter) it says so and shows the trace instead."""

    def __init__(self, prompt: str = "트랜스포머는", steps: int = 12,
                 static_base: str = "../_static/gpt/") -> None:  # fmt: skip
        if not isinstance(static_base, str) or not static_base.endswith("/"):
            raise ValueError(f"static_base must be a str ending in '/', got {static_base!r}")
        self.prompt, self.static_base = prompt, static_base
        net, tok, self.meta = load_gpt()
        self.trace = generation_trace(net, tok, prompt, steps)
        self.generated = tok.decode([r["id"] for r in self.trace])

    def trace_html(self) -> str:
        head = ("<tr><th>" + _both("단계", "step") + "</th><th>" + _both("문맥", "context")
                + "</th><th>" + _both("상위 후보", "top candidates") + "</th><th>"
                + _both("top-p 0.9가 남기는 수", "kept by top-p 0.9") + "</th><th>"
                + _both("계산한 행 (캐시 / 없이)", "rows computed (cache / none)")
                + "</th></tr>")  # fmt: skip
        body = []
        for k, r in enumerate(self.trace, 1):
            cands = ", ".join(
                f"{'<b>' if i == 0 else ''}{_show(p)} {100 * q:.0f}%{'</b>' if i == 0 else ''}"
                for i, (p, q) in enumerate(r["candidates"])
            )
            body.append(f"<tr><td>{k}</td><td>{r['context']}</td><td>{cands}</td>"
                        f"<td>{r['top_p_kept']}</td><td>{r['rows_cached']} / "
                        f"{r['rows_uncached']}</td></tr>")  # fmt: skip
        text, new = html.escape(self.prompt), _show(self.generated)
        caption = _both(
            f"놀이터에서 한 번 생성한 기록(탐욕 디코딩, 프롬프트 「{html.escape(self.prompt)}」): "
            f"단계마다 가장 확률이 높은 후보(굵게)를 고릅니다. 캐시가 있으면 층마다 키·값 행을 "
            f"하나만 계산하고, 없으면 문맥 전체를 다시 계산합니다. 결과: {text}<b>{new}</b>",
            f"One generation in the playground (greedy decoding, prompt "
            f"\u201c{html.escape(self.prompt)}\u201d): each step takes the most probable "
            f"candidate (bold). With the cache each layer computes one key/value row per step; "
            f"without it, the whole context again. Result: {text}<b>{new}</b>",
            "p",
        )
        return (
            f'<div class="gpt-trace">{caption}<table class="gpt-trace-table">'
            f"<thead>{head}</thead><tbody>{''.join(body)}</tbody></table></div>"
        )

    def _repr_html_(self) -> str:
        base = html.escape(self.static_base, quote=True)
        fallback = _both(
            "이 놀이터는 책의 웹사이트에서 브라우저 안의 GPT로 돌아갑니다.",
            "This playground runs the GPT inside the browser on the book's website.",
            "p",
        )
        return (
            f'<link rel="stylesheet" href="{base}playground.css">'
            f'<div class="gpt-playground" data-prompt="{html.escape(self.prompt, quote=True)}">'
            f"{fallback}</div>{self.trace_html()}"
            f'<script src="{base}gpt.js"></script><script src="{base}playground.js"></script>'
        )


def playground(prompt: str = "트랜스포머는", steps: int = 12) -> GPTPlayground:
    """The playground of the book's GPT for a page of the website (see GPTPlayground)."""
    return GPTPlayground(prompt, steps)


__all__ = ["bits_per_char", "load_gpt", "playground", "save_gpt"]
