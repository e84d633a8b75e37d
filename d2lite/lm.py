"""Byte-pair encoding over bytes, syllables or jamo, sampling rules and a small GPT (chapter 10).

Generated from book/10_language_models.md
by `python -m tools.export`; edit the chapter, not this file.
"""

# ruff: noqa: I001  (imports stay in the order the chapter introduces them)

import heapq
import math
import re
from collections import Counter

import torch
from torch import Tensor, nn

import d2lite as d2l
from d2lite import checks


# The syllable arithmetic is chapter 5's (d2l.decompose_syllable,
# d2l.compose_syllable); here the indices become Unicode's conjoining jamo, the
# letters NFD writes.
# the first conjoining initial, medial and (final - 1)
_L, _V, _T = 0x1100, 0x1161, 0x11A7


def split_jamo(ch: str) -> str:
    """A precomposed syllable -> its 2 or 3 conjoining jamo (as NFD gives them);
    else ch.
    """
    if not "가" <= ch <= "힣":
        return ch
    initial, medial, final = d2l.decompose_syllable(ch)
    return chr(_L + initial) + chr(_V + medial) + (chr(_T + final) if final else "")


def join_jamo(text: str) -> str:
    """Undo split_jamo: initial + medial (+ final) -> one syllable; other text
    unchanged.
    """
    out, i = [], 0
    while i < len(text):
        a = ord(text[i]) - _L
        b = ord(text[i + 1]) - _V if i + 1 < len(text) else -1
        if 0 <= a < 19 and 0 <= b < 21:
            c = ord(text[i + 2]) - _T if i + 2 < len(text) else 0
            final = c if 0 < c < 28 else 0
            out.append(d2l.compose_syllable(a, b, final))
            i += 3 if final else 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


# Pre-tokenization: an optional space and a run of non-spaces, or a run of
# spaces. Merges never cross a chunk, so a token never spans two eojeol; the
# chunks concatenate back to the text.
_CHUNK = re.compile(r"\s?\S+|\s+")


def _merge(seq: list[int], pair: tuple[int, int], new: int) -> list[int]:
    """Replace every non-overlapping occurrence of pair in seq, left to right, by
    new.
    """
    out, i = [], 0
    while i < len(seq):
        if i + 1 < len(seq) and seq[i] == pair[0] and seq[i + 1] == pair[1]:
            out.append(new)
            i += 2
        else:
            out.append(seq[i])
            i += 1
    return out


def learn_merges(seqs: list[list[int]], counts: list[int], first_id: int,
                 num_merges: int) -> list[tuple[int, int]]:  # fmt: skip
    """BPE training: the chunks seqs (token ids) seen counts times each -> up to
    num_merges merge rules; rule k makes token first_id + k. The most frequent
    pair wins, the smaller ids on a tie; training stops early when no pair occurs
    twice."""
    pair_count: Counter = Counter()
    where: dict[tuple[int, int], set[int]] = {}  # pair -> the chunks that contain it
    for w, seq in enumerate(seqs):
        for pair in zip(seq, seq[1:]):
            pair_count[pair] += counts[w]
            where.setdefault(pair, set()).add(w)
    heap = [(-c, pair) for pair, c in pair_count.items()]
    heapq.heapify(heap)
    merges, seqs = [], list(seqs)
    while len(merges) < num_merges and heap:
        c, pair = heapq.heappop(heap)
        if -c != pair_count.get(pair):
            continue  # a stale entry: this pair's count has changed since
        if -c < 2:
            break  # no pair occurs twice: nothing left worth a token
        new, delta = first_id + len(merges), Counter()
        for w in where.pop(pair):  # only the chunks holding the pair are recounted
            merged = _merge(seqs[w], pair, new)
            for p in zip(seqs[w], seqs[w][1:]):
                delta[p] -= counts[w]
            for p in zip(merged, merged[1:]):
                delta[p] += counts[w]
                if new in p:  # the other pairs of this chunk were there before
                    where.setdefault(p, set()).add(w)
            seqs[w] = merged
        for p, d in delta.items():
            if d:
                pair_count[p] += d
                if pair_count[p] > 0:
                    heapq.heappush(heap, (-pair_count[p], p))
                else:
                    del pair_count[p]
        merges.append(pair)
    return merges


