"""Sequence-to-sequence building blocks: encoder/decoder interfaces, a GRU encoder, a plain GRU
decoder, the masked loss, greedy decoding and BLEU.

Shapes are batch first: tokens ``(batch, steps)``, RNN outputs ``(batch, steps, num_hiddens)``,
RNN states ``(num_layers, batch, num_hiddens)``. Chapter 5 adds the attention decoder.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Callable, Sequence

import torch
from torch import nn
from torch.nn import functional as F

from . import checks
from .text import Vocab, detokenize_ko, tokenize_en, truncate_pad

__all__ = [
    "AttentionDecoder",
    "Decoder",
    "Encoder",
    "EncoderDecoder",
    "MaskedSoftmaxCELoss",
    "Seq2Seq",
    "Seq2SeqDecoder",
    "Seq2SeqEncoder",
    "bleu",
    "corpus_bleu",
    "chrf",
    "evaluate_bleu",
    "masked_cross_entropy",
    "predict_seq2seq",
    "translate",
]


class Encoder(nn.Module):
    """Interface: turn a source batch into whatever the decoder needs."""

    def forward(self, X: torch.Tensor, *args):
        raise NotImplementedError


class Decoder(nn.Module):
    """Interface: ``init_state`` from the encoder's outputs, then ``forward(X, state)``."""

    def init_state(self, enc_all_outputs, *args):
        raise NotImplementedError

    def forward(self, X: torch.Tensor, state):
        raise NotImplementedError


class AttentionDecoder(Decoder):
    """A decoder that keeps the attention weights of its last forward pass.

    ``attention_weights`` is whatever the model exposes (for a Transformer, every block and
    head). ``source_attention_weights`` is the one view :func:`predict_seq2seq` uses: the
    weights over the source positions, (batch, steps, src_steps), each row summing to 1. By
    default it is ``attention_weights`` itself, which must then have that shape (or, as in
    d2l, be a list of (batch, 1, src_steps) tensors, one per step); a decoder with several
    attention layers overrides it and says which weights it reports.
    """

    @property
    def attention_weights(self):
        raise NotImplementedError

    @property
    def source_attention_weights(self) -> torch.Tensor:
        w = self.attention_weights
        if isinstance(w, list) and w and all(isinstance(x, torch.Tensor) for x in w):
            w = torch.cat(w, dim=1)  # d2l style: one (batch, 1, src_steps) tensor per step
        if not isinstance(w, torch.Tensor) or w.dim() != 3:
            got = tuple(w.shape) if isinstance(w, torch.Tensor) else type(w).__name__
            raise NotImplementedError(
                f"{type(self).__name__}.attention_weights is {got}, not (batch, steps, "
                "src_steps): override source_attention_weights"
            )
        return w


class EncoderDecoder(nn.Module):
    """Run the encoder on ``enc_X`` and the decoder on ``dec_X`` from the encoder's state."""

    def __init__(self, encoder: Encoder, decoder: Decoder) -> None:
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder

    def forward(self, enc_X: torch.Tensor, dec_X: torch.Tensor, *args) -> torch.Tensor:
        """Logits (batch, tgt_steps, vocab) for source (batch, src_steps), decoder input."""
        enc_all_outputs = self.encoder(enc_X, *args)
        dec_state = self.decoder.init_state(enc_all_outputs, *args)
        return self.decoder(dec_X, dec_state)[0]


class Seq2Seq(EncoderDecoder):
    """The encoder–decoder for translation: ``net(src, dec_input, src_valid_len)``.

    Unlike d2l's Seq2Seq it holds no loss, optimiser or padding index: train it with
    ``train_seq2seq``, which masks the padding.
    """


def _check_sizes(vocab_size: int, embed_size: int, num_hiddens: int, num_layers: int) -> None:
    for name, value in (("vocab_size", vocab_size), ("embed_size", embed_size),
                        ("num_hiddens", num_hiddens), ("num_layers", num_layers)):  # fmt: skip
        checks.check_positive(value, name)


