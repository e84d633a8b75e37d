"""Chapter 1's diagrams: the unrolled RNN and the encoder–decoder with its fixed context vector.

Both run the recurrent layer they are given on a small batch (through :func:`core.trace`, on a
copy) and print the shapes it produced: change ``num_hiddens`` and the figure changes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import nn

from ..rnn import RNNScratch
from .core import Diagram, drawer, trace

__all__ = ["draw_seq2seq", "draw_unrolled", "recurrent_sizes"]


def recurrent_sizes(rnn: nn.Module) -> tuple[int, int]:
    """(input size, hidden size) of a time-first recurrent layer: ``d2l.RNNScratch`` (or any
    module with ``num_inputs`` and ``num_hiddens``) or a one-directional ``nn.RNN``/``nn.GRU``/
    ``nn.LSTM``."""
    if isinstance(rnn, nn.RNNBase):
        if rnn.bidirectional:
            raise ValueError("rnn must read in one direction, got a bidirectional layer")
        return rnn.input_size, rnn.hidden_size
    if isinstance(rnn, nn.Module) and hasattr(rnn, "num_inputs") and hasattr(rnn, "num_hiddens"):
        return int(rnn.num_inputs), int(rnn.num_hiddens)
    raise TypeError(
        "rnn must be a recurrent layer with num_inputs and num_hiddens (d2l.RNNScratch) or a "
        f"torch.nn.RNN, GRU or LSTM, got {type(rnn).__name__}"
    )


def _run(rnn: nn.Module, steps: int, batch: int, state=None):
    """Run ``rnn`` on zeros of (steps, batch, inputs): per-step states and the last state."""
    num_inputs, _ = recurrent_sizes(rnn)
    shape = (batch, steps, num_inputs) if getattr(rnn, "batch_first", False) else (
        steps, batch, num_inputs)  # fmt: skip
    args = (torch.zeros(shape),) if state is None else (torch.zeros(shape), state)
    tr = trace(rnn, *args)
    outputs, last = tr.output
    if isinstance(rnn, nn.RNNBase):  # (layers, batch, hidden) -> the top layer's state
        last = (last[0] if isinstance(last, tuple) else last)[-1]
        if rnn.batch_first:
            outputs = outputs.transpose(0, 1)
    return outputs, last


def _check_words(words, name: str, most: int) -> list[str]:
    if isinstance(words, str) or not isinstance(words, Sequence) or not words:
        raise ValueError(f"{name} must be a non-empty sequence of words, got {words!r}")
    if not all(isinstance(w, str) for w in words) or len(words) > most:
        raise ValueError(f"{name} must be at most {most} strings, got {words!r}")
    return list(words)


def _check_batch(batch) -> None:
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ValueError(f"batch must be a positive int, got {batch!r}")


@drawer(RNNScratch, nn.RNNBase)
def draw_unrolled(
    rnn: nn.Module,
    words: Sequence[str],
    *,
    batch: int = 1,
    shortcut: bool = True,
    t: Callable[[str, str], str] | None = None,
) -> Diagram:
    """The RNN ``rnn`` unrolled over ``words``: each word's input x_t enters its step, the
    state h_t passes to the next step (the only road from the first word to the last state,
    in the highlight color) and, with ``shortcut``, the dotted shortcut that self-attention
    opens between the first and the last state. Every h_t is labeled with the shape ``rnn``
    produced for it on a batch of ``batch``; ``shapes`` holds "x1".. and "h1"...
    ``d2l.diagrams.draw(rnn, words)`` calls it for an RNNScratch or a torch recurrent layer.
    """
    words = _check_words(words, "words", 5)
    _check_batch(batch)
    steps = len(words)
    outputs, last = _run(rnn, steps, batch)
    num_inputs, _ = recurrent_sizes(rnn)
    d = Diagram(6.4, 3.5 if shortcut else 2.8, t=t, title=("펼친 순환 신경망", "An unrolled RNN"))
    gap = min(2.6, 5.4 / steps)
    x0 = 3.2 - gap * (steps - 1) / 2
    cells = []
    for i, word in enumerate(words):
        x = x0 + i * gap
        h = d.tensor(x, 1.55, f"$\\mathbf{{h}}_{i + 1}$", tuple(outputs[i].shape), role="state",
                     name=f"h{i + 1}")  # fmt: skip
        w = d.box(x, 0.25, f'"{word}"', kind="io", name=f"word{i + 1}")
        d.arrow(w, h, shape=(batch, num_inputs), label_side="right", name=f"x{i + 1}")
        cells.append(h)
    for a, b in zip(cells, cells[1:]):
        d.arrow(a, b, role="highlight", lw=2.2)
    if steps > 1:
        first = words[0]
        d.text(x0 + gap * (steps - 1) / 2, 2.08 if shortcut else 2.2,
               (f'"{first}"의 정보가 지나는 유일한 길', f'the only road for what "{first}" says'),
               role="highlight", va="bottom", name="road")  # fmt: skip
    if shortcut and steps > 1:
        top = max(c.extent[3] for c in cells)
        start = cells[0].anchor("top", 0.15)
        end = (cells[-1].anchor("top", 0.85)[0], cells[-1].extent[3])  # onto the back sheet
        note = ("셀프 어텐션이 여는 지름길 (7장)", "the shortcut self-attention opens (ch. 7)")
        d.arrow(start, end, note,
                via=[(start[0], top + 0.75), (end[0], top + 0.75)], ls=":", lw=1.2,
                name="shortcut")  # fmt: skip
    if not torch.equal(outputs[-1], last):  # the last output is the state handed on
        raise ValueError("rnn's last output and its final state differ")
    return d.finish()


def draw_seq2seq(
    encoder: nn.Module,
    decoder: nn.Module | None = None,
    *,
    source: Sequence[str] = ("I", "go", "home"),
    target: Sequence[str] = ("나는", "집에", "간다"),
    batch: int = 1,
    t: Callable[[str, str], str] | None = None,
) -> Diagram:
    """The encoder–decoder with a fixed context vector: ``encoder`` reads ``source`` step by
    step, its last state becomes the context c, and ``decoder`` starts from c and writes
    ``target`` one word at a time. Only c crosses from one side to the other: the bottleneck,
    outlined in the highlight color, with its size printed beside it.

    ``encoder`` and ``decoder`` are time-first recurrent layers (``d2l.RNNScratch``,
    ``nn.RNN``/``nn.GRU``); ``decoder`` defaults to an untrained layer like ``encoder`` (built
    without touching the random number generator). Shapes come from running both on a batch
    of ``batch``: ``shapes`` holds "encoder" (all its states), "c" and "decoder".
    """
    source = _check_words(source, "source", 4)
    target = _check_words(target, "target", 4)
    _check_batch(batch)
    num_inputs, num_hiddens = recurrent_sizes(encoder)
    if decoder is None:  # the same kind of layer; its input is the previous target word
        with torch.random.fork_rng(devices=[]):
            decoder = type(encoder)(num_inputs, num_hiddens)
    _, dec_hiddens = recurrent_sizes(decoder)
    if dec_hiddens != num_hiddens:
        raise ValueError(
            f"decoder must have the encoder's hidden size {num_hiddens} (it starts from c), "
            f"got {dec_hiddens}"
        )
    enc_out, context = _run(encoder, len(source), batch)
    dec_out, _ = _run(decoder, len(target), batch, state=_state_for(decoder, context))
    title = ("인코더–디코더와 문맥 벡터", "Encoder–decoder and the context vector")
    d = Diagram(6.9, 3.3, t=t, title=title)
    y = 1.45
    enc_cells = []
    gap = 0.78
    for i, word in enumerate(source):
        x = 0.45 + i * gap
        h = d.box(x, y, f"$\\mathbf{{h}}_{i + 1}$", role="state", name=f"h{i + 1}")
        w = d.box(x, 0.35, word, kind="io", name=f"src{i + 1}")
        d.arrow(w, h)
        if enc_cells:
            d.arrow(enc_cells[-1], h, role="state")
        enc_cells.append(h)
    cx = enc_cells[-1].x1 + 0.95
    c = d.tensor(cx, y, "$\\mathbf{c}$", tuple(context.shape), role="state", name="c")
    d.arrow(enc_cells[-1], c, role="state")
    dx0 = c.extent[2] + 0.65
    dec_cells = []
    for i, word in enumerate(target):
        x = dx0 + i * gap
        s = d.box(x, y, f"$\\mathbf{{s}}_{i + 1}$", role="state", name=f"s{i + 1}")
        out = d.box(x, 2.5, word, kind="io", name=f"tgt{i + 1}")
        d.arrow(s, out)
        d.arrow(dec_cells[-1] if dec_cells else c, s, role="state")
        dec_cells.append(s)
    d.group(enc_cells, ("인코더 상태", "encoder states"), shape=enc_out.shape, name="encoder")
    d.group(dec_cells, ("디코더 상태", "decoder states"), shape=dec_out.shape,
            title_side="bottom", name="decoder")  # fmt: skip
    note = (f"길이와 상관없이 크기 {num_hiddens}", f"size {num_hiddens} at any length")
    d.text(cx + 0.03, c.y0 - 0.1, note, role="highlight", va="top", name="bottleneck")  # fmt: skip
    d.highlight(c, gray_rest=False)
    return d.finish()


def _state_for(decoder: nn.Module, context: torch.Tensor):
    """The context as the decoder's initial state: (batch, hidden), or (layers, batch, hidden)
    for torch's layers (every layer starts from c)."""
    if isinstance(decoder, nn.RNNBase):
        state = context.unsqueeze(0).expand(decoder.num_layers, -1, -1).contiguous()
        return (state, torch.zeros_like(state)) if isinstance(decoder, nn.LSTM) else state
    return context

