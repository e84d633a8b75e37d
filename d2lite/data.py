"""An English→Korean parallel corpus generated from a small grammar, and its data loaders.

Nothing is downloaded: :func:`generate_pair` builds a sentence pair from a *frame* (subject,
verb, core argument, tense, form and adjuncts), choosing every Korean particle by 받침 and
every verb ending by stem (see :mod:`d2lite.hangul`). English is SVO with place and time at
the end; Korean is SOV with time and place before the verb, so word alignment is far from
diagonal::

    I go home .                                   나는 집에 간다 .
    My friend reads a book at the library today . 내 친구는 오늘 도서관에서 책을 읽는다 .

:func:`make_enko_corpus` samples train / validation / test splits. Some (subject, verb,
argument) *triples* are held out: they never occur in training, in any tense or form, and
the validation and test sentences use only them, so the test measures generalisation to new
combinations of known words.
"""

from __future__ import annotations

import csv
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch.utils import data

from . import checks
from .hangul import conjugate, particle
from .text import Vocab, detokenize_ko, tokenize_en, tokenize_ko, truncate_pad
from .utils import _seed, generator

__all__ = [
    "EnKoCorpus",
    "Frame",
    "KO_NOUNS",
    "build_array",
    "RUNNING_EXAMPLE",
    "enko_triples",
    "generate_pair",
    "load_array",
    "load_data_enko",
    "load_data_tsv",
    "make_enko_corpus",
    "read_parallel_tsv",
]

# ---------------------------------------------------------------------------------------------
# The lexicon. Each entry is written out in both languages; nothing is translated by rule
# except particles and verb endings.


@dataclass(frozen=True)
class _Noun:
    en: str  # as an object or place of "there is": "an apple", "water"
    ko: str
    en_no: str = ""  # after "there is no": "apple", "water" (defaults to en without article)

    @property
    def none(self) -> str:
        if self.en_no:
            return self.en_no
        for article in ("a ", "an ", "the "):
            if self.en.startswith(article):
                return self.en[len(article) :]
        return self.en


@dataclass(frozen=True)
class _Subject:
    en: str
    ko: str
    person: int  # 1, 2 or 3
    plural: bool
    animal: bool = False


@dataclass(frozen=True)
class _Place:
    ko: str
    to: str  # "to school", "home"
    at: str  # "at school", "in the park"


@dataclass(frozen=True)
class _Verb:
    en: tuple[str, str, str]  # base, third person singular, past: ("go", "goes", "went")
    ko: str  # dictionary form: 가다
    prep: str = ""  # "to" in "listen to", "for" in "wait for"
    objects: tuple[str, ...] = ()  # nouns it takes as object ("" = intransitive)
    places: tuple[str, ...] = ()
    motion: bool = False  # "go to P" → P에 (destination) instead of "at P" → P에서
    animals: bool = False  # whether cats and dogs can do it
    instruments: tuple[str, ...] = ()
    company: bool = False  # whether "with my friend" fits
    place_required: bool = False


_SUBJECTS = {
    "i": _Subject("I", "나", 1, False),
    "you": _Subject("you", "너", 2, False),
    "he": _Subject("he", "그", 3, False),
    "she": _Subject("she", "그녀", 3, False),
    "we": _Subject("we", "우리", 1, True),
    "they": _Subject("they", "그들", 3, True),
    "friend": _Subject("my friend", "내 친구", 3, False),
    "teacher": _Subject("the teacher", "선생님", 3, False),
    "student": _Subject("the student", "학생", 3, False),
    "children": _Subject("the children", "아이들", 3, True),
    "cat": _Subject("the cat", "고양이", 3, False, animal=True),
    "dog": _Subject("the dog", "개", 3, False, animal=True),
}

