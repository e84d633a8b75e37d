"""d2l's attention models and Transformer blocks: ``masked_softmax``, dot-product,
additive and multi-head attention, the Bahdanau ``Seq2SeqAttentionDecoder``, positional
encoding and the Transformer encoder and decoder, with d2l's list-valued
``attention_weights``."""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from .encoder_decoder import AttentionDecoder, Encoder
from .framework import Module, init_seq2seq


def masked_softmax(X, valid_lens=None):
    """Softmax over the last axis of a 3-D ``X`` with the keys at positions ``>= valid_lens``
    (1-D per batch or 2-D per query) hidden, as d2l does.

    d2l fills hidden scores with -1e6, which float16 cannot hold and which loses to kept scores
    below -1e6. Here a hidden key gets weight exactly 0 whatever the kept scores and dtype, and a
    row of valid length 0 (no key kept) gets d2l's result: equal weights on every key.
    ``valid_lens`` may live on another device than ``X``; it is moved to ``X``'s.
    """
    if valid_lens is None:
        return F.softmax(X, dim=-1)
    shape = X.shape
    valid_lens = valid_lens.to(X.device)
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    flat = X.reshape(-1, shape[-1])
    keep = torch.arange(shape[-1], device=X.device)[None, :] < valid_lens[:, None]
    # -inf has exp exactly 0 in every float dtype; a row that keeps nothing is all -inf, so it
    # is set to 0 instead (equal scores: d2l's uniform weights), without asking the device.
    flat = flat.masked_fill(~keep, -math.inf).masked_fill((valid_lens <= 0)[:, None], 0.0)
    return F.softmax(flat.reshape(shape), dim=-1)


class DotProductAttention(nn.Module):
    """Scaled dot-product attention on (batch, queries, d) and (batch, keys, d)."""

    def __init__(self, dropout, num_heads=None):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.num_heads = num_heads

    def forward(self, queries, keys, values, valid_lens=None, window_mask=None):
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        if window_mask is not None:  # (num_windows, n, n), as in d2l's Swin-style variant
            num_windows = window_mask.shape[0]
            n, m = scores.shape[1], scores.shape[2]
            scores = scores.reshape(-1, num_windows, self.num_heads, n, m)
            scores = scores + window_mask.unsqueeze(1).unsqueeze(0)
            scores = scores.reshape(-1, n, m)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


class AdditiveAttention(nn.Module):
    """Additive (Bahdanau) attention with lazily sized projections."""

    def __init__(self, num_hiddens, dropout, **kwargs):
        super().__init__()
        self.W_k = nn.LazyLinear(num_hiddens, bias=False)
        self.W_q = nn.LazyLinear(num_hiddens, bias=False)
        self.w_v = nn.LazyLinear(1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens):
        queries, keys = self.W_q(queries), self.W_k(keys)
        features = torch.tanh(queries.unsqueeze(2) + keys.unsqueeze(1))
        scores = self.w_v(features).squeeze(-1)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


class Seq2SeqAttentionDecoder(AttentionDecoder):
    """Bahdanau-style decoder over the time-first encoder outputs; ``attention_weights`` is a
    list with one (batch, 1, src_steps) tensor per decoded step, as in d2l."""

    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0):
        super().__init__()
        self.attention = AdditiveAttention(num_hiddens, dropout)
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size + num_hiddens, num_hiddens, num_layers, dropout=dropout)
        self.dense = nn.LazyLinear(vocab_size)
        self.apply(init_seq2seq)
        self._attention_weights = []

    def init_state(self, enc_outputs, enc_valid_lens):
        outputs, hidden_state = enc_outputs
        return (outputs.permute(1, 0, 2), hidden_state, enc_valid_lens)

    def forward(self, X, state):
        enc_outputs, hidden_state, enc_valid_lens = state
        X = self.embedding(X).permute(1, 0, 2)  # (steps, batch, embed)
        outputs, self._attention_weights = [], []
        for x in X:
            query = hidden_state[-1].unsqueeze(1)
            context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens)
            x = torch.cat((context, x.unsqueeze(1)), dim=-1)
            out, hidden_state = self.rnn(x.permute(1, 0, 2), hidden_state)
            outputs.append(out)
            self._attention_weights.append(self.attention.attention_weights)
        outputs = self.dense(torch.cat(outputs, dim=0))
        return outputs.permute(1, 0, 2), [enc_outputs, hidden_state, enc_valid_lens]

    @property
    def attention_weights(self):
        return self._attention_weights


