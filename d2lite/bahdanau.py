"""Chapter 5: a GRU decoder with Bahdanau (additive) attention over the encoder states.

Generated from book/05_bahdanau.md
by `python -m tools.export`; edit the chapter, not this file.
"""

# ruff: noqa: I001  (imports stay in the order the chapter introduces them)

import torch

import d2lite as d2l
from d2lite import checks


class Seq2SeqAttentionDecoder(d2l.Seq2SeqDecoder, d2l.AttentionDecoder):
    """A GRU decoder that attends to the encoder states with additive attention.

    It keeps the plain decoder's layers (embedding, GRU over [context,
    embedding], output layer) and adds the attention: only the context
    changes, from fixed to attended.

    init_state((enc_outputs (batch, src_steps, num_hiddens), enc_state (num_layers,
    batch, num_hiddens)), enc_valid_lens (batch,)) -> state; forward(X (batch, steps),
    state) -> logits (batch, steps, vocab_size) and the new state. ``attention_weights``
    holds the weights of the last forward pass, (batch, steps, src_steps); unlike d2l,
    it is one tensor rather than a list, and tensors are batch first.
    """

    def __init__(
        self, vocab_size: int, embed_size: int, num_hiddens: int, num_layers: int,
        dropout: float = 0,
    ) -> None:  # fmt: skip
        super().__init__(vocab_size, embed_size, num_hiddens, num_layers,
                         dropout)
        self.attention = d2l.AdditiveAttention(
            num_hiddens, dropout, query_size=num_hiddens, key_size=num_hiddens
        )
        self._attention_weights = torch.zeros(0)

    def init_state(self, enc_all_outputs, enc_valid_lens=None):
        enc_outputs, hidden_state = enc_all_outputs
        enc_valid_lens = checks.check_valid_lens(
            enc_valid_lens, *enc_outputs.shape[:2], min_len=1,
            name="enc_valid_lens", values=False)  # the values: at forward's door
        return enc_outputs, hidden_state, enc_valid_lens

    def forward(self, X: torch.Tensor, state):
        enc_outputs, hidden_state, enc_valid_lens = state
        checks.check_tokens(X)
        expected = (X.shape[0], enc_outputs.shape[1], self.num_hiddens)
        if tuple(enc_outputs.shape) != expected:
            raise ValueError(f"encoder outputs must have shape {expected}, "
                             f"got {tuple(enc_outputs.shape)}")
        checks.check_rnn_state(hidden_state, self.rnn, X.shape[0],
                               "the encoder's final state")
        # The door: token ids and source lengths are checked once, not at every step.
        src_lens = ("enc_valid_lens", enc_valid_lens, 1, enc_outputs.shape[1])
        with checks.door(tokens=[("X", X, self.vocab_size)], lens=[src_lens]):
            embs = self.embedding(X)  # (batch, steps, embed_size)
            # h_t W_k does not depend on the step t': projected once per sentence.
            keys = self.attention.project_keys(enc_outputs)
            outputs, weights = [], []
            for t in range(X.shape[1]):
                # The query is the previous state s_{t'-1} of the top layer (batch, 1,
                # hiddens).
                query = hidden_state[-1].unsqueeze(1)
                context = self.attention(
                    query, keys, enc_outputs, enc_valid_lens, keys_projected=True
                )
                step_input = torch.cat((context, embs[:, t : t + 1]), dim=-1)
                output, hidden_state = self.rnn(step_input, hidden_state)
                outputs.append(output)
                # (batch, 1, src_steps)
                weights.append(self.attention.attention_weights)
        self._attention_weights = torch.cat(weights, dim=1)
        logits = self.dense(torch.cat(outputs, dim=1))  # (batch, steps, vocab_size)
        return logits, (enc_outputs, hidden_state, enc_valid_lens)

    @property
    def attention_weights(self) -> torch.Tensor:
        return self._attention_weights


__all__ = [
    "Seq2SeqAttentionDecoder",
]
