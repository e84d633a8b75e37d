"""Chapter 10's diagrams: BPE merging a Korean word in three base units, the GPT with its
causal mask, and the sampling pipeline (logits -> temperature -> top-k / top-p -> sample).

Each is computed from the chapter's objects: the merges are replayed by the tokenizer's own
rules, the GPT's shapes come from running it (a copy) on a small batch, and the sampling rows
are the steps of :func:`d2lite.sample_next_token` on the logits given.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Mapping

import numpy as np
import torch
from torch import Tensor, nn

from .. import lm as _lm
from .core import Diagram, causal_mask, drawer, trace

__all__ = ["bpe_merge_steps", "draw_bpe_merges", "draw_gpt", "draw_sampling", "sampling_steps",
           "token_label"]

T = Callable[[str, str], str] | None


# -- BPE ---------------------------------------------------------------------------------------
def bpe_merge_steps(tok: _lm.BPETokenizer, word: str) -> list[list[int]]:
    """The ids of ``word`` (one pre-tokenized chunk) before any merge and after each merge rule
    that ``tok`` applies to it, earliest-learned rule first, exactly as ``tok.encode`` does:
    the last list equals ``tok.encode(word)``."""
    if not isinstance(tok, _lm.BPETokenizer):
        raise TypeError(f"tok must be a d2l.BPETokenizer, got {type(tok).__name__}")
    if not isinstance(word, str) or _lm._CHUNK.fullmatch(word) is None:
        raise ValueError(f"word must be one chunk of text (no inner spaces), got {word!r}")
    ids = tok._base_ids(word)
    out = [list(ids)]
    while len(ids) > 1:
        rank, pair = min((tok.rank.get(p, math.inf), p) for p in zip(ids, ids[1:]))
        if rank == math.inf:
            break
        ids = _lm._merge(ids, pair, 256 + len(tok.alphabet) + rank)
        out.append(list(ids))
    return out


def _visible_jamo(s: str) -> str:
    """Conjoining jamo as the compatibility letters a reader recognizes (ᄒ -> ㅎ); a final
    consonant keeps a leading bar (ᆨ -> -ㄱ) so it reads apart from an initial."""
    out = []
    for ch in s:
        if 0x1100 <= ord(ch) <= 0x11FF:
            name = unicodedata.name(ch, "")
            parts = name.split(" ", 2)
            try:
                letter = unicodedata.lookup("HANGUL LETTER " + parts[2])
            except (KeyError, IndexError):
                letter = ch
            out.append(("-" if parts[1:2] == ["JONGSEONG"] else "") + letter)
        else:
            out.append(ch)
    return "".join(out)


def token_label(tok: _lm.BPETokenizer, i: int) -> str:
    """What token ``i`` stands for, as drawn: whole characters as text (jamo as letters, see
    :func:`_visible_jamo`), the bytes of a partial character in hex ("ED95")."""
    if tok.unit == "jamo" and all(b >= 256 for b in tok.parts[i]):
        return _visible_jamo(tok.decode([i])).replace(" ", "␣").replace("\n", "¶")
    out = []
    run: list[int] = []
    for b in (*tok.parts[i], None):
        if b is not None and b < 256:
            run.append(b)
            continue
        if run:  # readable characters as text, the rest as hex
            text = bytes(run).decode("utf-8", "backslashreplace")
            out.append(re.sub(r"\\x([0-9a-f]{2})", lambda m: m.group(1).upper(), text))
            run = []
        if b is not None:
            out.append(_visible_jamo(tok.alphabet[b - 256]) if tok.unit == "jamo"
                       else tok.alphabet[b - 256])
    return "".join(out).replace(" ", "␣").replace("\n", "¶")


_UNIT_NAMES = {"byte": ("바이트", "bytes"), "jamo": ("자모", "jamo"),
               "syllable": ("음절", "syllables")}  # fmt: skip


def draw_bpe_merges(
    tokenizers: Mapping[str, _lm.BPETokenizer], word: str, *, t: T = None
) -> Diagram:
    """``word`` cut by each tokenizer of ``tokenizers`` (unit name -> ``d2l.BPETokenizer``,
    drawn left to right): a column per tokenizer, a row per merge rule it applies to the word
    (row 0: the base units), the piece each merge makes outlined in the highlight color.
    The pieces are those of :func:`bpe_merge_steps`, so the last row of a column is
    ``tok.pieces(word)`` (byte fragments in hex)."""
    if not isinstance(tokenizers, Mapping) or not 1 <= len(tokenizers) <= 3:
        raise ValueError(f"tokenizers must map 1 to 3 names to tokenizers, got {tokenizers!r}")
    steps = {name: bpe_merge_steps(tok, word) for name, tok in tokenizers.items()}
    rows = max(len(s) for s in steps.values())
    row_h, gap_x, top = 0.4, 0.07, 0.95
    d = Diagram(6.4, top + rows * row_h + 0.2, t=t,
                title=(f'"{word}"의 병합 순서', f'How BPE merges "{word}"'))
    widths = {}
    for name, seq in steps.items():
        tok = tokenizers[name]
        widths[name] = max(sum(max(0.32, d.text_size(token_label(tok, i), 11)[0] + 0.12) + gap_x
                               for i in ids) - gap_x for ids in seq)  # fmt: skip
    label_w = 0.3
    spare = 6.4 - label_w - sum(widths.values()) - 0.1
    gap = spare / max(1, len(steps) - 1) if len(steps) > 1 else 0.0
    if spare < 0.2 * (len(steps) - 1):
        raise ValueError(f"the pieces of {word!r} are too wide for the figure")
    x = label_w + 0.05
    y_head = d.height - 0.68
    for r in range(rows):
        d.text(0.17, y_head - 0.5 - r * row_h, str(r), name=f"row{r}")
    for name, seq in steps.items():
        tok = tokenizers[name]
        unit = _UNIT_NAMES.get(tok.unit, (tok.unit, tok.unit))
        merges = len(seq) - 1
        d.text(x + widths[name] / 2, y_head, (f"{unit[0]}\n병합 {merges}번",
                                            f"{unit[1]}\n{merges} merge{'s' * (merges != 1)}"),
               name=f"{name}_head")  # fmt: skip
        for r, ids in enumerate(seq):
            # the token this row's merge made (new ids appear only by merging)
            made = (set(ids) - set(seq[r - 1])).pop() if r > 0 else None
            xx = x
            y = y_head - 0.5 - r * row_h
            for k, i in enumerate(ids):
                s = token_label(tok, i)
                w = max(0.32, d.text_size(s, 11)[0] + 0.12)
                base = i < 256 + len(tok.alphabet)
                d.box(xx + w / 2, y, s, kind="op" if base else "layer",
                      role="highlight" if i == made else None, w=w, h=0.3,
                      name=f"{name}_{r}_{k}")  # fmt: skip
                xx += w + gap_x
        x += widths[name] + gap
    return d.finish()


# -- GPT ---------------------------------------------------------------------------------------
@drawer(_lm.GPT)
def draw_gpt(net: nn.Module, *, batch: int = 1, steps: int = 4, t: T = None) -> Diagram:
    """The GPT ``net`` from token ids to logits: embedding + position, the pre-norm block
    (LayerNorm -> masked multi-head attention -> add, LayerNorm -> FFN -> add) repeated
    ``len(net.blks)`` times, the final LayerNorm and output layer, and the causal mask of
    ``steps`` positions the attention uses. Every shape is the one ``net`` (a copy) produces
    on a (``batch``, ``steps``) batch of token ids."""
    if not isinstance(net, _lm.GPT):
        raise TypeError(f"net must be a d2l.GPT, got {type(net).__name__}")
    for name, v in (("batch", batch), ("steps", steps)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be a positive int, got {v!r}")
    if steps > min(net.max_len, 8):
        raise ValueError(f"steps must be at most min(max_len, 8) to draw, got {steps}")
    tokens = torch.zeros(batch, steps, dtype=torch.long)
    tr = trace(net, tokens)
    blk = net.blks[0]
    heads = blk.attention.num_heads
    hidden = blk.ln1.normalized_shape[0]
    b, n = tr["blks.0.attention.W_q"][:2]
    q_shape = (b, heads, n, hidden // heads)  # the block's split: (batch, heads, steps, width)
    weights = tr.module.blks[0].attention.attention.attention_weights
    d = Diagram(6.4, 5.45, t=t)
    cx = 2.3
    tok = d.tensor(cx, 0.35, ("토큰 번호", "token ids"), tuple(tokens.shape), name="tokens")
    emb = d.box(cx, 1.05, ("임베딩 + 위치", "embedding + position"), name="embed")
    attn = d.box(cx, 2.05, ("마스크 어텐션", "masked attention"),
                 (f"LN, 헤드 {heads}개", f"LN, {heads} heads"), role="query", name="attention")
    add1 = d.add(cx, 2.65, name="add1")
    ffn_hidden = tr["blks.0.ffn.dense1"][-1]
    ffn = d.box(cx, 3.2, "FFN", f"LN, {hidden}→{ffn_hidden}→{hidden}", name="ffn")
    add2 = d.add(cx, 3.75, name="add2")
    head = d.box(cx, 4.35, ("LN, 출력층", "LN, output layer"), name="head")
    logits = d.tensor(cx, 4.95, ("로짓", "logits"), tr[""], role="output", name="logits")
    d.arrow(tok, emb)
    d.arrow(emb, attn, shape=tr["dropout"], name="X")
    d.arrow(attn, add1)
    d.arrow(add1, ffn)
    d.arrow(ffn, add2)
    d.arrow(add2, head)
    d.arrow(head, logits)
    d.residual((cx, 1.5), add1, side="left", offset=0.75)
    d.residual((cx, 2.87), add2, side="left", offset=0.75)
    d.group([attn, add1, ffn, add2], (f"× 블록 {len(net.blks)}개", f"× {len(net.blks)} blocks"),
            pad=0.2, title_side="right", shape=tr[f"blks.{len(net.blks) - 1}"], name="blocks")
    cell = min(0.28, 1.4 / steps)
    mask = d.mask(5.3, 0.9 + steps * cell / 2, causal_mask(steps), cell=cell,
                  label=("인과 마스크", "causal mask"), name="mask")
    d.arrow(mask, attn.anchor("right", 0.5), ls=":", name="mask_in")
    d.text(5.3, 0.65, ("쿼리 × 키, 헤드마다", "queries × keys, per head"), name="mask_note")
    d.text(5.3, 0.38, f"Q, K, V {_fmt(q_shape)}", family="DejaVu Sans Mono", name="qkv_note")
    d.shapes["qkv"] = q_shape
    d.shapes["weights"] = tuple(weights.shape)
    d.text(5.3, 0.12, (f"가중치 {_fmt(weights.shape)}", f"weights {_fmt(weights.shape)}"),
           name="weights_note")
    return d.finish()


def _fmt(shape) -> str:
    from .core import format_shape

    return format_shape(tuple(shape))


# -- sampling ----------------------------------------------------------------------------------
def sampling_steps(logits: Tensor, *, temperature: float = 1.0, top_k: int | None = None,
                   top_p: float | None = None) -> dict[str, Tensor]:  # fmt: skip
    """The stages of :func:`d2lite.sample_next_token` for one row of ``logits`` (vocab,),
    in the order of decreasing score (ties by id): "order" (token ids), "logits", "scaled"
    (divided by the temperature), "softmax", and, when asked, "top_k" and "top_p" (the
    renormalized probabilities, 0 where a token is dropped)."""
    if not isinstance(logits, Tensor) or logits.dim() != 1 or not logits.is_floating_point():
        raise ValueError(f"logits must be a 1-D float tensor (vocab,), got {logits!r:.60}")
    # the checks of sample_next_token itself (same errors)
    _lm.sample_next_token(logits, temperature=temperature, top_k=top_k, top_p=top_p,
                          generator=torch.Generator().manual_seed(0))  # fmt: skip
    scores, order = torch.sort(logits.float() / temperature, descending=True, stable=True)
    out = {"order": order, "logits": logits.float()[order], "scaled": scores,
           "softmax": torch.softmax(scores, -1)}  # fmt: skip
    keep = torch.ones_like(scores, dtype=torch.bool)
    if top_k is not None:
        keep[top_k:] = False
        out["top_k"] = torch.softmax(scores.masked_fill(~keep, -math.inf), -1)
    if top_p is not None:
        probs = torch.softmax(scores.masked_fill(~keep, -math.inf), -1)
        keep &= (probs.cumsum(-1) - probs) < top_p
        out["top_p"] = torch.softmax(scores.masked_fill(~keep, -math.inf), -1)
    return out


def draw_sampling(
    logits: Tensor,
    *,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    labels: Callable[[int], str] | None = None,
    generator: torch.Generator | None = None,
    columns: int = 7,
    t: T = None,
) -> Diagram:
    """The sampling pipeline on ``logits`` (vocab,): a row of numbers per stage of
    :func:`sampling_steps` for the ``columns`` highest-scoring tokens (named by ``labels(id)``),
    dropped tokens hatched, and the token :func:`d2lite.sample_next_token` draws with
    ``generator`` (a copy: the generator given does not advance) outlined."""
    if isinstance(columns, bool) or not isinstance(columns, int) or not 2 <= columns <= 8:
        raise ValueError(f"columns must be an int in [2, 8], got {columns!r}")
    stages = sampling_steps(logits, temperature=temperature, top_k=top_k, top_p=top_p)
    gen = torch.Generator()
    gen.set_state((generator or torch.Generator().manual_seed(0)).get_state())
    drawn = int(_lm.sample_next_token(logits, temperature=temperature, top_k=top_k,
                                      top_p=top_p, generator=gen))  # fmt: skip
    order = stages["order"][:columns].tolist()
    names = [(labels or str)(i) for i in order]
    rows = [("logits", ("로짓 z", "logits z"), "{:.1f}"),
            ("scaled", f"z / τ  (τ = {temperature:g})", "{:.1f}"),
            ("softmax", ("softmax", "softmax"), "{:.2f}")]  # fmt: skip
    if top_k is not None:
        rows.append(("top_k", (f"top-k (k = {top_k})", f"top-k (k = {top_k})"), "{:.2f}"))
    if top_p is not None:
        rows.append(("top_p", (f"top-p (p = {top_p:g})", f"top-p (p = {top_p:g})"), "{:.2f}"))
    cell, gap = 0.5, 0.16
    height = 0.95 + len(rows) * (cell + gap) + 0.75
    d = Diagram(6.4, height, t=t, title=("다음 토큰 샘플링", "Sampling the next token"))
    grid_x = 2.0 + columns * cell / 2
    y = height - 0.75
    for j, s in enumerate(names):
        d.text(2.0 + (j + 0.5) * cell, y, s, size=11, name=f"token{j}")
    d.text(1.9, y, (f"어휘 {logits.shape[0]}개 중 상위 {columns}개",
                    f"top {columns} of {logits.shape[0]} tokens"), ha="right", name="tokens")
    prev = None
    for k, (key, label, fmt) in enumerate(rows):
        y = height - 0.95 - cell / 2 - k * (cell + gap)
        vals = stages[key][:columns].numpy().astype(float)
        visible = np.ones((1, columns), dtype=bool)
        if key in ("top_k", "top_p"):
            visible[0] = vals > 0
        d.text(1.9, y, label, ha="right", name=f"{key}_label")
        m = d.mask(grid_x, y, visible, cell=cell, values=vals[None], fmt=fmt, name=key)
        prev = m
    j = order.index(drawn) if drawn in order else None
    y_s = prev.y0 - 0.4
    if j is None:
        raise ValueError(f"the drawn token {drawn} is not among the first {columns} columns")
    pick = d.box(2.0 + (j + 0.5) * cell, y_s, names[j], kind="op", role="highlight", name="sample")
    d.text(1.9, y_s, ("샘플", "sample"), ha="right", name="sample_label")
    d.arrow((pick.center[0], prev.y0), pick, name="sample_arrow")
    return d.finish()
