"""Chapter 5's diagram: one step of the Bahdanau decoder, drawn from the decoder it shows.

The decoder runs one step on a small batch of zeros (through :func:`core.trace`, on a copy)
and every printed shape is one that step produced: the query, the keys and values, the
attention weights, the context, the embedding, the GRU's input and state, the logits.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from ..bahdanau import Seq2SeqAttentionDecoder
from .core import Diagram, copy_module, drawer, trace
from .rnn import _check_batch

__all__ = ["bahdanau_step", "draw_bahdanau_step"]


def bahdanau_step(decoder: nn.Module, *, src_steps: int = 4, batch: int = 1) -> dict:
    """The shapes of one step of a Bahdanau decoder (``Seq2SeqAttentionDecoder`` or one with
    its parts: ``embedding``, ``attention`` (additive), ``rnn``, ``dense``, ``init_state``) on
    zeros: encoder states of ``src_steps`` positions, one target token per example. Keys:
    "query", "keys", "values", "weights", "context", "embedding", "rnn_input", "state",
    "logits"."""
    _check_batch(batch)
    if isinstance(src_steps, bool) or not isinstance(src_steps, int) or src_steps < 1:
        raise ValueError(f"src_steps must be a positive int, got {src_steps!r}")
    missing = [p for p in ("embedding", "attention", "rnn", "dense", "init_state", "num_hiddens")
               if not hasattr(decoder, p)]  # fmt: skip
    if not isinstance(decoder, nn.Module) or missing:
        raise TypeError(
            f"decoder must be a Bahdanau decoder module; {type(decoder).__name__} lacks {missing}"
        )
    decoder = copy_module(decoder)
    rnn = decoder.rnn
    hiddens, layers = decoder.num_hiddens, rnn.num_layers
    enc_outputs = torch.zeros(batch, src_steps, hiddens)
    enc_state = torch.zeros(layers, batch, hiddens)
    state = decoder.init_state((enc_outputs, enc_state), None)
    tr = trace(decoder, torch.zeros(batch, 1, dtype=torch.long), state)
    logits, (_, new_state, _) = tr.output
    query, keys, values = tr.inputs["attention"][:3]
    return {
        "query": query, "keys": keys, "values": values,
        "weights": tuple(tr.module.attention_weights.shape),
        "context": tr["attention"], "embedding": tr["embedding"],
        "rnn_input": tr.inputs["rnn"][0], "state": tuple(new_state.shape),
        "logits": tuple(logits.shape),
    }  # fmt: skip


@drawer(Seq2SeqAttentionDecoder)
def draw_bahdanau_step(
    decoder: nn.Module,
    *,
    src_steps: int = 4,
    batch: int = 1,
    t: Callable[[str, str], str] | None = None,
) -> Diagram:
    """One decoder step t' of Bahdanau attention: the previous decoder state s_{t'-1} is the
    query, the encoder states are the keys and the values; additive scores, a masked softmax
    and a weighted sum give the context c_{t'}, which is concatenated with the embedding of
    the previous word and fed to the GRU; the output layer turns the new state s_{t'} into
    logits. Shapes from :func:`bahdanau_step` (``shapes`` holds its keys, printed)."""
    v = bahdanau_step(decoder, src_steps=src_steps, batch=batch)
    title = ("바다나우 디코더의 한 단계", "One step of the Bahdanau decoder")
    d = Diagram(6.4, 5.0, t=t, title=title)
    q = d.tensor(0.85, 3.55, "$s_{t'-1}$", v["query"], role="query", name="query")
    enc = d.tensor(0.85, 1.55, ("인코더 상태", "encoder states"), v["values"], role="value",
                   name="values")  # fmt: skip
    score = d.box(2.85, 3.55, ("가산 점수", "additive score"), r"$W_q, W_k, w_v$",
                  name="score")  # fmt: skip
    soft = d.box(2.85, 2.55, "softmax", ("마스크", "masked"), kind="op", name="softmax")
    pool = d.box(2.85, 1.55, r"$\sum_t \alpha_t h_t$", kind="op", name="pool")
    ctx = d.tensor(4.35, 1.55, "$c_{t'}$", v["context"], role="output", name="context")
    word = d.box(2.85, 0.45, "$y_{t'-1}$", kind="io", name="word")
    emb = d.box(4.35, 0.45, ("임베딩", "embedding"), name="emb")
    cat = d.box(5.6, 1.55, "[c, e]", kind="op", name="concat")
    gru = d.box(5.6, 2.45, "GRU", role="state", name="gru")
    s = d.tensor(5.6, 3.35, "$s_{t'}$", v["state"], role="state", name="state")
    out = d.tensor(5.6, 4.5, ("로짓", "logits"), v["logits"], name="logits")
    d.arrow(q, score, ("쿼리", "query"), role="query", name="q_in")
    d.arrow(enc.anchor("right", 0.8), score.anchor("left", 0.25), ("키", "keys"),
            shape=v["keys"], role="key", via=[(1.75, enc.anchor("right", 0.8)[1]),
                                              (1.75, score.anchor("left", 0.25)[1])],
            label_side="left", name="keys")  # fmt: skip
    d.arrow(enc, pool, ("값", "values"), role="value", label_side="below", name="v_in")
    d.arrow(score, soft)
    d.arrow(soft, pool, "α", shape=v["weights"], label_side="right", name="weights")
    d.arrow(pool, ctx)
    d.arrow(word, emb)
    d.arrow(ctx, cat)
    d.arrow(emb, cat, via=[(5.6, 0.45)], end="bottom", shape=v["embedding"],
            label_side="right", name="embedding")  # fmt: skip
    d.arrow(cat, gru, shape=v["rnn_input"], label_side="right", name="rnn_input")
    d.arrow(gru, s, role="state")
    d.arrow(s, out, ("출력층", "output layer"), label_side="left", name="dense")
    d.text(s.x0 - 0.12, s.center[1], ("맨 위층: 다음 쿼리", "top layer: next query"),
           ha="right", role="query", name="next")  # fmt: skip
    d.highlight(ctx, gray_rest=False)
    return d.finish()
