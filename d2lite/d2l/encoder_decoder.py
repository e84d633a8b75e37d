"""d2l's encoder-decoder models, time-first as in d2l: the ``Encoder`` / ``Decoder``
interfaces, ``EncoderDecoder``, the GRU ``Seq2Seq`` and ``bleu``. The attention decoder
``Seq2SeqAttentionDecoder`` lives with the attention models."""

from __future__ import annotations

import collections
import math

import torch
from torch import nn

from .framework import GRU, Classifier, init_seq2seq


class Encoder(nn.Module):
    """Base encoder interface: ``forward(X, *args)``."""

    def forward(self, X, *args):
        raise NotImplementedError


class Decoder(nn.Module):
    """Base decoder interface: ``init_state(enc_all_outputs, *args)`` and ``forward(X, state)``."""

    def init_state(self, enc_all_outputs, *args):
        raise NotImplementedError

    def forward(self, X, state):
        raise NotImplementedError


class AttentionDecoder(Decoder):
    """A decoder that exposes ``attention_weights``."""

    @property
    def attention_weights(self):
        raise NotImplementedError


class EncoderDecoder(Classifier):
    """Encoder + decoder as one ``Classifier``; ``predict_step`` decodes greedily."""

    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder

    def forward(self, enc_X, dec_X, *args):
        enc_all_outputs = self.encoder(enc_X, *args)
        dec_state = self.decoder.init_state(enc_all_outputs, *args)
        return self.decoder(dec_X, dec_state)[0]

    def predict_step(self, batch, device, num_steps, save_attention_weights=False):
        batch = [a.to(device) for a in batch]
        src, tgt, src_valid_len, _ = batch
        enc_all_outputs = self.encoder(src, src_valid_len)
        dec_state = self.decoder.init_state(enc_all_outputs, src_valid_len)
        outputs, attention_weights = [tgt[:, 0].unsqueeze(1)], []
        for _ in range(num_steps):
            Y, dec_state = self.decoder(outputs[-1], dec_state)
            outputs.append(Y.argmax(2))
            if save_attention_weights:
                attention_weights.append(self.decoder.attention_weights)
        return torch.cat(outputs[1:], 1), attention_weights


class Seq2SeqEncoder(Encoder):
    """GRU encoder: tokens (batch, steps) -> outputs (steps, batch, h), state (layers, batch, h)."""

    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = GRU(embed_size, num_hiddens, num_layers, dropout)
        self.apply(init_seq2seq)

    def forward(self, X, *args):
        embs = self.embedding(X.t().type(torch.int64))  # (steps, batch, embed)
        outputs, state = self.rnn(embs)
        return outputs, state


class Seq2SeqDecoder(Decoder):
    """GRU decoder fed the encoder's last-layer final state as context at every step."""

    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = GRU(embed_size + num_hiddens, num_hiddens, num_layers, dropout)
        self.dense = nn.LazyLinear(vocab_size)
        self.apply(init_seq2seq)

    def init_state(self, enc_all_outputs, *args):
        return enc_all_outputs

    def forward(self, X, state):
        embs = self.embedding(X.t().type(torch.int64))
        enc_output, hidden_state = state
        context = enc_output[-1].repeat(embs.shape[0], 1, 1)
        outputs, hidden_state = self.rnn(torch.cat((embs, context), -1), hidden_state)
        outputs = self.dense(outputs).swapaxes(0, 1)  # (batch, steps, vocab)
        return outputs, [enc_output, hidden_state]


class Seq2Seq(EncoderDecoder):
    """Encoder-decoder trained with a padding-masked cross-entropy and Adam at ``lr``."""

    def __init__(self, encoder, decoder, tgt_pad, lr):
        super().__init__(encoder, decoder)
        self.save_hyperparameters()

    def validation_step(self, batch):
        Y_hat = self(*batch[:-1])
        self.plot("loss", self.loss(Y_hat, batch[-1]), train=False)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)

    def loss(self, Y_hat, Y):
        per_token = super().loss(Y_hat, Y, averaged=False)
        mask = (Y.reshape(-1) != self.tgt_pad).type(torch.float32)
        return (per_token * mask).sum() / mask.sum()


def bleu(pred_seq: str, label_seq: str, k: int) -> float:
    """BLEU with d2l's n-gram range: n runs up to ``min(k, len(pred))``."""
    pred_tokens, label_tokens = pred_seq.split(" "), label_seq.split(" ")
    len_pred, len_label = len(pred_tokens), len(label_tokens)
    score = math.exp(min(0, 1 - len_label / len_pred))
    for n in range(1, min(k, len_pred) + 1):
        label_grams = collections.Counter(
            " ".join(label_tokens[i:i + n]) for i in range(len_label - n + 1))
        matches = 0
        for i in range(len_pred - n + 1):
            gram = " ".join(pred_tokens[i:i + n])
            if label_grams[gram] > 0:
                matches += 1
                label_grams[gram] -= 1
        score *= math.pow(matches / (len_pred - n + 1), math.pow(0.5, n))
    return score