class MultiHeadAttention(Module):
    """Multi-head attention; heads are folded into the batch axis, so
    ``self.attention.attention_weights`` is (batch * num_heads, queries, keys) as in d2l."""

    def __init__(self, num_hiddens, num_heads, dropout, bias=False, **kwargs):
        super().__init__()
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout, num_heads)
        self.W_q = nn.LazyLinear(num_hiddens, bias=bias)
        self.W_k = nn.LazyLinear(num_hiddens, bias=bias)
        self.W_v = nn.LazyLinear(num_hiddens, bias=bias)
        self.W_o = nn.LazyLinear(num_hiddens, bias=bias)

    def forward(self, queries, keys, values, valid_lens, window_mask=None):
        queries = self.transpose_qkv(self.W_q(queries))
        keys = self.transpose_qkv(self.W_k(keys))
        values = self.transpose_qkv(self.W_v(values))
        if valid_lens is not None:
            valid_lens = torch.repeat_interleave(valid_lens, repeats=self.num_heads, dim=0)
        output = self.attention(queries, keys, values, valid_lens, window_mask)
        return self.W_o(self.transpose_output(output))

    def transpose_qkv(self, X):
        """(batch, n, h) -> (batch * num_heads, n, h / num_heads)."""
        X = X.reshape(X.shape[0], X.shape[1], self.num_heads, -1).permute(0, 2, 1, 3)
        return X.reshape(-1, X.shape[2], X.shape[3])

    def transpose_output(self, X):
        """Undo ``transpose_qkv``."""
        X = X.reshape(-1, self.num_heads, X.shape[1], X.shape[2]).permute(0, 2, 1, 3)
        return X.reshape(X.shape[0], X.shape[1], -1)