class Seq2SeqEncoder(Encoder):
    """Embedding + multi-layer GRU: tokens (batch, steps) → outputs and final state.

    Returns ``(outputs, state)``: (batch, steps, num_hiddens) and (num_layers, batch,
    num_hiddens). With ``valid_lens`` the padding is skipped (packed sequences), so the final
    state is the state after each sentence's last real token and padded outputs are zero.
    Unlike d2l, tensors are batch first and the padding never reaches the GRU.
    """

    def __init__(
        self, vocab_size: int, embed_size: int, num_hiddens: int, num_layers: int,
        dropout: float = 0,
    ) -> None:  # fmt: skip
        super().__init__()
        _check_sizes(vocab_size, embed_size, num_hiddens, num_layers)
        self.vocab_size = vocab_size
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(embed_size, num_hiddens, num_layers, dropout=dropout, batch_first=True)

    def forward(self, X: torch.Tensor, valid_lens: torch.Tensor | None = None, *args):
        with checks.token_door(X, self.vocab_size, valid_lens) as valid_lens:
            embs = self.embedding(X)  # (batch, steps, embed_size)
            if valid_lens is None:
                return self.rnn(embs)
            packed = nn.utils.rnn.pack_padded_sequence(
                embs, valid_lens.cpu(), batch_first=True, enforce_sorted=False
            )
            outputs, state = self.rnn(packed)
            outputs, _ = nn.utils.rnn.pad_packed_sequence(
                outputs, batch_first=True, total_length=X.shape[1]
            )
            return outputs, state


class Seq2SeqDecoder(Decoder):
    """The plain GRU decoder: every step sees the same context, the encoder's final state.

    ``init_state`` → ``(context, hidden)``; ``forward(X, state)`` with X (batch, steps) →
    logits (batch, steps, vocab_size) and the new state. Unlike d2l, tensors are batch first
    and the context is the encoder's final state of its top layer.
    """

    def __init__(
        self, vocab_size: int, embed_size: int, num_hiddens: int, num_layers: int,
        dropout: float = 0,
    ) -> None:  # fmt: skip
        super().__init__()
        _check_sizes(vocab_size, embed_size, num_hiddens, num_layers)
        self.num_hiddens = num_hiddens
        self.vocab_size = vocab_size
        self.embedding = nn.Embedding(vocab_size, embed_size)
        self.rnn = nn.GRU(
            embed_size + num_hiddens, num_hiddens, num_layers, dropout=dropout, batch_first=True
        )
        self.dense = nn.Linear(num_hiddens, vocab_size)

    def init_state(self, enc_all_outputs, *args):
        _, hidden = enc_all_outputs
        return hidden[-1], hidden  # context: the top layer's final state (batch, num_hiddens)

    def forward(self, X: torch.Tensor, state):
        checks.check_tokens(X)
        if not isinstance(state, (tuple, list)) or len(state) != 2:
            raise ValueError(f"state must be the pair (context, hidden) that init_state returns, "
                             f"got {type(state).__name__}")
        context, hidden = state
        if context.shape != (X.shape[0], self.num_hiddens):
            raise ValueError(
                f"context must have shape ({X.shape[0]}, {self.num_hiddens}), "
                f"got {tuple(context.shape)}"
            )
        checks.check_rnn_state(hidden, self.rnn, X.shape[0], "the encoder's final state")
        with checks.door(tokens=[("X", X, self.vocab_size)]):  # ids checked once
            embs = self.embedding(X)  # (batch, steps, embed_size)
        context = context.unsqueeze(1).expand(-1, X.shape[1], -1)
        outputs, hidden = self.rnn(torch.cat((embs, context), dim=-1), hidden)
        return self.dense(outputs), (state[0], hidden)


IGNORE_INDEX = -100  # PyTorch's cross-entropy convention for a label that does not count


def _length_mask(valid_lens: torch.Tensor, steps: int) -> torch.Tensor:
    """Boolean mask (batch, steps), True where the position is < valid_lens (batch,)."""
    if valid_lens.dim() != 1:
        raise ValueError(f"valid_lens must have shape (batch,), got {tuple(valid_lens.shape)}")
    return torch.arange(steps, device=valid_lens.device)[None, :] < valid_lens[:, None]