_NOUNS = {
    # food and drink
    "apple": _Noun("an apple", "사과"),
    "bread": _Noun("bread", "빵"),
    "rice": _Noun("rice", "밥"),
    "noodles": _Noun("noodles", "국수"),
    "fish": _Noun("fish", "생선"),
    "kimchi": _Noun("kimchi", "김치"),
    "cake": _Noun("a cake", "케이크"),
    "water": _Noun("water", "물"),
    "milk": _Noun("milk", "우유"),
    "coffee": _Noun("coffee", "커피"),
    "tea": _Noun("tea", "차"),
    "juice": _Noun("juice", "주스"),
    # things to read, write, watch and hear
    "book": _Noun("a book", "책"),
    "newspaper": _Noun("a newspaper", "신문"),
    "letter": _Noun("a letter", "편지"),
    "novel": _Noun("a novel", "소설"),
    "poem": _Noun("a poem", "시"),
    "movie": _Noun("a movie", "영화"),
    "news": _Noun("the news", "뉴스", "news"),
    "television": _Noun("television", "텔레비전"),
    "music": _Noun("music", "음악"),
    "radio": _Noun("the radio", "라디오", "radio"),
    "song": _Noun("a song", "노래"),
    # languages and subjects
    "korean": _Noun("Korean", "한국어"),
    "english": _Noun("English", "영어"),
    "math": _Noun("math", "수학"),
    "history": _Noun("history", "역사"),
    # things and vehicles
    "door": _Noun("the door", "문"),
    "window": _Noun("the window", "창문"),
    "key": _Noun("the key", "열쇠"),
    "bicycle": _Noun("a bicycle", "자전거"),
    "bus": _Noun("the bus", "버스"),
    "subway": _Noun("the subway", "지하철"),
    "train": _Noun("the train", "기차"),
    "pen": _Noun("a pen", "펜"),
    "pencil": _Noun("a pencil", "연필"),
    # people and animals as objects
    "friend": _Noun("my friend", "내 친구"),
    "teacher": _Noun("the teacher", "선생님"),
    "student": _Noun("the student", "학생"),
    "children": _Noun("the children", "아이들"),
    "cat": _Noun("the cat", "고양이", "cat"),
    "dog": _Noun("the dog", "개", "dog"),
}

# "there is a cat in the park" uses the indefinite article.
_THERE_IS = {
    "cat": "a cat",
    "dog": "a dog",
    "student": "a student",
    "teacher": "a teacher",
    "book": "a book",
    "apple": "an apple",
    "bread": "bread",
    "water": "water",
    "milk": "milk",
    "key": "a key",
    "bicycle": "a bicycle",
    "newspaper": "a newspaper",
}

_PLACES = {
    "home": _Place("집", "home", "at home"),
    "school": _Place("학교", "to school", "at school"),
    "park": _Place("공원", "to the park", "in the park"),
    "library": _Place("도서관", "to the library", "at the library"),
    "market": _Place("시장", "to the market", "at the market"),
    "restaurant": _Place("식당", "to the restaurant", "at the restaurant"),
    "office": _Place("사무실", "to the office", "at the office"),
    "kitchen": _Place("부엌", "to the kitchen", "in the kitchen"),
    "classroom": _Place("교실", "to the classroom", "in the classroom"),
    "cafe": _Place("카페", "to the cafe", "at the cafe"),
    "hospital": _Place("병원", "to the hospital", "at the hospital"),
    "garden": _Place("정원", "to the garden", "in the garden"),
    "seoul": _Place("서울", "to Seoul", "in Seoul"),
    "busan": _Place("부산", "to Busan", "in Busan"),
}

# (English phrase, Korean noun) for "with a pen" → 펜으로, "by bus" → 버스로.
_INSTRUMENTS = {
    "chopsticks": ("with chopsticks", "젓가락"),
    "spoon": ("with a spoon", "숟가락"),
    "fork": ("with a fork", "포크"),
    "pen": ("with a pen", "펜"),
    "pencil": ("with a pencil", "연필"),
    "bus": ("by bus", "버스"),
    "subway": ("by subway", "지하철"),
    "train": ("by train", "기차"),
    "taxi": ("by taxi", "택시"),
    "bicycle": ("by bicycle", "자전거"),
}

_COMPANIONS = ("friend", "teacher", "student", "children", "dog")

# (English, Korean tokens, tenses it allows)
_TIMES = {
    "today": ("today", ("오늘",), ("present", "past")),
    "yesterday": ("yesterday", ("어제",), ("past",)),
    "every_day": ("every day", ("매일",), ("present",)),
    "now": ("now", ("지금",), ("present",)),
    "morning": ("in the morning", ("아침", "에"), ("present", "past")),
    "evening": ("in the evening", ("저녁", "에"), ("present", "past")),
    "last_night": ("last night", ("어젯밤", "에"), ("past",)),
}