def _to_bytes(text: str) -> bytes:
    # surrogatepass: even a lone surrogate (a str Python allows) has bytes to
    # fall back on
    return text.encode("utf-8", "surrogatepass")


def _from_bytes(data: bytes) -> str:
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:  # ids that no encode() gives: show what cannot be read
        return data.decode("utf-8", "replace")


def _symbols(ch: str, unit: str) -> str | None:
    """The alphabet symbols of one character; None: it always falls back to bytes
    (in jamo mode a character typed as a conjoining jamo, so that decode never
    joins it to its neighbors)."""
    if unit == "jamo":
        return None if 0x1100 <= ord(ch) <= 0x11FF else split_jamo(ch)
    return ch


class BPETokenizer:
    """Byte-pair encoding over one base unit: 'byte' (UTF-8), 'syllable' (characters) or
    'jamo' (Hangul syllables split into initial, medial and final).

    Ids 0..255 are the bytes, so a character outside the alphabet falls back to
    its UTF-8 bytes and decode(encode(s)) == s for every string s. Then come the
    alphabet's symbols and the merged tokens in the order they were learned.
    len() is the vocabulary size.
    """

    UNITS = ("byte", "syllable", "jamo")

    def __init__(
        self, unit: str, alphabet: list[str], merges: list[tuple[int, int]]
    ) -> None:
        if unit not in self.UNITS:
            raise ValueError(f"unit must be one of {self.UNITS}, got {unit!r}")
        self.unit, self.alphabet, self.merges = unit, list(alphabet), list(merges)
        self.symbol_id = {s: 256 + i for i, s in enumerate(self.alphabet)}
        # Each token as the base ids it stands for (a byte id or an alphabet id each).
        self.parts: list[tuple[int, ...]] = [
            (i,) for i in range(256 + len(self.alphabet))
        ]
        for a, b in self.merges:
            if not (0 <= a < len(self.parts) and 0 <= b < len(self.parts)):
                raise ValueError(f"merge ({a}, {b}) names a token not yet made")
            self.parts.append(self.parts[a] + self.parts[b])
        self.rank = {pair: k for k, pair in enumerate(self.merges)}
        self._cache: dict[str, list[int]] = {}

    def __len__(self) -> int:
        return len(self.parts)

    @classmethod
    def train(cls, texts: str | list[str], vocab_size: int,
              unit: str = "byte") -> "BPETokenizer":  # fmt: skip
        """Learn at most vocab_size tokens (>= 256, the bytes) from texts (a str
        or a list of str): the most frequent symbols of unit first, then merges
        (see learn_merges)."""
        if isinstance(texts, str):
            texts = [texts]
        if (not isinstance(texts, (list, tuple))
                or not all(isinstance(t, str) for t in texts)):
            raise ValueError(f"texts must be a str or a list of str, got "
                             f"{type(texts).__name__}")
        vocab_size = checks.check_scalar(vocab_size, "vocab_size", int, low=256)
        if unit not in cls.UNITS:
            raise ValueError(f"unit must be one of {cls.UNITS}, got {unit!r}")
        chunks = Counter(chunk for text in texts for chunk in _CHUNK.findall(text))
        alphabet = []
        if unit != "byte":
            freq = Counter()
            for chunk, n in chunks.items():
                for ch in chunk:
                    for symbol in _symbols(ch, unit) or ():
                        freq[symbol] += n
            alphabet = sorted(freq, key=lambda s: (-freq[s], s))[: vocab_size - 256]
        base = cls(unit, alphabet, [])
        seqs = [base._base_ids(chunk) for chunk in chunks]
        merges = learn_merges(
            seqs, list(chunks.values()), len(base), vocab_size - len(base)
        )
        return cls(unit, alphabet, merges)

    def _base_ids(self, chunk: str) -> list[int]:
        """A chunk as base ids: alphabet symbols where known, UTF-8 bytes otherwise."""
        if self.unit == "byte":
            return list(_to_bytes(chunk))
        ids = []
        for ch in chunk:
            symbols = _symbols(ch, self.unit)
            if symbols is not None and all(s in self.symbol_id for s in symbols):
                ids += [self.symbol_id[s] for s in symbols]
            else:  # never seen: the character's bytes
                ids += list(_to_bytes(ch))
        return ids

    def _encode_chunk(self, chunk: str) -> list[int]:
        if chunk not in self._cache:
            ids = self._base_ids(chunk)
            # apply the earliest-learned rule present, as training did
            while len(ids) > 1:
                rank, pair = min(
                    (self.rank.get(p, math.inf), p) for p in zip(ids, ids[1:])
                )
                if rank == math.inf:
                    break
                ids = _merge(ids, pair, 256 + len(self.alphabet) + rank)
            if len(self._cache) > 100_000:
                self._cache.clear()
            self._cache[chunk] = ids
        return self._cache[chunk]

    def encode(self, text: str) -> list[int]:
        """A string -> token ids."""
        if not isinstance(text, str):
            raise ValueError(f"encode expects a str, got {type(text).__name__}")
        return [i for chunk in _CHUNK.findall(text) for i in self._encode_chunk(chunk)]

    def decode(self, ids: list[int] | Tensor) -> str:
        """Token ids (a list of ints, or a 1-D integer tensor) -> the string they
        stand for.
        """
        if isinstance(ids, Tensor):
            if ids.dim() != 1 or ids.is_floating_point() or ids.is_complex():
                raise ValueError(f"decode expects 1-D integer ids, got shape "
                                 f"{tuple(ids.shape)}, dtype {ids.dtype}")
            ids = ids.tolist()
        # alternating runs of bytes and of symbols
        runs: list[tuple[bool, list[int]]] = []
        for i in ids:
            if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(self):
                raise ValueError(
                    f"token ids must be ints in [0, {len(self)}), got {i!r}"
                )
            for base in self.parts[i]:
                if not runs or runs[-1][0] != (base < 256):
                    runs.append((base < 256, []))
                runs[-1][1].append(base)
        out = []
        for is_bytes, bases in runs:
            if is_bytes:
                out.append(_from_bytes(bytes(bases)))
            else:
                # with jamo as the unit, only jamo that came out of syllables are
                # joined
                text = "".join(self.alphabet[b - 256] for b in bases)
                out.append(join_jamo(text) if self.unit == "jamo" else text)
        return "".join(out)

    def pieces(self, text: str) -> list[str]:
        """How text is cut: each token as the text it stands for; a token holding
        only part of a character's bytes shows them as <0xNN>."""
        out = []
        for i in self.encode(text):
            piece = self.decode([i])
            if "\ufffd" in piece:
                piece = "".join(f"<0x{b:02X}>" if b < 256 else self.alphabet[b - 256]
                                for b in self.parts[i])
            out.append(piece)
        return out