def _check_loss_inputs(logits, labels, valid_lens) -> torch.Tensor:
    """Check (batch, steps, vocab) logits, (batch, steps) labels and (batch,) lengths in
    [0, steps]; return the lengths as an integer tensor."""
    checks.check_features(logits, "logits", last="vocab")
    checks.check_tokens(labels, "labels")
    if tuple(labels.shape) != tuple(logits.shape[:2]):
        raise ValueError(
            f"labels must have shape {tuple(logits.shape[:2])}, got {tuple(labels.shape)}"
        )
    if valid_lens is None:
        raise ValueError(f"valid_lens must have shape ({logits.shape[0]},), got None")
    valid_lens = checks.check_valid_lens(valid_lens, *labels.shape)
    vocab = logits.shape[-1]
    real = labels[labels != IGNORE_INDEX]
    if real.numel() and (int(real.min()) < 0 or int(real.max()) >= vocab):  # one host sync
        raise ValueError(f"labels must be token ids in [0, {vocab}) or {IGNORE_INDEX} (ignored), "
                         f"got values from {int(real.min())} to {int(real.max())}")
    return valid_lens


def _real_tokens(labels: torch.Tensor, valid_lens: torch.Tensor) -> torch.Tensor:
    """Boolean mask (batch, steps) of the tokens a loss counts: inside the valid length and not
    labelled -100."""
    return _length_mask(valid_lens.to(labels.device), labels.shape[1]) & (labels != IGNORE_INDEX)


def masked_cross_entropy(
    logits: torch.Tensor, labels: torch.Tensor, valid_lens: torch.Tensor
) -> torch.Tensor:
    """Mean cross-entropy over the real tokens only: logits (batch, steps, vocab),
    labels (batch, steps), valid_lens (batch,) → scalar. Padding never counts, nor does a label
    of -100 (PyTorch's ``ignore_index``): neither is in the sum nor in the count."""
    valid_lens = _check_loss_inputs(logits, labels, valid_lens)
    mask = _real_tokens(labels, valid_lens)
    losses = F.cross_entropy(logits.transpose(1, 2), labels, reduction="none")
    n = mask.sum()
    if n == 0:
        raise ValueError("valid_lens are all zero: no token to compute a loss on")
    return (losses * mask).sum() / n


class MaskedSoftmaxCELoss(nn.CrossEntropyLoss):
    """d2l's per-sequence loss: (batch, steps, vocab), (batch, steps), (batch,) → (batch,).

    Each sequence's token losses are zeroed at padding and averaged over all ``steps``.
    """

    def forward(self, pred, label, valid_len):  # type: ignore[override]
        valid_len = _check_loss_inputs(pred, label, valid_len)
        mask = _length_mask(valid_len.to(label.device), label.shape[1]).float()
        self.reduction = "none"
        unweighted = super().forward(pred.transpose(1, 2), label)
        return (unweighted * mask).mean(dim=1)


# -- decoding --------------------------------------------------------------------------------


def _encode_sources(sentences, src_vocab, num_steps, device, tokenize):
    rows, lens = [], []
    for s in sentences:
        ids = src_vocab[tokenize(s)] + [src_vocab.eos]
        lens.append(min(len(ids), num_steps))
        rows.append(truncate_pad(ids, num_steps, src_vocab.pad))
    X = torch.tensor(rows, dtype=torch.long, device=device)
    return X, torch.tensor(lens, dtype=torch.long, device=device)


def _step_weights(decoder, batch: int, src_steps: int) -> torch.Tensor | None:
    """The last step's weights over the source, (batch, src_steps), or None without attention.

    Taken from ``decoder.source_attention_weights`` (batch, steps, src_steps); any other shape
    raises instead of being flattened into rows of the wrong width.
    """
    if not isinstance(decoder, AttentionDecoder):
        return None
    w = decoder.source_attention_weights
    if w.dim() != 3 or w.shape[0] != batch or w.shape[2] != src_steps:
        raise ValueError(
            f"{type(decoder).__name__}.source_attention_weights must have shape "
            f"({batch}, steps, {src_steps}), got {tuple(w.shape)}"
        )
    return w[:, -1, :]


