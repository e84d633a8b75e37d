"""Korean morphology that the corpus generator needs: 받침, particles and verb endings.

A precomposed Hangul syllable is the code point ``0xAC00 + (initial * 21 + medial) * 28 +
final``, so whether a syllable ends in a consonant (받침) is ``(code - 0xAC00) % 28 != 0``.
Particles (조사) choose their form by that test, and verb endings need the medial vowel too.
All endings are the plain written style (해라체): 간다, 갔다, 가지 않는다, 가니.
"""

from __future__ import annotations

from . import checks

__all__ = [
    "compose_syllable",
    "conjugate",
    "decompose_syllable",
    "final_consonant",
    "has_batchim",
    "particle",
    "verb_stem",
]

_BASE, _LAST = 0xAC00, 0xD7A3
_N_MEDIAL, _N_FINAL = 21, 28

# Indices of the jamo used below (initial, medial and final tables of Unicode).
_INIT_IEUNG = 11  # ㅇ as an initial
_A, _AE, _YA, _EO, _E, _YEO, _O, _WA, _WAE, _OE, _YO = 0, 1, 2, 4, 5, 6, 8, 9, 10, 11, 12
_U, _WEO, _EU, _I = 13, 14, 18, 20
_F_NONE, _F_NIEUN, _F_DIGEUT, _F_RIEUL, _F_BIEUP, _F_SSANGSIOT = 0, 4, 7, 8, 17, 20

_FINAL_NAMES = (
    "",
    "ㄱ",
    "ㄲ",
    "ㄳ",
    "ㄴ",
    "ㄵ",
    "ㄶ",
    "ㄷ",
    "ㄹ",
    "ㄺ",
    "ㄻ",
    "ㄼ",
    "ㄽ",
    "ㄾ",
    "ㄿ",
    "ㅀ",
    "ㅁ",
    "ㅂ",
    "ㅄ",
    "ㅅ",
    "ㅆ",
    "ㅇ",
    "ㅈ",
    "ㅊ",
    "ㅋ",
    "ㅌ",
    "ㅍ",
    "ㅎ",
)

# Verbs whose stem changes before a vowel ending; every other verb follows the regular rules
# (ㄹ-dropping, ㅡ-dropping, 하다 and vowel contraction are regular and computed).
IRREGULAR_VERBS = {
    "듣다": "ㄷ",
    "걷다": "ㄷ",
    "묻다": "ㄷ",
    "싣다": "ㄷ",
    "깨닫다": "ㄷ",
    "돕다": "ㅂ",
    "곱다": "ㅂ",
    "눕다": "ㅂ",
    "줍다": "ㅂ",
    "굽다": "ㅂ",
    "춥다": "ㅂ",
    "덥다": "ㅂ",
    "부르다": "르",
    "모르다": "르",
    "고르다": "르",
    "자르다": "르",
    "흐르다": "르",
    "오르다": "르",
    "빠르다": "르",
}


def _check_syllable(ch: str) -> int:
    if not isinstance(ch, str) or len(ch) != 1 or not _BASE <= ord(ch) <= _LAST:
        raise ValueError(f"expected one precomposed Hangul syllable, got {ch!r}")
    return ord(ch) - _BASE


def decompose_syllable(ch: str) -> tuple[int, int, int]:
    """Indices ``(initial, medial, final)`` of a Hangul syllable; final 0 means no 받침."""
    code = _check_syllable(ch)
    return code // (_N_MEDIAL * _N_FINAL), (code // _N_FINAL) % _N_MEDIAL, code % _N_FINAL


def compose_syllable(initial: int, medial: int, final: int = 0) -> str:
    """The Hangul syllable with the given jamo indices (inverse of ``decompose_syllable``)."""
    for name, value in (("initial", initial), ("medial", medial), ("final", final)):
        checks.check_scalar(value, name, int, low=0)
    if not (0 <= initial < 19 and 0 <= medial < _N_MEDIAL and 0 <= final < _N_FINAL):
        raise ValueError(
            f"jamo indices must lie in [0, 19) x [0, 21) x [0, 28), got {(initial, medial, final)}"
        )
    return chr(_BASE + (initial * _N_MEDIAL + medial) * _N_FINAL + final)


def _last_syllable(word: str) -> str:
    if not isinstance(word, str) or not word:
        raise ValueError(f"expected a non-empty Korean word, got {word!r}")
    _check_syllable(word[-1])
    return word[-1]


def final_consonant(word: str) -> str:
    """The 받침 of the word's last syllable as a jamo (``"ㄹ"`` for 지하철), ``""`` if none."""
    return _FINAL_NAMES[decompose_syllable(_last_syllable(word))[2]]


def has_batchim(word: str) -> bool:
    """Whether the word's last syllable ends in a consonant (받침)."""
    return final_consonant(word) != ""


_PARTICLE_FORMS = {
    # kind: (after a consonant, after a vowel)
    "은/는": ("은", "는"),
    "이/가": ("이", "가"),
    "을/를": ("을", "를"),
    "와/과": ("과", "와"),
    "(으)로": ("으로", "로"),
}