_FOOD = ("apple", "bread", "rice", "noodles", "fish", "kimchi", "cake")
_DRINK = ("water", "milk", "coffee", "tea", "juice")
_PEOPLE = ("friend", "teacher", "student", "children")
_LANGUAGES = ("korean", "english", "math", "history")
_EAT_PLACES = ("home", "school", "restaurant", "kitchen", "cafe", "park")
_INSIDE = ("home", "school", "library", "office", "classroom", "cafe")
_GO_PLACES = ("home", "school", "park", "library", "market", "restaurant", "office",
              "hospital", "seoul", "busan", "cafe")  # fmt: skip
_TRANSPORT = ("bus", "subway", "train", "taxi", "bicycle")

_VERBS = {
    # intransitive, with a destination: P에
    "go": _Verb(("go", "goes", "went"), "가다", places=_GO_PLACES, motion=True, animals=True,
                instruments=_TRANSPORT, company=True, place_required=True),
    "come": _Verb(("come", "comes", "came"), "오다", places=("home", "school", "library",
                  "office", "park", "seoul"), motion=True, animals=True,
                  instruments=_TRANSPORT, company=True, place_required=True),
    # intransitive, with a location: P에서
    "walk": _Verb(("walk", "walks", "walked"), "걷다", places=("park", "garden", "school"),
                  animals=True, company=True),
    "run": _Verb(("run", "runs", "ran"), "달리다", places=("park", "garden", "school"),
                 animals=True, company=True),
    "sleep": _Verb(("sleep", "sleeps", "slept"), "자다", places=("home", "garden", "kitchen"),
                   animals=True),
    "play": _Verb(("play", "plays", "played"), "놀다", places=("park", "garden", "home",
                  "school"), animals=True, company=True),
    "work": _Verb(("work", "works", "worked"), "일하다", places=("office", "hospital",
                  "restaurant", "school", "market")),
    "exercise": _Verb(("exercise", "exercises", "exercised"), "운동하다",
                      places=("park", "school", "garden"), company=True),
    "live": _Verb(("live", "lives", "lived"), "살다", places=("seoul", "busan"),
                  animals=True, place_required=True),
    # transitive: O을/를
    "eat": _Verb(("eat", "eats", "ate"), "먹다", objects=_FOOD, places=_EAT_PLACES,
                 animals=True, instruments=("chopsticks", "spoon", "fork"), company=True),
    "drink": _Verb(("drink", "drinks", "drank"), "마시다", objects=_DRINK,
                   places=_EAT_PLACES, company=True),
    "read": _Verb(("read", "reads", "read"), "읽다",
                  objects=("book", "newspaper", "letter", "novel", "poem"), places=_INSIDE),
    "write": _Verb(("write", "writes", "wrote"), "쓰다", objects=("letter", "novel", "poem"),
                   places=_INSIDE, instruments=("pen", "pencil")),
    "watch": _Verb(("watch", "watches", "watched"), "보다",
                   objects=("movie", "news", "television"), places=("home", "cafe", "school"),
                   company=True),
    "listen": _Verb(("listen", "listens", "listened"), "듣다", prep="to",
                    objects=("music", "radio", "song", "news"), places=_INSIDE, company=True),
    "buy": _Verb(("buy", "buys", "bought"), "사다",
                 objects=("apple", "bread", "book", "milk", "coffee", "bicycle", "pen",
                          "newspaper"), places=("market", "cafe", "school")),
    "like": _Verb(("like", "likes", "liked"), "좋아하다",
                  objects=("apple", "bread", "fish", "milk", "coffee", "music", "cat", "dog",
                           "korean", "math")),
    "meet": _Verb(("meet", "meets", "met"), "만나다", objects=_PEOPLE,
                  places=("park", "school", "cafe", "library", "restaurant")),
    "help": _Verb(("help", "helps", "helped"), "돕다", objects=_PEOPLE,
                  places=("school", "home", "office", "hospital")),
    "wait": _Verb(("wait", "waits", "waited"), "기다리다", prep="for",
                  objects=_PEOPLE + ("bus", "train"), places=("school", "park", "cafe")),
    "make": _Verb(("make", "makes", "made"), "만들다",
                  objects=("bread", "cake", "kimchi", "noodles"),
                  places=("home", "kitchen", "restaurant"), company=True),
    "sing": _Verb(("sing", "sings", "sang"), "부르다", objects=("song",),
                  places=("school", "home", "park", "classroom"), company=True),
    "study": _Verb(("study", "studies", "studied"), "공부하다", objects=_LANGUAGES,
                   places=("library", "school", "home", "classroom"), company=True),
    "learn": _Verb(("learn", "learns", "learned"), "배우다", objects=_LANGUAGES,
                   places=("school", "classroom")),
    "teach": _Verb(("teach", "teaches", "taught"), "가르치다", objects=_LANGUAGES,
                   places=("school", "classroom")),
    "open": _Verb(("open", "opens", "opened"), "열다", objects=("door", "window")),
    "close": _Verb(("close", "closes", "closed"), "닫다", objects=("door", "window")),
    "find": _Verb(("look", "looks", "looked"), "찾다", prep="for",
                  objects=("cat", "dog", "book", "key", "friend"), places=("home", "park",
                  "school", "library"), animals=True),
    "ride": _Verb(("ride", "rides", "rode"), "타다",
                  objects=("bicycle", "bus", "subway", "train")),
}  # fmt: skip