class KVCache:
    """Keys and values of the tokens decoded so far, along the sequence axis.

    The buffers are allocated ahead and doubled when full, so appending T tokens
    one at a time copies O(T) values in all, not O(T^2) as concatenating every
    step would. The cache keeps the dtype and device of its first keys; later
    keys must match them.
    """

    def __init__(self) -> None:
        # (..., capacity, d_k) buffers; the first len(self) rows hold the cached
        # tokens
        self._k: Tensor | None = None
        self._v: Tensor | None = None
        self._len = 0

    def __len__(self) -> int:
        return self._len

    @property
    def k(self) -> Tensor | None:
        return None if self._k is None else self._k[..., : self._len, :]

    @property
    def v(self) -> Tensor | None:
        return None if self._v is None else self._v[..., : self._len, :]

    def append(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Add k, v (..., t, d) for t new tokens; return all cached keys and values."""
        if k.dim() < 2 or k.shape[:-1] != v.shape[:-1]:
            raise ValueError(f"k and v disagree: {tuple(k.shape)} vs {tuple(v.shape)}")
        if self._k is None:
            self._k = k.new_empty(*k.shape[:-2], max(16, k.shape[-2]), k.shape[-1])
            self._v = v.new_empty(*v.shape[:-2], self._k.shape[-2], v.shape[-1])
        for name, new, old in (("keys", k, self._k), ("values", v, self._v)):
            if (new.shape[:-2] != old.shape[:-2] or new.shape[-1] != old.shape[-1]
                    or new.dtype != old.dtype or new.device != old.device):
                raise ValueError(
                    f"new {name} {tuple(new.shape)}, {new.dtype} on {new.device} "
                    f"do not fit the cache {tuple(old.shape[:-2])} (..., "
                    f"{old.shape[-1]}), {old.dtype} on {old.device}"
                )
        end = self._len + k.shape[-2]
        # full: double the capacity (one copy of what is cached)
        if end > self._k.shape[-2]:
            capacity = max(end, 2 * self._k.shape[-2])
            for name in ("_k", "_v"):
                old = getattr(self, name)
                grown = old.new_empty(*old.shape[:-2], capacity, old.shape[-1])
                grown[..., : self._len, :] = old[..., : self._len, :]
                setattr(self, name, grown)
        self._k[..., self._len : end, :] = k
        self._v[..., self._len : end, :] = v
        self._len = end
        return self.k, self.v

    def num_bytes(self) -> int:
        """Bytes of the cached keys and values (the buffers' spare rows not counted)."""
        if self._k is None:
            return 0
        return (self.k.numel() * self.k.element_size()
                + self.v.numel() * self.v.element_size())


class GPTBlock(nn.Module):
    """Pre-norm decoder block: X + attention(LN(X)) under a causal mask, then
    X + FFN(LN(X)).

    forward(X, cache=None): X (batch, steps, num_hiddens) -> same shape. Only the
    steps new positions are projected; a KVCache holding the keys and values of
    the p earlier positions (per head) receives theirs, and the queries attend
    to all p + steps.
    """

    def __init__(self, num_hiddens: int, num_heads: int, dropout: float) -> None:
        super().__init__()
        checks.check_divisible(num_hiddens, num_heads)
        self.ln1 = nn.LayerNorm(num_hiddens)
        self.attention = d2l.MultiHeadAttention(num_hiddens, num_heads, dropout, True,
                                                num_hiddens, num_hiddens, num_hiddens)
        self.ln2 = nn.LayerNorm(num_hiddens)
        self.ffn = d2l.PositionWiseFFN(
            4 * num_hiddens, num_hiddens, num_inputs=num_hiddens
        )
        self.dropout = nn.Dropout(dropout)

    def forward(self, X: Tensor, cache: KVCache | None = None) -> Tensor:
        # shapes only, no values
        checks.check_features(X, size=self.ln1.normalized_shape[0])
        mha, heads = self.attention, self.attention.num_heads
        H = self.ln1(X)
        # the new positions only, as views (batch, heads, steps, head width)
        q, k, v = (W(H).unflatten(-1, (heads, -1)).transpose(1, 2)
                   for W in (mha.W_q, mha.W_k, mha.W_v))  # fmt: skip
        if cache is not None:
            k, v = cache.append(k, v)  # now the keys and values of all p + steps
        batch, steps = X.shape[:2]
        p = k.shape[2] - steps  # positions before this call
        # The causal mask as valid lengths: the query at p + t sees keys 0 .. p + t.
        valid_lens = (p + torch.arange(1, steps + 1, device=X.device)).expand(batch, -1)
        if mha.attention.need_weights:  # taught path: heads in the batch axis
            out = mha.attention(q.flatten(0, 1), k.flatten(0, 1), v.flatten(0, 1),
                                valid_lens.repeat_interleave(heads, dim=0))
            out = out.unflatten(0, (batch, heads))
        else:  # the fused fast path (sec-fast-path) takes the heads as they are
            drop = mha.attention.dropout.p if self.training else 0.0
            out = d2l.fused_attention(q, k, v, valid_lens, drop)
        X = X + self.dropout(mha.W_o(out.transpose(1, 2).flatten(2)))
        return X + self.dropout(self.ffn(self.ln2(X)))


class GPT(nn.Module):
    """A small decoder-only Transformer language model.

    Token and learned position embeddings, num_blks pre-norm GPTBlocks, a final
    LayerNorm and an output layer that shares its weight with the token embedding
    (weight tying): GPT-2's arrangement, but with a ReLU FFN and every matrix
    drawn from N(0, 0.02^2) (no 1/sqrt(2 num_blks) scaling of the residual
    projections). forward(tokens): ids (batch, steps), steps <= max_len ->
    logits (batch, steps, vocab_size).
    """

    def __init__(self, vocab_size: int, num_hiddens: int, num_heads: int, num_blks: int,
                 max_len: int, dropout: float = 0.0) -> None:  # fmt: skip
        super().__init__()
        self.vocab_size = checks.check_positive(vocab_size, "vocab_size")
        checks.check_divisible(num_hiddens, num_heads)
        num_blks = checks.check_positive(num_blks, "num_blks")
        self.max_len = checks.check_positive(max_len, "max_len")
        dropout = checks.check_scalar(
            dropout, "dropout", float, low=0, high=1, high_open=True
        )
        self.embedding = nn.Embedding(vocab_size, num_hiddens)
        self.pos_embedding = nn.Embedding(max_len, num_hiddens)
        self.dropout = nn.Dropout(dropout)
        self.blks = nn.ModuleList(GPTBlock(num_hiddens, num_heads, dropout)
                                  for _ in range(num_blks))  # fmt: skip
        self.ln = nn.LayerNorm(num_hiddens)
        self.head = nn.Linear(num_hiddens, vocab_size, bias=False)
        self.head.weight = self.embedding.weight  # weight tying: one matrix, two uses
        for param in self.parameters():  # small initial weights, as in GPT-2
            if param.dim() == 2:
                nn.init.normal_(param, std=0.02)

    def forward(self, tokens: Tensor, cache: list[KVCache] | None = None) -> Tensor:
        """tokens (batch, steps) -> logits (batch, steps, vocab_size); a cache
        (init_cache: one KVCache per block) is read and grows by steps positions."""
        checks.check_tokens(tokens, "tokens")
        if cache is not None and len(cache) != len(self.blks):
            raise ValueError(f"cache must hold one entry per block ({len(self.blks)}), "
                             f"got {len(cache)}")
        p = 0 if cache is None else len(cache[0])
        if p + tokens.shape[1] > self.max_len:
            raise ValueError(f"tokens: {p + tokens.shape[1]} positions exceed max_len "
                             f"{self.max_len}")
        # The door: token ids are checked once, here; the blocks trust them.
        with checks.token_door(tokens, self.vocab_size, name="tokens"):
            positions = torch.arange(p, p + tokens.shape[1], device=tokens.device)
            X = self.dropout(self.embedding(tokens) + self.pos_embedding(positions))
            for i, blk in enumerate(self.blks):
                X = blk(X, None if cache is None else cache[i])
            return self.head(self.ln(X))

    def init_cache(self) -> list[KVCache]:
        """An empty cache: one KVCache per block, filled by forward."""
        return [KVCache() for _ in self.blks]

    @torch.no_grad()
    def generate(self, prompt: Tensor, max_new_tokens: int, *, temperature: float = 1.0,
                 top_k: int | None = None, top_p: float | None = None,
                 generator: torch.Generator | None = None,
                 use_cache: bool = True) -> Tensor:  # fmt: skip
        """prompt (batch, p) or (p,) -> the prompt followed by max_new_tokens
        sampled ids, (batch, p + max_new_tokens) or (p + max_new_tokens,)."""
        max_new_tokens = checks.check_scalar(
            max_new_tokens, "max_new_tokens", int, low=0
        )
        one = isinstance(prompt, Tensor) and prompt.dim() == 1
        tokens = prompt[None] if one else prompt
        with checks.token_door(tokens, self.vocab_size, name="prompt"):
            pass  # the prompt is checked even when no token is generated
        if tokens.shape[1] + max_new_tokens > self.max_len:
            raise ValueError(f"a prompt of {tokens.shape[1]} tokens and max_new_tokens="
                             f"{max_new_tokens} exceed max_len {self.max_len}")
        was_training = self.training
        self.eval()  # no dropout while generating
        try:
            with d2l.fast_attention(self):
                cache = self.init_cache() if use_cache else None
                new = tokens
                for _ in range(max_new_tokens):
                    # With a cache only the newest token goes in; without, the
                    # whole prefix.
                    logits = self(new, cache) if use_cache else self(tokens)
                    nxt = sample_next_token(
                        logits[:, -1], temperature=temperature, top_k=top_k,
                        top_p=top_p, generator=generator,
                    )
                    new = nxt[:, None].to(tokens.dtype)
                    tokens = torch.cat([tokens, new], dim=1)
        finally:
            self.train(was_training)
        return tokens[0] if one else tokens


def sample_next_token(logits: Tensor, *, temperature: float = 1.0,
                      top_k: int | None = None, top_p: float | None = None,
                      generator: torch.Generator | None = None) -> Tensor:  # fmt: skip
    """Draw one token id from logits (vocab,) -> () or (batch, vocab) -> (batch,).

    The logits are divided by temperature (> 0); top_k (>= 1) keeps the k
    largest; top_p in (0, 1] keeps the smallest set of most probable tokens whose
    probability reaches p (after top_k). Ties are ordered by id, so top_k=1 or a
    tiny top_p is exactly argmax.
    """
    if (not isinstance(logits, Tensor) or logits.dim() not in (1, 2)
            or logits.shape[-1] == 0):
        got = (tuple(logits.shape) if isinstance(logits, Tensor)
               else type(logits).__name__)
        raise ValueError(
            f"logits must have shape (vocab,) or (batch, vocab), got {got}"
        )
    if not logits.is_floating_point():
        raise ValueError(f"logits must be a float tensor, got dtype {logits.dtype}")
    temperature = checks.check_scalar(
        temperature, "temperature", float, low=0, low_open=True
    )
    if top_k is not None:
        top_k = checks.check_scalar(top_k, "top_k", int, low=1)
    if top_p is not None:
        top_p = checks.check_scalar(top_p, "top_p", float, low=0, high=1, low_open=True)
    scores = logits.reshape(-1, logits.shape[-1]).float() / temperature
    # A stable sort keeps equal scores in id order: position 0 is argmax's choice.
    scores, order = torch.sort(scores, dim=-1, descending=True, stable=True)
    keep = torch.ones_like(scores, dtype=torch.bool)
    if top_k is not None:
        keep[:, top_k:] = False
    probs = torch.softmax(scores.masked_fill(~keep, -math.inf), dim=-1)
    if top_p is not None:  # keep a token while the mass before it is still short of p
        keep &= (probs.cumsum(-1) - probs) < top_p
        probs = torch.softmax(scores.masked_fill(~keep, -math.inf), dim=-1)
    # a position in sorted order
    choice = torch.multinomial(probs, 1, generator=generator)
    return order.gather(-1, choice).reshape(logits.shape[:-1])


__all__ = [
    "BPETokenizer",
    "GPT",
    "GPTBlock",
    "KVCache",
    "join_jamo",
    "learn_merges",
    "sample_next_token",
    "split_jamo",
]