def particle(word: str, kind: str) -> str:
    """The form of particle ``kind`` ("은/는", "이/가", "을/를", "와/과", "(으)로") after ``word``.

    The consonant form follows a 받침 (집 → 을), the vowel form follows a vowel (나 → 는);
    (으)로 treats a ㄹ 받침 like a vowel (지하철 → 로, 펜 → 으로).
    """
    if kind not in _PARTICLE_FORMS:
        raise ValueError(f"kind must be one of {sorted(_PARTICLE_FORMS)}, got {kind!r}")
    after_consonant, after_vowel = _PARTICLE_FORMS[kind]
    final = final_consonant(word)
    if kind == "(으)로" and final == "ㄹ":
        return after_vowel
    return after_consonant if final else after_vowel


def verb_stem(verb: str) -> str:
    """The stem of a dictionary-form verb: 먹다 → 먹."""
    if not isinstance(verb, str) or len(verb) < 2 or not verb.endswith("다"):
        raise ValueError(f"expected a dictionary-form verb ending in 다, got {verb!r}")
    _last_syllable(verb[:-1])
    return verb[:-1]


def _with_final(ch: str, final: int) -> str:
    i, m, _ = decompose_syllable(ch)
    return compose_syllable(i, m, final)


def _bright(medial: int) -> bool:
    """ㅏ, ㅑ, ㅗ, ㅛ take the 아 ending (가 → 갔), every other vowel takes 어 (먹 → 먹었)."""
    return medial in (_A, _YA, _O, _YO)


def _present(stem: str) -> str:
    head, last = stem[:-1], stem[-1]
    _, _, final = decompose_syllable(last)
    if final == _F_NONE or final == _F_RIEUL:  # 가 → 간다, 살 → 산다 (ㄹ drops before ㄴ)
        return head + _with_final(last, _F_NIEUN) + "다"
    return stem + "는다"


def _past_stem(stem: str, irregular: str | None) -> str:
    """The stem with the past marker 았/었 attached: 가 → 갔, 먹 → 먹었, 듣 → 들었."""
    head, last = stem[:-1], stem[-1]
    initial, medial, final = decompose_syllable(last)
    if last == "하":
        return head + "했"
    if irregular == "ㄷ":  # 듣 → 들었
        return head + _with_final(last, _F_RIEUL) + ("았" if _bright(medial) else "었")
    if irregular == "ㅂ":  # 돕 → 도왔, 눕 → 누웠 (only 돕다 and 곱다 keep 와)
        vowel = _WA if stem in ("돕", "곱") else _WEO
        return (
            head + _with_final(last, _F_NONE) + compose_syllable(_INIT_IEUNG, vowel, _F_SSANGSIOT)
        )
    if irregular == "르":  # 부르 → 불렀, 모르 → 몰랐
        if not head:
            raise ValueError(f"a 르-irregular stem needs two syllables, got {stem!r}")
        prev = head[-1]
        bright = _bright(decompose_syllable(prev)[1])
        return (
            head[:-1]
            + _with_final(prev, _F_RIEUL)
            + compose_syllable(5, _A if bright else _EO, _F_SSANGSIOT)  # 5 = ㄹ initial
        )
    if final != _F_NONE:  # a consonant-final stem keeps its syllable: 먹었, 찾았, 살았
        return stem + ("았" if _bright(medial) else "었")
    # A vowel-final stem contracts with 아/어.
    if medial == _EU:  # 쓰 → 썼, 바쁘 → 바빴: ㅡ drops
        bright = bool(head) and _bright(decompose_syllable(head[-1])[1])
        return head + compose_syllable(initial, _A if bright else _EO, _F_SSANGSIOT)
    contracted = {_A: _A, _EO: _EO, _AE: _AE, _E: _E, _YEO: _YEO, _O: _WA, _U: _WEO,
                  _I: _YEO, _OE: _WAE}  # fmt: skip
    if medial in contracted:
        return head + compose_syllable(initial, contracted[medial], _F_SSANGSIOT)
    return stem + "었"  # ㅟ, ㅢ and the rest do not contract: 쉬었다


def conjugate(
    verb: str,
    tense: str = "present",
    negative: bool = False,
    question: bool = False,
    irregular: str | None = None,
) -> str:
    """Plain-style ending of a dictionary-form verb: 가다 → 간다 / 갔다 / 가지 않는다 / 가니.

    ``tense`` is "present" or "past"; ``irregular`` is "ㄷ", "ㅂ" or "르" for verbs whose
    stem changes (looked up in ``IRREGULAR_VERBS`` when not given). 있다 is negated as 없다.
    A negative form has two words (가지 않는다).
    """
    if tense not in ("present", "past"):
        raise ValueError(f"tense must be 'present' or 'past', got {tense!r}")
    if irregular not in (None, "ㄷ", "ㅂ", "르"):
        raise ValueError(f"irregular must be None, 'ㄷ', 'ㅂ' or '르', got {irregular!r}")
    stem = verb_stem(verb)
    if irregular is None:
        irregular = IRREGULAR_VERBS.get(verb)
    if verb == "있다" and negative:
        return conjugate("없다", tense, False, question)
    if negative:
        return stem + "지 " + conjugate("않다", tense, False, question)
    if tense == "past":
        past = _past_stem(stem, irregular)
        return past + ("니" if question else "다")
    if question:  # 가니, 먹니; ㄹ drops before ㄴ: 살 → 사니
        last = stem[-1]
        if decompose_syllable(last)[2] == _F_RIEUL:
            stem = stem[:-1] + _with_final(last, _F_NONE)
        return stem + "니"
    if verb in ("있다", "없다"):
        return verb  # the verbs of existence take no 는/ㄴ in the plain present
    return _present(stem)