#: Every Korean noun of the corpus: the tokeniser splits particles off after these.
KO_NOUNS: frozenset[str] = frozenset(
    w
    for words in (
        [s.ko for s in _SUBJECTS.values()],
        [n.ko for n in _NOUNS.values()],
        [p.ko for p in _PLACES.values()],
        [ko for _, ko in _INSTRUMENTS.values()],
        [ko[0] for _, ko, _ in _TIMES.values()],
        ["어디", "무엇"],
    )
    for phrase in words
    for w in phrase.split()
)

FORMS = ("statement", "negative", "question", "wh_question")


@dataclass(frozen=True)
class Frame:
    """What a sentence says: ``subject``, ``verb``, ``obj``, ``place``… by lexicon key.

    ``form`` is "statement", "negative", "question" (yes/no) or "wh_question" (the object
    becomes "what", or the place "where"); ``verb == "there_is"`` makes an existential
    sentence whose ``obj`` is in ``place``.
    """

    subject: str | None
    verb: str
    obj: str | None = None
    place: str | None = None
    tense: str = "present"
    form: str = "statement"
    time: str | None = None
    instrument: str | None = None
    companion: str | None = None

    @property
    def triple(self) -> tuple[str, str, str]:
        """The (subject, verb, argument) combination that the held-out split is made of.

        The argument is the object, the place of an intransitive verb (``"-"`` when there is
        none), ``"what"`` or ``"where"`` for a wh-question; "there is" sentences give
        ``("there", "there_is", obj)``.
        """
        if self.verb == "there_is":
            return ("there", "there_is", str(self.obj))
        if self.form == "wh_question":
            return (str(self.subject), self.verb, "what" if _VERBS[self.verb].objects else "where")
        if _VERBS[self.verb].objects:
            return (str(self.subject), self.verb, str(self.obj))
        return (str(self.subject), self.verb, self.place or "-")


def _check_frame(f: Frame) -> None:
    if f.tense not in ("present", "past"):
        raise ValueError(f"tense must be 'present' or 'past', got {f.tense!r}")
    if f.form not in FORMS:
        raise ValueError(f"form must be one of {FORMS}, got {f.form!r}")
    if f.time is not None and f.tense not in _TIMES[f.time][2]:
        raise ValueError(f"time {f.time!r} does not go with the {f.tense} tense")
    if f.verb == "there_is":
        if f.obj not in _THERE_IS or f.place not in _PLACES or f.subject is not None:
            raise ValueError(f"'there is' needs an obj from {sorted(_THERE_IS)} and a place")
        if f.form in ("question", "wh_question") or f.instrument or f.companion:
            raise ValueError("'there is' sentences are statements or negatives, no adjuncts")
        return
    if f.verb not in _VERBS:
        raise ValueError(f"unknown verb {f.verb!r}; expected one of {sorted(_VERBS)}")
    if f.subject not in _SUBJECTS:
        raise ValueError(f"unknown subject {f.subject!r}; expected one of {sorted(_SUBJECTS)}")
    v = _VERBS[f.verb]
    if v.objects and f.form != "wh_question" and f.obj not in v.objects:
        raise ValueError(f"verb {f.verb!r} needs an object from {v.objects}, got {f.obj!r}")
    if not v.objects and f.obj is not None:
        raise ValueError(f"verb {f.verb!r} takes no object, got {f.obj!r}")
    if f.place is not None and f.place not in v.places:
        raise ValueError(f"verb {f.verb!r} takes a place from {v.places}, got {f.place!r}")
    wh_place = f.form == "wh_question" and not v.objects
    if v.place_required and f.place is None and not wh_place:
        raise ValueError(f"verb {f.verb!r} needs a place")
    if f.instrument is not None and f.instrument not in v.instruments:
        raise ValueError(f"verb {f.verb!r} takes an instrument from {v.instruments}")
    if f.companion is not None and (not v.company or f.companion not in _COMPANIONS):
        raise ValueError(f"verb {f.verb!r} cannot take the companion {f.companion!r}")
    if f.companion is not None and f.companion == f.subject:
        raise ValueError("the companion must differ from the subject")
    if _SUBJECTS[f.subject].animal and not v.animals:
        raise ValueError(f"an animal cannot {f.verb}")
    if f.form in ("question", "wh_question") and f.subject in ("i", "we"):
        raise ValueError("questions are asked about you, he, she, they or a noun subject")
    if f.form == "wh_question" and (f.place is not None if wh_place else f.obj is not None):
        raise ValueError("a wh-question leaves out the argument it asks about")