@torch.no_grad()
def _greedy(net, X, X_len, tgt_vocab, num_steps, save_attention_weights):
    was_training = net.training
    try:
        net.eval()
        return _greedy_steps(net, X, X_len, tgt_vocab, num_steps, save_attention_weights)
    finally:
        net.train(was_training)  # the caller's mode, as it was


def _greedy_steps(net, X, X_len, tgt_vocab, num_steps, save_attention_weights):
    enc_all_outputs = net.encoder(X, X_len)
    state = net.decoder.init_state(enc_all_outputs, X_len)
    batch = X.shape[0]
    dec_X = torch.full((batch, 1), tgt_vocab.bos, dtype=torch.long, device=X.device)
    out = torch.full((batch, num_steps), tgt_vocab.pad, dtype=torch.long)
    weights = []
    done = torch.zeros(batch, dtype=torch.bool)
    for t in range(num_steps):
        Y, state = net.decoder(dec_X, state)
        dec_X = Y.argmax(dim=2)
        out[:, t] = dec_X[:, 0].cpu()
        if save_attention_weights:
            w = _step_weights(net.decoder, batch, X.shape[1])
            if w is not None:
                weights.append(w.cpu())
        done |= out[:, t] == tgt_vocab.eos
        if bool(done.all()):
            break
    return out, weights


def _to_tokens(row: torch.Tensor, vocab: Vocab) -> list[str]:
    tokens = []
    for i in row.tolist():
        if i == vocab.eos:
            break
        tokens.append(vocab.to_tokens(i))
    return tokens


def predict_seq2seq(
    net: EncoderDecoder,
    src_sentence: str,
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    num_steps: int,
    device: torch.device | None = None,
    save_attention_weights: bool = False,
    tokenize: Callable[[str], list[str]] | None = None,
    detokenize: Callable[[Sequence[str]], str] | None = None,
    return_tokens: bool = False,
):
    """Greedy translation of one sentence → ``(text, attention_weights)``.

    ``text`` is detokenised (Korean particles re-attached). ``attention_weights`` is a
    (output_tokens, num_steps) tensor, row i the weights over the padded source while emitting
    output token i, each row summing to 1 (empty when not saved or the decoder has no
    attention). They are the decoder's ``source_attention_weights``: for the Transformer, the
    last decoder block's cross-attention averaged over the heads. With
    ``return_tokens=True`` the result is ``(text, tokens, attention_weights)``. The source is
    split by ``tokenize`` (default :func:`tokenize_en`) and the output joined by ``detokenize``
    (default :func:`detokenize_ko`). Unlike d2l, the text is detokenised (Korean particles
    re-attached) and the weights are one tensor.
    """
    tokenize = tokenize or tokenize_en
    detokenize = detokenize or detokenize_ko
    if not isinstance(src_sentence, str):
        raise ValueError(f"src_sentence must be a str, got {type(src_sentence).__name__}")
    num_steps = checks.check_scalar(num_steps, "num_steps", int, low=1)
    device = device if device is not None else next(net.parameters()).device
    X, X_len = _encode_sources([src_sentence], src_vocab, num_steps, device, tokenize)
    out, weights = _greedy(net, X, X_len, tgt_vocab, num_steps, save_attention_weights)
    tokens = _to_tokens(out[0], tgt_vocab)
    if weights:
        attn = torch.cat(weights, dim=0)[: len(tokens)]
    else:
        attn = torch.zeros(0, num_steps)
    text = detokenize(tokens)
    return (text, tokens, attn) if return_tokens else (text, attn)


