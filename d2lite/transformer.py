"""The Transformer encoder and decoder (chapter 8).

Generated from book/08_transformer.md
by `python -m tools.export`; edit the chapter, not this file.
"""

# ruff: noqa: I001  (imports stay in the order the chapter introduces them)

import math

import torch
from torch import Tensor, nn

import d2lite as d2l
from d2lite import checks


class PositionWiseFFN(nn.Module):
    """The same two-layer MLP at every position:
    (batch, steps, d) -> (batch, steps, outputs).

    Unlike d2l, which always infers the input size (nn.LazyLinear), num_inputs gives an
    ordinary nn.Linear, and integer inputs raise ValueError.
    """

    def __init__(self, ffn_num_hiddens: int, ffn_num_outputs: int,
                 num_inputs: int | None = None) -> None:  # fmt: skip
        super().__init__()
        checks.check_positive(ffn_num_hiddens, "ffn_num_hiddens")
        checks.check_positive(ffn_num_outputs, "ffn_num_outputs")
        if num_inputs is None:
            self.dense1 = nn.LazyLinear(ffn_num_hiddens)
        else:
            num_inputs = checks.check_positive(num_inputs, "num_inputs")
            self.dense1 = nn.Linear(num_inputs, ffn_num_hiddens)
        self.relu = nn.ReLU()
        self.dense2 = nn.Linear(ffn_num_hiddens, ffn_num_outputs)

    def forward(self, X: Tensor) -> Tensor:
        checks.check_features(X, module=self)
        return self.dense2(self.relu(self.dense1(X)))


class AddNorm(nn.Module):
    """Residual connection then layer norm:
    X, Y (batch, steps, d) -> LayerNorm(X + dropout(Y)).

    Unlike d2l, X and Y of different shapes raise ValueError instead of broadcasting.
    """

    def __init__(self, norm_shape: int | list[int] | tuple[int, ...],
                 dropout: float) -> None:  # fmt: skip
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(checks.check_sizes(norm_shape, "norm_shape"))

    def forward(self, X: Tensor, Y: Tensor) -> Tensor:
        checks.check_features(X, module=self)
        if X.shape != Y.shape:
            raise ValueError(
                f"the residual needs equal shapes: X {tuple(X.shape)}, "
                f"Y {tuple(Y.shape)}"
            )
        return self.ln(self.dropout(Y) + X)


def _heads_first(weights: Tensor | None, num_heads: int) -> Tensor:
    """(batch * heads, queries, keys) -> (batch, heads, queries, keys)."""
    if weights is None:
        raise RuntimeError("no attention weights were kept: the last call ran on the "
                           "fast path (d2l.fast_attention or need_weights=False); "
                           "call the model outside it")
    return weights.reshape(-1, num_heads, *weights.shape[1:])


class TransformerEncoderBlock(nn.Module):
    """Self-attention and a positionwise FFN, each followed by AddNorm.

    forward(X, valid_lens): X (batch, steps, num_hiddens), valid_lens (batch,) or None
    -> (batch, steps, num_hiddens). Unlike d2l, the block exposes attention_weights as
    (batch, num_heads, queries, keys), and valid lengths outside [1, steps] raise
    ValueError.
    """

    def __init__(self, num_hiddens: int, ffn_num_hiddens: int, num_heads: int,
                 dropout: float, use_bias: bool = False) -> None:  # fmt: skip
        super().__init__()
        self.num_hiddens, self.num_heads = num_hiddens, num_heads
        self.attention = d2l.MultiHeadAttention(
            num_hiddens, num_heads, dropout, use_bias,
            num_hiddens, num_hiddens, num_hiddens)
        self.addnorm1 = AddNorm(num_hiddens, dropout)
        self.ffn = PositionWiseFFN(ffn_num_hiddens, num_hiddens, num_inputs=num_hiddens)
        self.addnorm2 = AddNorm(num_hiddens, dropout)

    def forward(self, X: Tensor, valid_lens: Tensor | None) -> Tensor:
        checks.check_features(X, size=self.num_hiddens)
        valid_lens = checks.check_valid_lens(valid_lens, *X.shape[:2],
                                             min_len=1)
        Y = self.addnorm1(X, self.attention(X, X, X, valid_lens))
        return self.addnorm2(Y, self.ffn(Y))

    @property
    def attention_weights(self) -> Tensor:
        """The last self-attention weights, (batch, num_heads, queries, keys)."""
        return _heads_first(self.attention.attention.attention_weights, self.num_heads)