def _with(ko_word: str, kind: str) -> list[str]:
    """Tokens of a Korean noun phrase followed by its particle: 내 친구 + 는."""
    return ko_word.split() + [particle(ko_word, kind)]


def _en_verb(v: _Verb, subj: _Subject, tense: str, form: str) -> list[str]:
    """English verb group and whether do-support moved an auxiliary to the front."""
    base, third, past = v.en
    third_sg = subj.person == 3 and not subj.plural
    if form == "negative":
        aux = "did" if tense == "past" else ("does" if third_sg else "do")
        return [aux, "not", base]
    if form in ("question", "wh_question"):
        return [base]
    if tense == "past":
        return [past]
    return [third if third_sg else base]


def generate_pair(frame: Frame) -> tuple[str, str]:
    """The (English, Korean) sentences that a :class:`Frame` describes, space-tokenised.

    >>> generate_pair(Frame("i", "go", place="home"))
    ('I go home .', '나는 집에 간다 .')
    """
    _check_frame(frame)
    f = frame
    en: list[str]
    ko: list[str] = []
    neg = f.form == "negative"
    if f.verb == "there_is":
        be = "was" if f.tense == "past" else "is"
        thing = _THERE_IS[f.obj]
        if neg:
            thing = "no " + _NOUNS[f.obj].none
        en = ["there", be, thing, _PLACES[f.place].at]
        if f.time:
            en.append(_TIMES[f.time][0])
        if f.time:
            ko += list(_TIMES[f.time][1])
        ko += [_PLACES[f.place].ko, "에"] + _with(_NOUNS[f.obj].ko, "이/가")
        ko.append(conjugate("있다", f.tense, negative=neg))
        return _finish(en, "."), detokenize_ko(ko + ["."])

    v, subj = _VERBS[f.verb], _SUBJECTS[f.subject]
    question = f.form in ("question", "wh_question")
    # English: S V O [with C] [instrument] [place] [time] . (a destination right after the
    # verb), questions with do-support.
    tail: list[str] = []
    if v.objects and f.obj:
        tail += ([v.prep] if v.prep else []) + [_NOUNS[f.obj].en]
    elif v.prep and f.form == "wh_question":
        tail.append(v.prep)  # "what do you listen to ?"
    if f.place and v.motion:  # the destination follows the verb: "go home by bus"
        tail.append(_PLACES[f.place].to)
    if f.companion:
        tail += ["with", _NOUNS[f.companion].en]
    if f.instrument:
        tail.append(_INSTRUMENTS[f.instrument][0])
    if f.place and not v.motion:
        tail.append(_PLACES[f.place].at)
    if f.time:
        tail.append(_TIMES[f.time][0])
    verb_en = _en_verb(v, subj, f.tense, f.form)
    if question:
        third_sg = subj.person == 3 and not subj.plural
        aux = "did" if f.tense == "past" else ("does" if third_sg else "do")
        head = []
        if f.form == "wh_question":
            head = ["what" if v.objects else "where"]
        en = head + [aux, subj.en] + verb_en + tail
    else:
        en = [subj.en] + verb_en + tail
    # Korean: S는 [time] [C와] [instrument로] [place에/에서] [O를] V .
    ko += _with(subj.ko, "은/는")
    if f.time:
        ko += list(_TIMES[f.time][1])
    if f.companion:
        ko += _with(_NOUNS[f.companion].ko, "와/과")
    if f.instrument:
        ko += _with(_INSTRUMENTS[f.instrument][1], "(으)로")
    place_particle = "에" if (v.motion or f.verb == "live") else "에서"
    if f.form == "wh_question" and not v.objects:
        ko += ["어디", place_particle]
    elif f.place:
        ko += [_PLACES[f.place].ko, place_particle]
    if f.form == "wh_question" and v.objects:
        ko += ["무엇", "을"]
    elif f.obj:
        ko += _with(_NOUNS[f.obj].ko, "을/를")
    ko += conjugate(v.ko, f.tense, negative=neg, question=question).split()
    return _finish(en, "?" if question else "."), detokenize_ko(ko + ["?" if question else "."])