class PositionalEncoding(nn.Module):
    """Sinusoidal positional encoding added to (batch, steps, num_hiddens) inputs."""

    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        P = torch.zeros((1, max_len, num_hiddens))
        angles = torch.arange(max_len, dtype=torch.float32).reshape(-1, 1) / torch.pow(
            10000, torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
        P[:, :, 0::2] = torch.sin(angles)
        P[:, :, 1::2] = torch.cos(angles)
        # a buffer moves with the module (.to(device), .half()); not persistent, so state dicts
        # stay d2l's, where P is a plain attribute
        self.register_buffer("P", P, persistent=False)

    def forward(self, X):
        P = self.P[:, :X.shape[1], :]
        if P.device != X.device or (X.is_floating_point() and P.dtype != X.dtype):
            P = P.to(X.device, X.dtype if X.is_floating_point() else P.dtype)
        return self.dropout(X + P)


class PositionWiseFFN(nn.Module):
    """Two dense layers (``dense1``, ``dense2``) with a ReLU between, at every position."""

    def __init__(self, ffn_num_hiddens, ffn_num_outputs):
        super().__init__()
        self.dense1 = nn.LazyLinear(ffn_num_hiddens)
        self.relu = nn.ReLU()
        self.dense2 = nn.LazyLinear(ffn_num_outputs)

    def forward(self, X):
        return self.dense2(self.relu(self.dense1(X)))


class AddNorm(nn.Module):
    """Residual connection followed by layer normalisation: ``ln(dropout(Y) + X)``."""

    def __init__(self, norm_shape, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(norm_shape)

    def forward(self, X, Y):
        return self.ln(self.dropout(Y) + X)


class TransformerEncoderBlock(nn.Module):
    """Post-norm encoder block: self-attention and FFN, each with ``AddNorm``."""

    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias=False):
        super().__init__()
        self.attention = MultiHeadAttention(num_hiddens, num_heads, dropout, use_bias)
        self.addnorm1 = AddNorm(num_hiddens, dropout)
        self.ffn = PositionWiseFFN(ffn_num_hiddens, num_hiddens)
        self.addnorm2 = AddNorm(num_hiddens, dropout)

    def forward(self, X, valid_lens):
        Y = self.addnorm1(X, self.attention(X, X, X, valid_lens))
        return self.addnorm2(Y, self.ffn(Y))


def _transformer_stem(module, vocab_size, num_hiddens, dropout, blocks):
    """The embedding, positional encoding and blocks ``block0``, ``block1``, … that d2l's
    Transformer encoder and decoder share."""
    module.num_hiddens = num_hiddens
    module.embedding = nn.Embedding(vocab_size, num_hiddens)
    module.pos_encoding = PositionalEncoding(num_hiddens, dropout)
    module.blks = nn.Sequential()
    for i, blk in enumerate(blocks):
        module.blks.add_module(f"block{i}", blk)


class TransformerEncoder(Encoder):
    """Embedding (scaled by √h) + positions + ``num_blks`` blocks; ``attention_weights`` is a
    list with one (batch * num_heads, steps, steps) tensor per block, as in d2l."""

    def __init__(self, vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_blks, dropout,
                 use_bias=False):
        super().__init__()
        _transformer_stem(self, vocab_size, num_hiddens, dropout, [
            TransformerEncoderBlock(num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias)
            for _ in range(num_blks)])

    def forward(self, X, valid_lens):
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
        self.attention_weights = [None] * len(self.blks)
        for i, blk in enumerate(self.blks):
            X = blk(X, valid_lens)
            self.attention_weights[i] = blk.attention.attention.attention_weights
        return X


class TransformerDecoderBlock(nn.Module):
    """Decoder block ``i``: masked self-attention over the cached keys, encoder-decoder
    attention, FFN; ``state[2][i]`` caches this block's inputs so far."""

    def __init__(self, num_hiddens, ffn_num_hiddens, num_heads, dropout, i):
        super().__init__()
        self.i = i
        self.attention1 = MultiHeadAttention(num_hiddens, num_heads, dropout)
        self.addnorm1 = AddNorm(num_hiddens, dropout)
        self.attention2 = MultiHeadAttention(num_hiddens, num_heads, dropout)
        self.addnorm2 = AddNorm(num_hiddens, dropout)
        self.ffn = PositionWiseFFN(ffn_num_hiddens, num_hiddens)
        self.addnorm3 = AddNorm(num_hiddens, dropout)

    def forward(self, X, state):
        enc_outputs, enc_valid_lens = state[0], state[1]
        cached = state[2][self.i]
        key_values = X if cached is None else torch.cat((cached, X), dim=1)
        state[2][self.i] = key_values
        if self.training:
            batch_size, num_steps, _ = X.shape
            dec_valid_lens = torch.arange(1, num_steps + 1, device=X.device).repeat(batch_size, 1)
        else:
            dec_valid_lens = None
        Y = self.addnorm1(X, self.attention1(X, key_values, key_values, dec_valid_lens))
        Z = self.addnorm2(Y, self.attention2(Y, enc_outputs, enc_outputs, enc_valid_lens))
        return self.addnorm3(Z, self.ffn(Z)), state


class TransformerDecoder(AttentionDecoder):
    """Transformer decoder; ``attention_weights`` is d2l's pair of lists
    ``[self-attention per block, encoder-decoder attention per block]``."""

    def __init__(self, vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_blks, dropout):
        super().__init__()
        self.num_blks = num_blks
        _transformer_stem(self, vocab_size, num_hiddens, dropout, [
            TransformerDecoderBlock(num_hiddens, ffn_num_hiddens, num_heads, dropout, i)
            for i in range(num_blks)])
        self.dense = nn.LazyLinear(vocab_size)
        self._attention_weights = [[None] * num_blks, [None] * num_blks]

    def init_state(self, enc_outputs, enc_valid_lens):
        return [enc_outputs, enc_valid_lens, [None] * self.num_blks]

    def forward(self, X, state):
        X = self.pos_encoding(self.embedding(X) * math.sqrt(self.num_hiddens))
        self._attention_weights = [[None] * len(self.blks) for _ in range(2)]
        for i, blk in enumerate(self.blks):
            X, state = blk(X, state)
            self._attention_weights[0][i] = blk.attention1.attention.attention_weights
            self._attention_weights[1][i] = blk.attention2.attention.attention_weights
        return self.dense(X), state

    @property
    def attention_weights(self):
        return self._attention_weights