def _stem(module: nn.Module, vocab_size: int, num_hiddens: int, dropout: float,
          num_blks: int, make_block) -> None:  # fmt: skip
    """Give an encoder or decoder its embedding, positional encoding and blocks
    make_block(0), ..., make_block(num_blks - 1)."""
    checks.check_positive(vocab_size, "vocab_size")
    checks.check_positive(num_hiddens, "num_hiddens")
    checks.check_positive(num_blks, "num_blks")
    module.num_hiddens, module.vocab_size = num_hiddens, vocab_size
    module.embedding = nn.Embedding(vocab_size, num_hiddens)
    module.pos_encoding = d2l.PositionalEncoding(num_hiddens, dropout)
    module.blks = nn.Sequential()
    for i in range(num_blks):
        module.blks.add_module(f"block{i}", make_block(i))


def _embed(module: nn.Module, X: Tensor, c: int = 0) -> Tensor:
    """Token ids (batch, steps) -> embedding * sqrt(d) plus the encoding of
    the positions c, c + 1, ... (dropout applied)."""
    checks.check_tokens(X)
    P = module.pos_encoding.P
    if c + X.shape[1] > P.shape[1]:
        raise ValueError(f"positions up to {c + X.shape[1]} exceed "
                         f"max_len {P.shape[1]}")
    # The embedding is scaled before the positional encoding (in [-1, 1])
    # is added.
    X = module.embedding(X) * math.sqrt(module.num_hiddens)
    return module.pos_encoding.dropout(X + P[:, c : c + X.shape[1]].to(X.dtype))


class TransformerEncoder(d2l.Encoder):
    """Embedding * sqrt(d) + positional encoding, then num_blks encoder blocks.

    forward(X, valid_lens): token ids (batch, steps), valid_lens (batch,) or None
    -> (batch, steps, num_hiddens). Unlike d2l, whose attention_weights is a list of
    (batch * num_heads, queries, keys) tensors, one per block, attention_weights is one
    tensor (batch, num_blks, num_heads, queries, keys).
    """

    def __init__(self, vocab_size: int, num_hiddens: int, ffn_num_hiddens: int,
                 num_heads: int, num_blks: int, dropout: float,
                 use_bias: bool = False) -> None:  # fmt: skip
        super().__init__()
        _stem(self, vocab_size, num_hiddens, dropout, num_blks,
              lambda i: TransformerEncoderBlock(
                  num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias))

    def forward(self, X: Tensor, valid_lens: Tensor | None = None, *args) -> Tensor:
        # The door: token ids and lengths are checked once, here; the blocks trust them.
        with checks.token_door(X, self.vocab_size, valid_lens) as valid_lens:
            X = _embed(self, X)
            for blk in self.blks:
                X = blk(X, valid_lens)
        return X

    @property
    def attention_weights(self) -> Tensor:
        """Self-attention weights of the last call,
        (batch, num_blks, num_heads, steps, steps)."""
        return torch.stack([blk.attention_weights for blk in self.blks], dim=1)


class TransformerDecoderBlock(nn.Module):
    """Causal self-attention, cross-attention and a positionwise FFN,
    each followed by AddNorm.

    forward(X, state): X (batch, steps, num_hiddens); state = [enc_outputs
    (batch, src_steps, num_hiddens), enc_valid_lens (batch,) or None, cache]; cache[i]
    holds this block's earlier inputs (batch, past, num_hiddens) or None. Returns
    (batch, steps, num_hiddens) and state. Unlike d2l, which applies the causal mask
    only in training mode, the mask also holds in evaluation mode, so a whole target can
    be replayed in one pass.
    """

    def __init__(self, num_hiddens: int, ffn_num_hiddens: int, num_heads: int,
                 dropout: float, i: int) -> None:  # fmt: skip
        super().__init__()
        self.i, self.num_hiddens, self.num_heads = i, num_hiddens, num_heads
        self.attention1 = d2l.MultiHeadAttention(num_hiddens, num_heads, dropout, False,
                                                 num_hiddens, num_hiddens, num_hiddens)
        self.addnorm1 = AddNorm(num_hiddens, dropout)
        self.attention2 = d2l.MultiHeadAttention(num_hiddens, num_heads, dropout, False,
                                                 num_hiddens, num_hiddens, num_hiddens)
        self.addnorm2 = AddNorm(num_hiddens, dropout)
        self.ffn = PositionWiseFFN(ffn_num_hiddens, num_hiddens, num_inputs=num_hiddens)
        self.addnorm3 = AddNorm(num_hiddens, dropout)

    def forward(self, X: Tensor, state: list) -> tuple[Tensor, list]:
        checks.check_features(X, size=self.num_hiddens)
        enc_outputs, enc_valid_lens, cache = state
        checks.check_features(enc_outputs, "enc_outputs", self.num_hiddens)
        batch, steps = X.shape[:2]
        if enc_outputs.shape[0] != batch:
            raise ValueError(f"enc_outputs must have batch {batch}, got "
                             f"{tuple(enc_outputs.shape)}")  # fmt: skip
        enc_valid_lens = checks.check_valid_lens(
            enc_valid_lens, batch, enc_outputs.shape[1], min_len=1,
            name="enc_valid_lens")
        past = cache[self.i]
        key_values = X if past is None else torch.cat((past, X), dim=1)
        cache[self.i] = key_values
        # Query t of this call sits at position c + t and may see keys 0 .. c + t.
        c = key_values.shape[1] - steps  # inputs cached before this call
        dec_valid_lens = (
            c + torch.arange(1, steps + 1, device=X.device)
        ).repeat(batch, 1)
        X2 = self.attention1(X, key_values, key_values, dec_valid_lens)
        Y = self.addnorm1(X, X2)
        # Cross-attention: queries from the decoder, keys and values from the encoder.
        Y2 = self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens)
        Z = self.addnorm2(Y, Y2)
        return self.addnorm3(Z, self.ffn(Z)), state

    @property
    def attention_weights(self) -> tuple[Tensor, Tensor]:
        """Last (self-attention, cross-attention) weights, each
        (batch, heads, queries, keys)."""
        return (
            _heads_first(self.attention1.attention.attention_weights, self.num_heads),
            _heads_first(self.attention2.attention.attention_weights, self.num_heads),
        )