def _finish(words: list[str], mark: str) -> str:
    text = " ".join(words + [mark])
    return text[0].upper() + text[1:]


# ---------------------------------------------------------------------------------------------
# Sampling frames and the splits.


def enko_triples() -> list[tuple[str, str, str]]:
    """Every (subject, verb, argument) combination the grammar can express, sorted."""
    out: set[tuple[str, str, str]] = set()
    for vk, v in _VERBS.items():
        for sk, subj in _SUBJECTS.items():
            if subj.animal and not v.animals:
                continue
            if v.objects:
                out.update((sk, vk, ok) for ok in v.objects if ok != sk)
            else:
                out.update((sk, vk, pk) for pk in v.places)
                if not v.place_required:
                    out.add((sk, vk, "-"))
            if sk not in ("i", "we"):
                out.add((sk, vk, "what" if v.objects else "where"))
    out.update(("there", "there_is", ok) for ok in _THERE_IS)
    return sorted(out)


def _times(rng: random.Random, tense: str) -> str:
    return rng.choice(sorted(k for k, t in _TIMES.items() if tense in t[2]))


def _frames_at_most(triple: tuple[str, str, str], max_adjuncts: int) -> int:
    """An upper bound on the distinct frames :func:`_sample_frame` can draw for ``triple``."""
    from itertools import combinations
    from math import prod

    subject, verb, arg = triple
    total = 0
    for tense in ("present", "past"):
        times = sum(tense in t[2] for t in _TIMES.values())
        if verb == "there_is":
            total += 2 * (1 + times) * len(_PLACES)
            continue
        v = _VERBS[verb]
        forms = 1 if arg in ("what", "where") else (2 if subject in ("i", "we") else 3)
        choices = [times]
        if v.objects and v.places:
            choices.append(len(v.places))
        if v.instruments:
            choices.append(len(v.instruments))
        if v.company:
            choices.append(len(_COMPANIONS))
        adjuncts = sum(prod(c) for k in range(min(max_adjuncts, len(choices)) + 1)
                       for c in combinations(choices, k))  # fmt: skip
        total += forms * adjuncts
    return total


def _sample_frame(rng: random.Random, triple: tuple[str, str, str], max_adjuncts: int) -> Frame:
    """A random sentence frame whose ``triple`` is the given one."""
    subject, verb, arg = triple
    tense = rng.choice(("present", "past"))
    if verb == "there_is":
        form = rng.choice(("statement", "statement", "negative"))
        time = _times(rng, tense) if rng.random() < 0.3 else None
        return Frame(None, verb, arg, rng.choice(sorted(_PLACES)), tense, form, time)
    v = _VERBS[verb]
    if arg in ("what", "where"):
        form = "wh_question"
    else:
        forms = ["statement", "statement", "statement", "negative", "negative"]
        form = rng.choice(forms + ([] if subject in ("i", "we") else ["question"]))
    obj = arg if v.objects and arg != "what" else None
    slots = ["time"]
    if v.objects and v.places:  # an intransitive verb's place is part of its triple
        slots.append("place")
    if v.instruments:
        slots.append("instrument")
    if v.company:
        slots.append("companion")
    chosen = set(rng.sample(slots, min(rng.randint(0, max_adjuncts), len(slots))))
    if v.objects:
        place = rng.choice(v.places) if "place" in chosen else None
    else:
        place = None if arg in ("-", "where") else arg
    time = _times(rng, tense) if "time" in chosen else None
    instrument = rng.choice(v.instruments) if "instrument" in chosen else None
    companion = None
    if "companion" in chosen:
        companion = rng.choice([c for c in _COMPANIONS if c not in (subject, obj)])
    return Frame(subject, verb, obj, place, tense, form, time, instrument, companion)


