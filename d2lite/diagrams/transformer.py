"""Chapter 8's diagrams: the Transformer encoder–decoder, its masks, and post- vs pre-norm blocks.

Each runs the modules it is given on a small batch (through :func:`core.trace`, on a copy) and
prints the shapes they produced: change ``num_hiddens`` or ``num_blks`` and the figure changes.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from .core import FONT, Diagram, format_shape, trace

__all__ = ["draw_masks", "draw_norm_placement", "draw_transformer", "mask_weights"]

T = Callable[[str, str], str] | None


def _positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return value


def _coder(module: nn.Module, name: str) -> None:
    for attr in ("embedding", "blks", "num_hiddens", "vocab_size"):
        if not hasattr(module, attr):
            raise TypeError(
                f"{name} must be a Transformer {name} (d2l.Transformer{name.title()}) with "
                f"{attr}, got {type(module).__name__}"
            )


def _run(encoder, decoder, batch, src_steps, tgt_steps, valid_len=None):
    """Trace ``encoder`` on token ids (batch, src_steps) and ``decoder`` on (batch, tgt_steps)
    reading the encoder's output; ``valid_len`` source tokens are real, the rest padding."""
    src = torch.zeros(batch, src_steps, dtype=torch.long)
    tgt = torch.zeros(batch, tgt_steps, dtype=torch.long)
    valid = None if valid_len is None else torch.full((batch,), valid_len)
    enc = trace(encoder, src, valid)
    state = decoder.init_state(enc.output, valid)
    dec = trace(decoder, tgt, state)
    return src, tgt, enc, dec


def draw_transformer(
    encoder: nn.Module,
    decoder: nn.Module,
    *,
    batch: int = 2,
    src_steps: int = 5,
    tgt_steps: int = 4,
    t: T = None,
) -> Diagram:
    """The Transformer encoder–decoder: ``encoder``'s block (self-attention, add & norm, FFN,
    add & norm) repeated ``len(encoder.blks)`` times, ``decoder``'s block (masked self-attention,
    cross-attention whose keys and values are the encoder's output, FFN, each with add & norm)
    repeated ``len(decoder.blks)`` times, then the output layer. Residual paths go around every
    sublayer. Shapes come from running both on token ids of (batch, src_steps) and
    (batch, tgt_steps); ``shapes`` holds "src", "tgt", "enc_in", "dec_in", "memory" (the
    encoder's output) and "logits".
    """
    _coder(encoder, "encoder")
    _coder(decoder, "decoder")
    for value, name in ((batch, "batch"), (src_steps, "src_steps"), (tgt_steps, "tgt_steps")):
        _positive_int(value, name)
    src, tgt, enc, dec = _run(encoder, decoder, batch, src_steps, tgt_steps)
    logits, _ = dec.output
    title = ("트랜스포머 인코더–디코더", "The Transformer encoder–decoder")
    d = Diagram(6.4, 7.0, t=t, title=title)
    ex, dx, w, gap = 1.55, 4.75, 2.05, 0.57
    addnorm = ("더하기 & 정규화", "add & norm")
    ffn = ("위치별 FFN", "positionwise FFN")

    def column(x, rows, y0, side):
        """Boxes from y0 upward, an arrow between each, a residual into every add & norm."""
        parts, prev = [], None
        for i, (label, kind) in enumerate(rows):
            b = d.box(x, y0 + i * gap, label, kind=kind, w=w, h=0.38)
            if prev is not None:
                d.arrow(prev, b)
            if kind == "op":  # add & norm: the residual skips the sublayer below it
                below = parts[-2] if len(parts) >= 2 else None
                ya = (below.y1 + parts[-1].y0) / 2 if below else parts[-1].y0 - 0.11
                d.residual((x, ya), b, side=side, offset=0.18)
            parts.append(b)
            prev = b
        return parts

    # encoder
    s = d.box(ex, 0.25, ("원문 토큰", "source tokens"), kind="io", name="src_box")
    e = d.box(ex, 0.95, ("임베딩 + 위치", "embedding + position"), w=w, h=0.4, name="enc_embed")
    d.arrow(s, e, shape=src.shape, name="src")
    enc_rows = [(("셀프 어텐션", "self-attention"), "layer"), (addnorm, "op"), (ffn, "layer"),
                (addnorm, "op")]  # fmt: skip
    y_blk = 1.85
    enc_parts = column(ex, enc_rows, y_blk, "left")
    d.arrow(e, enc_parts[0], shape=enc.inputs["blks.block0"][0], label_side="right",
            name="enc_in")  # fmt: skip
    n_enc = len(encoder.blks)
    d.group(enc_parts, (f"블록 × {n_enc}", f"block × {n_enc}"), name="enc_group")
    mem = d.tensor(ex, y_blk + 4 * gap + 0.55, ("인코더 출력", "encoder output"), enc[""],
                   role="key", name="memory")  # fmt: skip
    d.arrow(enc_parts[-1], mem)
    # decoder
    s2 = d.box(dx, 0.25, ("지금까지의 번역", "target so far"), kind="io", name="tgt_box")
    e2 = d.box(dx, 0.95, ("임베딩 + 위치", "embedding + position"), w=w, h=0.4, name="dec_embed")
    d.arrow(s2, e2, shape=tgt.shape, name="tgt")
    dec_rows = [(("마스크 셀프 어텐션", "masked self-attention"), "layer"), (addnorm, "op"),
                (("교차 어텐션", "cross-attention"), "layer"), (addnorm, "op"), (ffn, "layer"),
                (addnorm, "op")]  # fmt: skip
    dec_parts = column(dx, dec_rows, y_blk, "right")
    d.arrow(e2, dec_parts[0], shape=dec.inputs["blks.block0"][0], label_side="left",
            name="dec_in")  # fmt: skip
    n_dec = len(decoder.blks)
    d.group(dec_parts, (f"블록 × {n_dec}", f"block × {n_dec}"), name="dec_group")
    cross = dec_parts[2]
    kx = (ex + w / 2 + dx - w / 2) / 2 + 0.1
    d.arrow(mem, cross.anchor("left", 0.5), ("K, V", "K, V"), role="key",
            via=[(kx, mem.center[1]), (kx, cross.center[1])], label_side="left",
            name="kv")  # fmt: skip
    out = d.box(dx, dec_parts[-1].center[1] + gap + 0.2, ("선형 층", "linear"), w=w, h=0.4,
                name="dense")  # fmt: skip
    d.arrow(dec_parts[-1], out)
    lg = d.tensor(dx, out.y1 + 0.55, ("다음 토큰의 로짓", "next-token logits"), logits.shape,
                  role="output", name="logits")  # fmt: skip
    d.arrow(out, lg)
    return d.finish()