def translate(
    net: EncoderDecoder,
    sentences: Sequence[str],
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    num_steps: int,
    device: torch.device | None = None,
    batch_size: int = 256,
    tokenize: Callable[[str], list[str]] | None = None,
    detokenize: Callable[[Sequence[str]], str] | None = None,
) -> list[str]:
    """Greedy translations of many sentences, decoded in batches of ``batch_size``.

    ``tokenize`` and ``detokenize`` default to :func:`tokenize_en` and :func:`detokenize_ko`.
    """
    tokenize = tokenize or tokenize_en
    detokenize = detokenize or detokenize_ko
    if isinstance(sentences, str):
        raise ValueError("sentences must be a list of str, got one str")
    num_steps = checks.check_scalar(num_steps, "num_steps", int, low=1)
    batch_size = checks.check_scalar(batch_size, "batch_size", int, low=1)
    device = device if device is not None else next(net.parameters()).device
    texts: list[str] = []
    for i in range(0, len(sentences), batch_size):
        X, X_len = _encode_sources(sentences[i : i + batch_size], src_vocab, num_steps, device,
                                   tokenize)  # fmt: skip
        out, _ = _greedy(net, X, X_len, tgt_vocab, num_steps, False)
        texts += [detokenize(_to_tokens(row, tgt_vocab)) for row in out]
    return texts


# -- BLEU ------------------------------------------------------------------------------------


def _tokens(seq) -> list[str]:
    if isinstance(seq, str):
        return seq.split()
    if isinstance(seq, (list, tuple)) and all(isinstance(t, str) for t in seq):
        return list(seq)
    raise ValueError(f"expected a str or a list of str tokens, got {type(seq).__name__}")


def _ngrams(tokens: list[str], n: int) -> collections.Counter:
    return collections.Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def bleu(pred_seq, label_seq, k: int = 2) -> float:
    """Sentence BLEU in [0, 1]: a brevity penalty times weighted n-gram precisions.

    ``exp(min(0, 1 - len_label / len_pred)) * prod_{n=1..k} p_n ** (1 / 2**n)``, where p_n is
    the clipped n-gram precision of the prediction. Strings are split at spaces. Longer
    n-grams weigh more (1/2, 1/4, ...), and a too-short prediction is penalised because short
    outputs get high precision easily. A prediction shorter than n words has p_n = 0.

    Compared with corpus BLEU as sacreBLEU reports it: sacreBLEU pools n-gram counts and
    lengths over the whole corpus before taking the ratio (so a corpus score is not the mean
    of sentence scores), uses n = 1..4 with equal weights 1/4 in a geometric mean, applies its
    own tokeniser (13a) and, by default, smoothing for zero counts, and reports × 100. See
    :func:`corpus_bleu` for the unsmoothed pooled version. The formula is d2l's; unlike d2l,
    token lists are accepted too, and a prediction shorter than n words scores 0 instead of
    dividing by zero.
    """
    k = checks.check_scalar(k, "k", int, low=1)
    pred, label = _tokens(pred_seq), _tokens(label_seq)
    if not label:
        raise ValueError("label_seq is empty")
    if not pred:
        return 0.0
    len_pred, len_label = len(pred), len(label)
    score = math.exp(min(0.0, 1 - len_label / len_pred))
    for n in range(1, k + 1):
        if len_pred < n:
            return 0.0
        label_counts = _ngrams(label, n)
        matches = sum(min(c, label_counts[g]) for g, c in _ngrams(pred, n).items())
        score *= (matches / (len_pred - n + 1)) ** (0.5**n)
    return score


def _check_corpus(preds: Sequence, labels: Sequence) -> None:
    """Predictions and references of a corpus metric: two lists of sentences, one per pair."""
    if isinstance(preds, str) or isinstance(labels, str):
        raise ValueError("preds and labels must be lists of sentences, got a str")
    if len(preds) != len(labels):
        raise ValueError(f"got {len(preds)} predictions for {len(labels)} labels")