@dataclass
class EnKoCorpus:
    """Sentence pairs of the three splits and the held-out triples behind validation and test."""

    train: list[tuple[str, str]]
    valid: list[tuple[str, str]]
    test: list[tuple[str, str]]
    valid_triples: list[tuple[str, str, str]] = field(default_factory=list)
    test_triples: list[tuple[str, str, str]] = field(default_factory=list)
    train_frames: list[Frame] = field(default_factory=list, repr=False)
    valid_frames: list[Frame] = field(default_factory=list, repr=False)
    test_frames: list[Frame] = field(default_factory=list, repr=False)


RUNNING_EXAMPLE = Frame("i", "go", place="home")  # "I go home ." is always a training pair


def make_enko_corpus(
    num_train: int = 3000,
    num_valid: int = 200,
    num_test: int = 200,
    held_out: float = 0.15,
    max_adjuncts: int = 2,
    seed: int = 0,
) -> EnKoCorpus:
    """Sample distinct sentence pairs for train / validation / test, deterministically.

    A fraction ``held_out`` of the (subject, verb, argument) triples of :func:`enko_triples`
    never occurs in training; half of them feed validation, the other half test. The pairs
    within a split are distinct, and the splits share no pair.
    """
    num_train = checks.check_scalar(num_train, "num_train", int, low=0)
    num_valid = checks.check_scalar(num_valid, "num_valid", int, low=0)
    num_test = checks.check_scalar(num_test, "num_test", int, low=0)
    held_out = checks.check_scalar(held_out, "held_out", float, low=0, high=1, low_open=True,
                                   high_open=True)  # fmt: skip
    max_adjuncts = checks.check_scalar(max_adjuncts, "max_adjuncts", int, low=0)
    rng = random.Random(_seed(seed))
    triples = enko_triples()
    candidates = [t for t in triples if t != RUNNING_EXAMPLE.triple]
    rng.shuffle(candidates)
    n_out = max(2, round(held_out * len(triples)))
    valid_triples = sorted(candidates[: n_out // 2])
    test_triples = sorted(candidates[n_out // 2 : n_out])
    held = set(valid_triples) | set(test_triples)
    train_triples = [t for t in triples if t not in held]

    def sample(pool, n: int, first: list[Frame], split: str) -> list[Frame]:
        most = sum(_frames_at_most(t, max_adjuncts) for t in pool)
        if n > most:  # refuse at once what no number of draws can give
            raise ValueError(f"num_{split}={n} is more than the at most {most} distinct sentences "
                             f"that the grammar can make from the {split} triples")
        frames = list(first[:n])
        seen = {generate_pair(f) for f in frames}
        misses = 0
        while len(frames) < n:
            misses += 1
            if misses > 20 * len(frames) + 5000:  # no new sentence for this long: none left
                raise ValueError(f"num_{split}={n}: the grammar gave only {len(frames)} distinct "
                                 f"sentences for the {split} triples")
            f = _sample_frame(rng, rng.choice(pool), max_adjuncts)
            pair = generate_pair(f)
            if pair not in seen:
                seen.add(pair)
                frames.append(f)
                misses = 0
        return frames

    train_frames = sample(train_triples, num_train, [RUNNING_EXAMPLE], "train")
    valid_frames = sample(valid_triples, num_valid, [], "valid")
    test_frames = sample(test_triples, num_test, [], "test")
    return EnKoCorpus(
        train=[generate_pair(f) for f in train_frames],
        valid=[generate_pair(f) for f in valid_frames],
        test=[generate_pair(f) for f in test_frames],
        valid_triples=valid_triples,
        test_triples=test_triples,
        train_frames=train_frames,
        valid_frames=valid_frames,
        test_frames=test_frames,
    )


# ---------------------------------------------------------------------------------------------
# Tensors and loaders.


def build_array(
    lines: Sequence[Sequence[str]], vocab: Vocab, num_steps: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Token lists → ``(array, valid_len)``: (n, num_steps) indices ending in ``<eos>`` and (n,).

    A sentence longer than ``num_steps - 1`` tokens is truncated (its ``<eos>`` is cut too).
    """
    rows = [truncate_pad(vocab[list(line)] + [vocab.eos], num_steps, vocab.pad) for line in lines]
    array = torch.tensor(rows, dtype=torch.long).reshape(len(rows), num_steps)
    valid_len = (array != vocab.pad).long().sum(dim=1)
    return array, valid_len


def load_array(data_arrays: Sequence[torch.Tensor], batch_size: int, is_train: bool = True,
               seed: int = 0) -> data.DataLoader:  # fmt: skip
    """A DataLoader over equally long tensors; shuffled with a seeded generator when training."""
    batch_size = checks.check_scalar(batch_size, "batch_size", int, low=1)
    sizes = {len(a) for a in data_arrays}
    if len(sizes) != 1:
        raise ValueError(f"all arrays need the same first dimension, got {sorted(sizes)}")
    gen = generator(seed) if is_train else None
    dataset = data.TensorDataset(*data_arrays)
    return data.DataLoader(dataset, batch_size, shuffle=is_train, generator=gen)


def _tokenize_pairs(pairs, nouns=KO_NOUNS):
    return [tokenize_en(e) for e, _ in pairs], [tokenize_ko(k, nouns) for _, k in pairs]


def _loader_from_pairs(pairs, batch_size, num_steps, min_freq, nouns, seed):
    if not pairs:
        raise ValueError("no sentence pairs to load")
    src, tgt = _tokenize_pairs(pairs, nouns)
    src_vocab, tgt_vocab = Vocab(src, min_freq), Vocab(tgt, min_freq)
    src_array, src_valid_len = build_array(src, src_vocab, num_steps)
    tgt_array, tgt_valid_len = build_array(tgt, tgt_vocab, num_steps)
    arrays = (src_array, src_valid_len, tgt_array, tgt_valid_len)
    return load_array(arrays, batch_size, seed=seed), src_vocab, tgt_vocab


def load_data_enko(
    batch_size: int,
    num_steps: int,
    num_train: int = 3000,
    min_freq: int = 0,
    seed: int = 0,
    **corpus_kwargs,
) -> tuple[data.DataLoader, Vocab, Vocab]:
    """Training batches ``(X, X_valid_len, Y, Y_valid_len)`` of the generated corpus, and vocabs.

    X, Y: (batch, num_steps) indices ending in ``<eos>``; valid lengths: (batch,). The
    vocabularies come from the training split; ``make_enko_corpus`` with the same arguments
    gives the held-out validation and test pairs.
    """
    corpus = make_enko_corpus(num_train=num_train, seed=seed, **corpus_kwargs)
    return _loader_from_pairs(corpus.train, batch_size, num_steps, min_freq, KO_NOUNS, seed)


def read_parallel_tsv(path: str | Path, max_pairs: int | None = None) -> list[tuple[str, str]]:
    """(English, Korean) pairs from a tab-separated file ``English<TAB>Korean[<TAB>...]``.

    This is the layout of public sentence-pair collections (extra columns such as attribution
    are ignored). Blank lines are skipped; a line with fewer than two columns raises.
    """
    path = Path(path)
    pairs: list[tuple[str, str]] = []
    with path.open(encoding="utf-8", newline="") as fh:
        for lineno, row in enumerate(csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE), 1):
            if not row or all(not c.strip() for c in row):
                continue
            if len(row) < 2:
                raise ValueError(f"{path}:{lineno}: expected 'English<TAB>Korean', got {row!r}")
            pairs.append((row[0].strip(), row[1].strip()))
            if max_pairs is not None and len(pairs) >= max_pairs:
                break
    return pairs


def load_data_tsv(
    path: str | Path,
    batch_size: int,
    num_steps: int,
    max_pairs: int | None = None,
    min_freq: int = 2,
    seed: int = 0,
) -> tuple[data.DataLoader, Vocab, Vocab]:
    """Like :func:`load_data_enko`, for your own English–Korean file (not used by the book)."""
    pairs = read_parallel_tsv(path, max_pairs)
    return _loader_from_pairs(pairs, batch_size, num_steps, min_freq, None, seed)