def mask_weights(decoder: nn.Module, *, src_steps: int = 5, tgt_steps: int = 4,
                 valid_len: int = 3) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The (self, cross) attention weights of ``decoder``'s first block, first head, for one
    target of ``tgt_steps`` positions reading a source of ``src_steps`` positions, ``valid_len``
    of them real: (tgt_steps, tgt_steps) and (tgt_steps, src_steps) arrays, from a copy of the
    block run on small random inputs (the random number generator is left as it was)."""
    _coder(decoder, "decoder")
    for value, name in ((src_steps, "src_steps"), (tgt_steps, "tgt_steps"),
                        (valid_len, "valid_len")):  # fmt: skip
        _positive_int(value, name)
    if valid_len > src_steps:
        raise ValueError(f"valid_len must be at most src_steps={src_steps}, got {valid_len}")
    gen = torch.Generator().manual_seed(0)  # small inputs: weights far from 0 and 1
    d = decoder.num_hiddens
    X = 0.1 * torch.randn(1, tgt_steps, d, generator=gen)
    memory = 0.1 * torch.randn(1, src_steps, d, generator=gen)
    block = decoder.blks[0]
    state = [memory, torch.tensor([valid_len]), [None] * len(decoder.blks)]
    tr = trace(block, X, state)
    self_w, cross_w = tr.module.attention_weights  # each (batch, heads, queries, keys)
    return self_w[0, 0].numpy(), cross_w[0, 0].numpy()


def draw_masks(
    decoder: nn.Module,
    *,
    src_steps: int = 5,
    tgt_steps: int = 4,
    valid_len: int = 3,
    t: T = None,
) -> Diagram:
    """The two masks of the decoder, read off ``decoder``'s own attention weights (first block,
    first head; :func:`mask_weights`): the causal mask of its self-attention (query t sees keys
    0..t) and the padding mask of its cross-attention (every query sees the ``valid_len`` real
    source tokens, none of the padding). Visible cells show the weight, hidden ones are hatched
    with 0; ``parts["causal"].visible`` and ``parts["padding"].visible`` are the grids."""
    self_w, cross_w = mask_weights(decoder, src_steps=src_steps, tgt_steps=tgt_steps,
                                   valid_len=valid_len)  # fmt: skip
    cell = 0.42
    height = max(tgt_steps * cell + 1.3, 2.4)
    d = Diagram(6.4, height, t=t, title=("디코더의 두 마스크", "The decoder's two masks"))
    y = (height - 0.4) / 2 + 0.02
    left = d.mask(1.75, y, self_w > 0, cell=cell, values=self_w,
                  label=("인과 마스크 (셀프 어텐션)", "causal mask (self-attention)"),
                  name="causal")  # fmt: skip
    right = d.mask(4.75, y, cross_w > 0, cell=cell, values=cross_w,
                   label=(f"패딩 마스크 (교차, 유효 {valid_len})",
                          f"padding mask (cross, {valid_len} valid)"),
                   name="padding")  # fmt: skip
    for grid, keys in ((left, ("키: 번역 토큰", "keys: target")),
                       (right, ("키: 원문 토큰", "keys: source"))):  # fmt: skip
        d.text(grid.center[0], grid.y0 - 0.08, keys, va="top")
        d.text(grid.x0 - 0.1, grid.center[1], ("쿼리", "queries"), ha="right", rotation=90)
    return d.finish()


def draw_norm_placement(
    post: nn.Module,
    pre: nn.Module,
    *,
    batch: int = 2,
    steps: int = 5,
    t: T = None,
) -> Diagram:
    """A post-norm block (``post``: d2l.TransformerEncoderBlock, LayerNorm after each residual
    add) above a pre-norm block (``pre``: LayerNorm before each sublayer, the residual path
    free of norms), each drawn as one row x -> attention -> add -> ... -> output, the layer
    norms outlined. Both run on (batch, steps, num_hiddens); ``shapes`` holds "post_in",
    "post_out", "pre_in", "pre_out"."""
    _positive_int(batch, "batch")
    _positive_int(steps, "steps")
    sizes = []
    for block, name in ((post, "post"), (pre, "pre")):
        if not isinstance(block, nn.Module) or not hasattr(block, "attention"):
            raise TypeError(f"{name} must be an encoder block with attention, got "
                            f"{type(block).__name__}")  # fmt: skip
        sizes.append(block.attention.W_q.in_features if hasattr(block.attention, "W_q")
                     else block.num_hiddens)  # fmt: skip
    if not (hasattr(post, "addnorm1") and hasattr(pre, "ln1")):
        raise TypeError("post must have addnorm1 (post-norm) and pre must have ln1 (pre-norm)")
    d = Diagram(6.4, 3.6, t=t, title=("사후 정규화와 사전 정규화", "Post-norm and pre-norm"))
    norms = []
    rows = (
        (post, "post", 2.35, ("사후 정규화", "post-norm"),
         ["attn", "add", "ln", "ffn", "add", "ln"]),
        (pre, "pre", 0.75, ("사전 정규화", "pre-norm"),
         ["ln", "attn", "add", "ln", "ffn", "add"]),
    )  # fmt: skip
    labels = {"attn": ("어텐션", "attention"), "ffn": ("FFN", "FFN"), "ln": ("LN", "LN")}
    for (block, key, y, title, order), size in zip(rows, sizes):
        X = torch.zeros(batch, steps, size)
        tr = trace(block, X, None)
        d.text(0.1, y + 0.62, title, ha="left", va="bottom", size=11, name=f"{key}_title")
        tw = d.text_size(format_shape(X.shape), FONT["shape"])[0] + 0.26
        x_in = d.tensor(0.06 + tw / 2, y, "$x$", X.shape, w=tw, name=f"{key}_in")
        x = x_in.x1 + 0.22
        prev, parts, branch = x_in, [], None
        for kind in order:
            if kind == "add":
                p = d.add(x + 0.13, y, name=f"{key}_add{len(parts)}")
            else:
                bw = d.text_size(d.tr(labels[kind]), FONT["label"])[0] + 0.24
                p = d.box(x + bw / 2, y, labels[kind], kind="layer", role="neutral", w=bw,
                          h=0.42, name=f"{key}_{kind}{len(parts)}")  # fmt: skip
            src = prev.anchor("right")
            d.arrow(src, p.anchor("left"))
            if kind != "add" and branch is None and not (kind == "ln" and key == "post"):
                branch = ((src[0] + p.x0) / 2, y)  # the residual leaves before the sublayer
            if kind == "add":
                d.residual(branch, p, side="top", offset=0.3)
                branch = None
            if kind == "ln":
                norms.append(p)
            parts.append(p)
            prev = p
            x = p.x1 + 0.22
        out = d.tensor(x + tw / 2, y, "$x'$", tr[""], w=tw, name=f"{key}_out")
        d.arrow(prev, out)
    d.highlight(*norms, gray_rest=False)
    return d.finish()