class TransformerDecoder(d2l.AttentionDecoder):
    """Embedding * sqrt(d) + positional encoding, num_blks decoder blocks,
    a linear output layer.

    init_state(enc_outputs, enc_valid_lens) -> state; forward(X, state): token ids
    (batch, steps) -> logits (batch, steps, vocab_size) and the updated state (its cache
    grows by steps). Unlike d2l, which adds the encoding of position 0 to every token
    decoded one at a time, the positions are shifted by the number of cached tokens;
    attention_weights is a pair of tensors instead of nested lists.
    """

    def __init__(self, vocab_size: int, num_hiddens: int, ffn_num_hiddens: int,
                 num_heads: int, num_blks: int, dropout: float) -> None:  # fmt: skip
        super().__init__()
        self.num_blks = num_blks
        _stem(self, vocab_size, num_hiddens, dropout, num_blks,
              lambda i: TransformerDecoderBlock(
                  num_hiddens, ffn_num_hiddens, num_heads, dropout, i))
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, enc_outputs: Tensor, enc_valid_lens: Tensor | None,
                   *args) -> list:  # fmt: skip
        return [enc_outputs, enc_valid_lens, [None] * self.num_blks]

    def forward(self, X: Tensor, state: list) -> tuple[Tensor, list]:
        enc_outputs, enc_valid_lens, cache = checks.check_decoder_state(
            state, self.num_blks)
        batch = checks.check_tokens(X).shape[0]
        checks.check_features(enc_outputs, "enc_outputs", self.num_hiddens)
        if enc_outputs.shape[0] != batch:
            raise ValueError(f"X has batch {batch}, enc_outputs "
                             f"{tuple(enc_outputs.shape)}")  # fmt: skip
        src = enc_outputs.shape[1]
        state[1] = checks.check_valid_lens(enc_valid_lens, batch, src, min_len=1,
                                           name="enc_valid_lens", values=False)
        c = 0 if cache[0] is None else cache[0].shape[1]  # tokens decoded before
        # The door: target ids and source lengths are checked once, here.
        with checks.token_door(X, self.vocab_size, more_lens=[
                ("enc_valid_lens", state[1], 1, src)]):
            X = _embed(self, X, c)  # shifted positions: P[:, c : c + steps]
            for blk in self.blks:
                X, state = blk(X, state)
        return self.dense(X), state

    @property
    def attention_weights(self) -> tuple[Tensor, Tensor]:
        """Last (self-attention, cross-attention) weights of every block and head, each
        of shape (batch, num_blks, num_heads, queries, keys)."""
        pairs = [blk.attention_weights for blk in self.blks]
        return (torch.stack([s for s, _ in pairs], dim=1),
                torch.stack([c for _, c in pairs], dim=1))

    @property
    def source_attention_weights(self) -> Tensor:
        """The last block's cross-attention averaged over the heads:
        (batch, queries, src_steps), each row summing to 1; predict_seq2seq
        reports these."""
        return self.blks[-1].attention_weights[1].mean(dim=1)


__all__ = [
    "AddNorm",
    "PositionWiseFFN",
    "TransformerDecoder",
    "TransformerDecoderBlock",
    "TransformerEncoder",
    "TransformerEncoderBlock",
]