def corpus_bleu(preds: Sequence, labels: Sequence, max_n: int = 4) -> float:
    """Unsmoothed corpus BLEU in [0, 1] with one reference per sentence (sacreBLEU's formula).

    Clipped n-gram matches and totals are summed over the corpus for n = 1..max_n; the score
    is the geometric mean of the pooled precisions times ``exp(min(0, 1 - r / c))`` with r, c
    the total reference and prediction lengths. sacreBLEU with ``tokenize="none"`` and
    ``smooth_method="none"`` gives 100 × this value on space-tokenised text.
    """
    _check_corpus(preds, labels)
    max_n = checks.check_scalar(max_n, "max_n", int, low=1)
    matches, totals = [0] * max_n, [0] * max_n
    c = r = 0
    for p, lab in zip(preds, labels):
        pred, label = _tokens(p), _tokens(lab)
        c, r = c + len(pred), r + len(label)
        for n in range(1, max_n + 1):
            label_counts = _ngrams(label, n)
            pred_counts = _ngrams(pred, n)
            matches[n - 1] += sum(min(cnt, label_counts[g]) for g, cnt in pred_counts.items())
            totals[n - 1] += max(len(pred) - n + 1, 0)
    if c == 0 or min(matches) == 0:
        return 0.0
    log_p = sum(math.log(m / t) for m, t in zip(matches, totals)) / max_n
    return math.exp(min(0.0, 1 - r / c) + log_p)


def _char_ngrams(text: str, n: int) -> collections.Counter:
    chars = "".join(text.split())  # chrF ignores whitespace
    return collections.Counter(chars[i : i + n] for i in range(len(chars) - n + 1))


def chrf(preds: Sequence[str], labels: Sequence[str], char_order: int = 6,
         beta: float = 2.0) -> float:
    """Corpus chrF in [0, 1]: an F-score over character n-grams (Popović, 2015).

    For n = 1..char_order the clipped matches and the n-gram counts of predictions and
    references are summed over the corpus (whitespace removed; a sentence whose reference is
    shorter than n characters does not count at order n); precision and recall are
    averaged over the orders that occur, and combined as ``(1 + b²) P R / (b² P + R)`` with
    b = ``beta`` (2: recall weighs more). Characters, not words, are the unit, so a wrong
    Korean particle costs one or two characters instead of the whole 어절. sacreBLEU's
    ``CHRF()`` (chrF2, no word n-grams) gives 100 × this value.
    """
    _check_corpus(preds, labels)
    if not preds:
        raise ValueError("chrf needs at least one sentence")
    for name, seqs in (("preds", preds), ("labels", labels)):
        if not all(isinstance(x, str) for x in seqs):
            raise ValueError(f"{name} must be strings")
    char_order = checks.check_scalar(char_order, "char_order", int, low=1)
    beta = checks.check_scalar(beta, "beta", float, low=0.0, low_open=True)
    precisions, recalls = [], []
    for n in range(1, char_order + 1):
        matched = in_pred = in_label = 0
        for pred, label in zip(preds, labels):
            p, lab = _char_ngrams(pred, n), _char_ngrams(label, n)
            if lab:  # a reference shorter than n characters leaves this order out
                matched += sum(min(c, lab[g]) for g, c in p.items())
                in_pred, in_label = in_pred + sum(p.values()), in_label + sum(lab.values())
        if in_pred and in_label:
            precisions.append(matched / in_pred)
            recalls.append(matched / in_label)
    if not precisions:
        return 0.0
    prec, rec = sum(precisions) / len(precisions), sum(recalls) / len(recalls)
    if prec + rec == 0:
        return 0.0
    b2 = beta * beta
    return (1 + b2) * prec * rec / (b2 * prec + rec)


def evaluate_bleu(
    net: EncoderDecoder,
    pairs: Sequence[tuple[str, str]],
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    num_steps: int,
    device: torch.device | None = None,
    k: int = 2,
) -> float:
    """Mean sentence :func:`bleu` of greedy translations of (source, reference) pairs."""
    if not pairs:
        raise ValueError("no pairs to evaluate")
    preds = translate(net, [s for s, _ in pairs], src_vocab, tgt_vocab, num_steps, device)
    return sum(bleu(p, ref, k) for p, (_, ref) in zip(preds, pairs)) / len(pairs)
