"""Tokenisers and vocabularies for the English→Korean translation chapters.

English is lower-cased and split into words and punctuation. Korean is split at spaces, and a
particle (조사) at the end of a word becomes a token of its own, so ``나는`` gives ``나 는``:
the model then sees one token ``나`` for "I" whatever particle follows, and the particle
vocabulary stays tiny. :func:`detokenize_ko` glues the particles back on.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Iterable, Sequence

import torch

from . import checks

__all__ = [
    "KO_PARTICLES",
    "RESERVED_TOKENS",
    "Vocab",
    "detokenize_en",
    "detokenize_ko",
    "tokenize_en",
    "tokenize_ko",
    "truncate_pad",
]

RESERVED_TOKENS = ("<pad>", "<bos>", "<eos>", "<unk>")

# Particles that the Korean tokeniser splits off, longest first so that "에서" wins over "에"
# and "으로" over "로". Particles that are also verbs or common words (보다, 하고) are left out.
KO_PARTICLES = (
    "에서",
    "에게",
    "으로",
    "까지",
    "부터",
    "한테",
    "은",
    "는",
    "이",
    "가",
    "을",
    "를",
    "와",
    "과",
    "로",
    "에",
    "의",
    "도",
    "만",
)

_EN_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|[^\sa-z0-9]")
_KO_PUNCT = re.compile(r"([.,!?;:\"()])")
_PUNCT = set('.,!?;:"()')


def tokenize_en(sentence: str) -> list[str]:
    """Lower-case English words and punctuation marks: ``"I go home."`` → ``i go home .``."""
    if not isinstance(sentence, str):
        raise ValueError(f"expected a str sentence, got {type(sentence).__name__}")
    return _EN_TOKEN.findall(sentence.lower().replace("\u202f", " ").replace("\xa0", " "))


def detokenize_en(tokens: Sequence[str]) -> str:
    """Join English tokens with spaces (the corpus keeps a space before punctuation)."""
    return " ".join(tokens)


def _is_hangul_syllable(ch: str) -> bool:
    return "\uac00" <= ch <= "\ud7a3"


def _split_particle(word: str, nouns: frozenset[str] | None) -> list[str]:
    """``[stem, particle]`` when ``word`` ends in a particle after a known stem, else ``[word]``."""
    for p in KO_PARTICLES:
        if len(word) <= len(p) or not word.endswith(p):
            continue
        stem = word[: -len(p)]
        if not _is_hangul_syllable(stem[-1]):
            continue
        if nouns is None or stem in nouns:
            return [stem, p]
    return [word]


def tokenize_ko(sentence: str, nouns: Iterable[str] | None = None) -> list[str]:
    """Korean words with particles split off: ``"나는 집에 간다 ."`` → ``나 는 집 에 간다 .``.

    With ``nouns`` (the corpus lexicon) a particle is split off only after a known noun, which
    is exact; without it every word ending in a particle is split, which can cut a noun such as
    ``사과`` ("apple") into ``사 과`` — harmless for training, and still undone exactly by
    :func:`detokenize_ko`.
    """
    if not isinstance(sentence, str):
        raise ValueError(f"expected a str sentence, got {type(sentence).__name__}")
    lexicon = None if nouns is None else frozenset(nouns)
    tokens: list[str] = []
    for chunk in _KO_PUNCT.sub(r" \1 ", sentence).split():
        tokens += _split_particle(chunk, lexicon)
    return tokens


def detokenize_ko(tokens: Sequence[str]) -> str:
    """Join Korean tokens, re-attaching each particle to the word before it.

    ``detokenize_ko(tokenize_ko(s)) == s`` for every sentence ``s`` written with single spaces,
    punctuation set off by a space, and no free-standing word that is itself a particle.
    """
    words: list[str] = []
    for tok in tokens:
        if not isinstance(tok, str):
            raise ValueError(f"expected str tokens, got {type(tok).__name__}")
        if tok in KO_PARTICLES and words and words[-1] not in _PUNCT:
            words[-1] += tok
        else:
            words.append(tok)
    return " ".join(words)


def _flatten(tokens: Iterable) -> list[str]:
    out: list[str] = []
    for t in tokens:
        if isinstance(t, str):
            out.append(t)
        elif isinstance(t, Iterable):
            out += _flatten(t)
        else:
            raise ValueError(f"tokens must be str or lists of str, got {type(t).__name__}")
    return out


class Vocab:
    """Map tokens to indices and back; ``<pad> <bos> <eos> <unk>`` are indices 0–3.

    Tokens (a list, or a list of token lists) are ordered by frequency, most frequent first,
    ties broken alphabetically so the mapping never depends on input order. Tokens seen fewer
    than ``min_freq`` times map to ``<unk>``. Unlike d2l, the four special tokens always come
    first (so ``<pad>`` is 0) and ``to_tokens`` rejects out-of-range indices.
    """

    def __init__(
        self,
        tokens: Iterable = (),
        min_freq: int = 0,
        reserved_tokens: Sequence[str] = RESERVED_TOKENS,
    ) -> None:
        min_freq = checks.check_scalar(min_freq, "min_freq", int, low=0)
        if isinstance(reserved_tokens, str) or not all(
            isinstance(t, str) for t in reserved_tokens
        ):  # a lone string would be split into its characters
            raise ValueError(
                f"reserved_tokens must be a list of str tokens, got {reserved_tokens!r}"
            )
        reserved = list(RESERVED_TOKENS) + [t for t in reserved_tokens if t not in RESERVED_TOKENS]
        if len(set(reserved)) != len(reserved):
            raise ValueError(f"reserved_tokens has duplicates: {list(reserved_tokens)}")
        if isinstance(tokens, str) or not isinstance(tokens, Iterable):
            raise ValueError(f"tokens must be a list of str tokens (or of lists of them), "
                             f"got {type(tokens).__name__} {tokens!r:.60}")
        counter = collections.Counter(_flatten(tokens))
        self.token_freqs: list[tuple[str, int]] = sorted(
            counter.items(), key=lambda kv: (-kv[1], kv[0])
        )
        self.idx_to_token: list[str] = reserved + [
            tok for tok, freq in self.token_freqs if freq >= min_freq and tok not in reserved
        ]
        self.token_to_idx: dict[str, int] = {t: i for i, t in enumerate(self.idx_to_token)}

    def __len__(self) -> int:
        return len(self.idx_to_token)

    def __contains__(self, token: str) -> bool:
        return token in self.token_to_idx

    def __getitem__(self, tokens: str | Sequence[str]) -> int | list[int]:
        """Index of a token (``<unk>``'s for unknown ones), or a list of indices for a list."""
        if isinstance(tokens, str):
            return self.token_to_idx.get(tokens, self.unk)
        if isinstance(tokens, (list, tuple)):
            return [self.__getitem__(t) for t in tokens]
        raise ValueError(f"expected a token or a list of tokens, got {type(tokens).__name__}")

    def to_tokens(self, indices: int | Sequence[int] | torch.Tensor) -> str | list[str]:
        """Token of an index, or a list of tokens for a list / 1-D tensor of indices."""
        if isinstance(indices, torch.Tensor):
            if indices.dim() > 1:
                raise ValueError(f"expected a 0-D or 1-D tensor, got shape {tuple(indices.shape)}")
            indices = indices.tolist()
        if isinstance(indices, (list, tuple)):
            return [self.to_tokens(i) for i in indices]
        indices = checks.check_scalar(indices, "index", int)
        if not 0 <= indices < len(self):
            raise ValueError(f"index {indices} out of range for a vocabulary of {len(self)}")
        return self.idx_to_token[indices]

    @property
    def pad(self) -> int:
        return self.token_to_idx["<pad>"]

    @property
    def bos(self) -> int:
        return self.token_to_idx["<bos>"]

    @property
    def eos(self) -> int:
        return self.token_to_idx["<eos>"]

    @property
    def unk(self) -> int:
        return self.token_to_idx["<unk>"]

    def __repr__(self) -> str:
        head = ", ".join(self.idx_to_token[:8])
        return f"Vocab(size={len(self)}: {head}{', ...' if len(self) > 8 else ''})"


def truncate_pad(line: Sequence[int], num_steps: int, padding_token: int) -> list[int]:
    """Cut ``line`` to ``num_steps`` indices or pad it with ``padding_token`` up to that.

    Same as d2l, except that a non-positive ``num_steps`` raises ValueError.
    """
    num_steps = checks.check_scalar(num_steps, "num_steps", int, low=1)
    line = list(line)
    if len(line) > num_steps:
        return line[:num_steps]
    return line + [padding_token] * (num_steps - len(line))
