"""The generated English→Korean corpus: particles, conjugation, reference pairs, splits, loaders."""

import pytest
import torch

import d2lite as d2l
from d2lite.data import Frame, generate_pair
from d2lite.hangul import (
    compose_syllable,
    conjugate,
    decompose_syllable,
    final_consonant,
    has_batchim,
    particle,
)
from d2lite.text import tokenize_ko

# -- particles by 받침 -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "word, kind, expected",
    [
        ("나", "은/는", "는"),
        ("집", "은/는", "은"),
        ("학교", "이/가", "가"),
        ("책", "이/가", "이"),
        ("고양이", "이/가", "가"),
        ("사과", "을/를", "를"),
        ("빵", "을/를", "을"),
        ("선생님", "을/를", "을"),
        ("친구", "와/과", "와"),
        ("선생님", "와/과", "과"),
        ("아이들", "와/과", "과"),
        ("버스", "(으)로", "로"),
        ("펜", "(으)로", "으로"),
        ("젓가락", "(으)로", "으로"),
        # ㄹ-final nouns take 로, not 으로
        ("지하철", "(으)로", "로"),
        ("연필", "(으)로", "로"),
        # ... but ㄹ is an ordinary 받침 for the other particles
        ("지하철", "을/를", "을"),
        ("물", "이/가", "이"),
    ],
)
def test_particle_by_batchim(word, kind, expected):
    assert particle(word, kind) == expected


def test_batchim_from_the_syllable_code():
    assert final_consonant("지하철") == "ㄹ"
    assert final_consonant("집") == "ㅂ"
    assert final_consonant("나") == ""
    assert has_batchim("밥") and not has_batchim("우유")
    # 각 = 0xAC00 + 1: initial ㄱ, medial ㅏ, final ㄱ
    assert decompose_syllable("각") == (0, 0, 1)
    assert compose_syllable(18, 0, 0) == "하"


def test_compose_inverts_decompose_for_every_syllable():
    for code in range(0xAC00, 0xD7A4):
        ch = chr(code)
        assert compose_syllable(*decompose_syllable(ch)) == ch


def test_particle_bad_inputs():
    with pytest.raises(ValueError, match="Hangul"):
        particle("TV", "은/는")
    with pytest.raises(ValueError, match="non-empty"):
        particle("", "이/가")
    with pytest.raises(ValueError, match="kind"):
        particle("집", "의")
    with pytest.raises(ValueError, match="jamo"):
        compose_syllable(19, 0, 0)


# -- verb conjugation --------------------------------------------------------------------------

CONJUGATIONS = [
    # verb, present, past, negative present, negative past, question, past question
    ("가다", "간다", "갔다", "가지 않는다", "가지 않았다", "가니", "갔니"),
    ("먹다", "먹는다", "먹었다", "먹지 않는다", "먹지 않았다", "먹니", "먹었니"),
    ("하다", "한다", "했다", "하지 않는다", "하지 않았다", "하니", "했니"),
    ("보다", "본다", "봤다", "보지 않는다", "보지 않았다", "보니", "봤니"),
    ("듣다", "듣는다", "들었다", "듣지 않는다", "듣지 않았다", "듣니", "들었니"),
    ("오다", "온다", "왔다", "오지 않는다", "오지 않았다", "오니", "왔니"),
    ("마시다", "마신다", "마셨다", "마시지 않는다", "마시지 않았다", "마시니", "마셨니"),
    ("쓰다", "쓴다", "썼다", "쓰지 않는다", "쓰지 않았다", "쓰니", "썼니"),
    ("배우다", "배운다", "배웠다", "배우지 않는다", "배우지 않았다", "배우니", "배웠니"),
    ("돕다", "돕는다", "도왔다", "돕지 않는다", "돕지 않았다", "돕니", "도왔니"),
    ("부르다", "부른다", "불렀다", "부르지 않는다", "부르지 않았다", "부르니", "불렀니"),
    ("살다", "산다", "살았다", "살지 않는다", "살지 않았다", "사니", "살았니"),
    ("만들다", "만든다", "만들었다", "만들지 않는다", "만들지 않았다", "만드니", "만들었니"),
    ("걷다", "걷는다", "걸었다", "걷지 않는다", "걷지 않았다", "걷니", "걸었니"),
    ("닫다", "닫는다", "닫았다", "닫지 않는다", "닫지 않았다", "닫니", "닫았니"),
    ("만나다", "만난다", "만났다", "만나지 않는다", "만나지 않았다", "만나니", "만났니"),
    (
        "공부하다",
        "공부한다",
        "공부했다",
        "공부하지 않는다",
        "공부하지 않았다",
        "공부하니",
        "공부했니",
    ),
    (
        "기다리다",
        "기다린다",
        "기다렸다",
        "기다리지 않는다",
        "기다리지 않았다",
        "기다리니",
        "기다렸니",
    ),
    ("읽다", "읽는다", "읽었다", "읽지 않는다", "읽지 않았다", "읽니", "읽었니"),
    ("찾다", "찾는다", "찾았다", "찾지 않는다", "찾지 않았다", "찾니", "찾았니"),
    ("열다", "연다", "열었다", "열지 않는다", "열지 않았다", "여니", "열었니"),
    ("있다", "있다", "있었다", "없다", "없었다", "있니", "있었니"),
]


@pytest.mark.parametrize("verb, pres, past, neg, neg_past, q, q_past", CONJUGATIONS)
def test_conjugation(verb, pres, past, neg, neg_past, q, q_past):
    assert conjugate(verb) == pres
    assert conjugate(verb, "past") == past
    assert conjugate(verb, negative=True) == neg
    assert conjugate(verb, "past", negative=True) == neg_past
    assert conjugate(verb, question=True) == q
    assert conjugate(verb, "past", question=True) == q_past


def test_conjugation_more_contractions():
    assert conjugate("되다", "past") == "됐다"  # ㅚ + 었 → ㅙ
    assert conjugate("보내다", "past") == "보냈다"  # ㅐ keeps its vowel
    assert conjugate("모르다", "past") == "몰랐다"  # 르 after a bright vowel → 랐
    assert conjugate("눕다", "past") == "누웠다"  # ㅂ → 우
    assert conjugate("쉬다", "past") == "쉬었다"  # ㅟ does not contract
    # 닫다 is regular, 듣다 is not: the irregular flag decides.
    assert conjugate("닫다", "past", irregular="ㄷ") == "달았다"


def test_conjugation_bad_inputs():
    with pytest.raises(ValueError, match="tense"):
        conjugate("가다", "future")
    with pytest.raises(ValueError, match="dictionary-form"):
        conjugate("go")
    with pytest.raises(ValueError, match="irregular"):
        conjugate("가다", irregular="ㅅ")


# -- hand-written reference pairs --------------------------------------------------------------

REFERENCE_PAIRS = [
    (Frame("i", "go", place="home"), "I go home .", "나는 집에 간다 ."),
    (Frame("i", "go", place="home", tense="past"), "I went home .", "나는 집에 갔다 ."),
    (
        Frame("i", "go", place="home", form="negative"),
        "I do not go home .",
        "나는 집에 가지 않는다 .",
    ),
    (
        Frame("he", "go", place="school", tense="past", form="negative"),
        "He did not go to school .",
        "그는 학교에 가지 않았다 .",
    ),
    (
        Frame("you", "go", place="park", form="question"),
        "Do you go to the park ?",
        "너는 공원에 가니 ?",
    ),
    (
        Frame("she", "go", tense="past", form="wh_question", time="yesterday"),
        "Where did she go yesterday ?",
        "그녀는 어제 어디에 갔니 ?",
    ),
    (
        Frame("friend", "read", "book", place="library", time="today"),
        "My friend reads a book at the library today .",
        "내 친구는 오늘 도서관에서 책을 읽는다 .",
    ),
    (Frame("he", "eat", "apple"), "He eats an apple .", "그는 사과를 먹는다 ."),
    (
        Frame("we", "eat", "rice", tense="past", instrument="chopsticks"),
        "We ate rice with chopsticks .",
        "우리는 젓가락으로 밥을 먹었다 .",
    ),
    (
        Frame("they", "eat", "noodles", instrument="fork"),
        "They eat noodles with a fork .",
        "그들은 포크로 국수를 먹는다 .",
    ),
    (
        Frame("student", "write", "letter", instrument="pencil"),
        "The student writes a letter with a pencil .",
        "학생은 연필로 편지를 쓴다 .",
    ),
    (
        Frame("teacher", "write", "poem", tense="past", instrument="pen"),
        "The teacher wrote a poem with a pen .",
        "선생님은 펜으로 시를 썼다 .",
    ),
    (
        Frame("i", "go", place="school", instrument="subway"),
        "I go to school by subway .",
        "나는 지하철로 학교에 간다 .",
    ),
    (
        Frame("she", "come", place="home", instrument="bus", tense="past"),
        "She came home by bus .",
        "그녀는 버스로 집에 왔다 .",
    ),
    (
        Frame("i", "go", place="market", companion="friend"),
        "I go to the market with my friend .",
        "나는 내 친구와 시장에 간다 .",
    ),
    (
        Frame("he", "walk", place="park", companion="teacher", tense="past"),
        "He walked with the teacher in the park .",
        "그는 선생님과 공원에서 걸었다 .",
    ),
    (Frame("we", "listen", "music"), "We listen to music .", "우리는 음악을 듣는다 ."),
    (
        Frame("they", "listen", "radio", tense="past"),
        "They listened to the radio .",
        "그들은 라디오를 들었다 .",
    ),
    (
        Frame("you", "watch", "movie", tense="past", form="question"),
        "Did you watch a movie ?",
        "너는 영화를 봤니 ?",
    ),
    (
        Frame("i", "watch", "news", time="every_day"),
        "I watch the news every day .",
        "나는 매일 뉴스를 본다 .",
    ),
    (
        Frame("children", "study", "korean"),
        "The children study Korean .",
        "아이들은 한국어를 공부한다 .",
    ),
    (
        Frame("student", "study", "math", place="library", tense="past"),
        "The student studied math at the library .",
        "학생은 도서관에서 수학을 공부했다 .",
    ),
    (
        Frame("he", "help", "friend", tense="past"),
        "He helped my friend .",
        "그는 내 친구를 도왔다 .",
    ),
    (Frame("i", "help", "teacher"), "I help the teacher .", "나는 선생님을 돕는다 ."),
    (Frame("she", "sing", "song", tense="past"), "She sang a song .", "그녀는 노래를 불렀다 ."),
    (
        Frame("we", "make", "bread", place="kitchen"),
        "We make bread in the kitchen .",
        "우리는 부엌에서 빵을 만든다 .",
    ),
    (
        Frame("teacher", "live", place="seoul"),
        "The teacher lives in Seoul .",
        "선생님은 서울에 산다 .",
    ),
    (Frame("you", "live", form="wh_question"), "Where do you live ?", "너는 어디에 사니 ?"),
    (Frame("he", "eat", form="wh_question"), "What does he eat ?", "그는 무엇을 먹니 ?"),
    (
        Frame("they", "listen", tense="past", form="wh_question"),
        "What did they listen to ?",
        "그들은 무엇을 들었니 ?",
    ),
    (Frame("cat", "eat", "fish"), "The cat eats fish .", "고양이는 생선을 먹는다 ."),
    (
        Frame("dog", "sleep", place="garden", time="now"),
        "The dog sleeps in the garden now .",
        "개는 지금 정원에서 잔다 .",
    ),
    (
        Frame("children", "play", place="park", tense="past", time="yesterday"),
        "The children played in the park yesterday .",
        "아이들은 어제 공원에서 놀았다 .",
    ),
    (
        Frame("i", "drink", "coffee", place="cafe", time="morning"),
        "I drink coffee at the cafe in the morning .",
        "나는 아침에 카페에서 커피를 마신다 .",
    ),
    (
        Frame("she", "drink", "milk", tense="past", form="negative"),
        "She did not drink milk .",
        "그녀는 우유를 마시지 않았다 .",
    ),
    (
        Frame("friend", "learn", "english", tense="past"),
        "My friend learned English .",
        "내 친구는 영어를 배웠다 .",
    ),
    (
        Frame("teacher", "teach", "history", place="school"),
        "The teacher teaches history at school .",
        "선생님은 학교에서 역사를 가르친다 .",
    ),
    (Frame("he", "open", "window"), "He opens the window .", "그는 창문을 연다 ."),
    (Frame("we", "close", "door", tense="past"), "We closed the door .", "우리는 문을 닫았다 ."),
    (
        Frame("student", "wait", "bus", place="school"),
        "The student waits for the bus at school .",
        "학생은 학교에서 버스를 기다린다 .",
    ),
    (
        Frame("i", "meet", "friend", place="cafe", tense="past", time="last_night"),
        "I met my friend at the cafe last night .",
        "나는 어젯밤에 카페에서 내 친구를 만났다 .",
    ),
    (
        Frame("dog", "find", "key", tense="past"),
        "The dog looked for the key .",
        "개는 열쇠를 찾았다 .",
    ),
    (Frame("he", "ride", "bicycle"), "He rides a bicycle .", "그는 자전거를 탄다 ."),
    (
        Frame("they", "buy", "apple", place="market", tense="past"),
        "They bought an apple at the market .",
        "그들은 시장에서 사과를 샀다 .",
    ),
    (Frame("i", "like", "cat"), "I like the cat .", "나는 고양이를 좋아한다 ."),
    (
        Frame(None, "there_is", "cat", place="park"),
        "There is a cat in the park .",
        "공원에 고양이가 있다 .",
    ),
    (
        Frame(None, "there_is", "book", place="library", tense="past"),
        "There was a book at the library .",
        "도서관에 책이 있었다 .",
    ),
    (
        Frame(None, "there_is", "water", place="kitchen", form="negative"),
        "There is no water in the kitchen .",
        "부엌에 물이 없다 .",
    ),
    (
        Frame(None, "there_is", "dog", place="garden", tense="past", form="negative"),
        "There was no dog in the garden .",
        "정원에 개가 없었다 .",
    ),
    (
        Frame("he", "work", place="office", form="negative", time="today"),
        "He does not work at the office today .",
        "그는 오늘 사무실에서 일하지 않는다 .",
    ),
    (
        Frame("we", "exercise", place="park", companion="children", time="evening"),
        "We exercise with the children in the park in the evening .",
        "우리는 저녁에 아이들과 공원에서 운동한다 .",
    ),
    (
        Frame("children", "run", place="school", tense="past"),
        "The children ran at school .",
        "아이들은 학교에서 달렸다 .",
    ),
    (Frame("you", "walk", form="wh_question"), "Where do you walk ?", "너는 어디에서 걷니 ?"),
    (
        Frame("she", "come", place="seoul", instrument="train", tense="past", form="question"),
        "Did she come to Seoul by train ?",
        "그녀는 기차로 서울에 왔니 ?",
    ),
    (
        Frame("friend", "go", place="busan", instrument="taxi", form="negative"),
        "My friend does not go to Busan by taxi .",
        "내 친구는 택시로 부산에 가지 않는다 .",
    ),
]


def test_reference_pairs_hold_the_running_example_and_forty_frames():
    # The library's running example is among the hand-checked pairs (its frame, not a copy of
    # the sentences, so a change of d2l.RUNNING_EXAMPLE is caught) ...
    frames = [frame for frame, _, _ in REFERENCE_PAIRS]
    assert d2l.RUNNING_EXAMPLE in frames
    assert d2l.generate_pair(d2l.RUNNING_EXAMPLE) == ("I go home .", "나는 집에 간다 .")
    # ... and there are enough of them to matter: at least forty distinct frames.
    assert len(set(map(repr, frames))) >= 40


@pytest.mark.parametrize("frame, en, ko", REFERENCE_PAIRS, ids=lambda x: getattr(x, "verb", None))
def test_reference_pair(frame, en, ko):
    assert generate_pair(frame) == (en, ko)


@pytest.mark.parametrize(
    "frame, message",
    [
        (Frame("i", "eat", "door"), "object"),
        (Frame("i", "go"), "needs a place"),
        (Frame("cat", "read", "book"), "animal"),
        (Frame("i", "go", place="home", form="question"), "questions"),
        (Frame("i", "go", place="home", time="yesterday"), "tense"),
        (Frame("i", "go", place="home", companion="friend", instrument="chopsticks"),
         "instrument"),
        (Frame("friend", "go", place="home", companion="friend"), "differ"),
        (Frame("i", "fly", place="home"), "unknown verb"),
        (Frame("i", "go", place="home", form="exclamation"), "form"),
        (Frame("i", "sleep", "bread"), "no object"),
        (Frame(None, "there_is", "song", place="park"), "there is"),
    ],
)  # fmt: skip
def test_bad_frames_raise(frame, message):
    with pytest.raises(ValueError, match=message):
        generate_pair(frame)


# -- the splits ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus():
    return d2l.make_enko_corpus(num_train=1500, num_valid=150, num_test=150, seed=3)


def test_corpus_is_deterministic(corpus):
    again = d2l.make_enko_corpus(num_train=1500, num_valid=150, num_test=150, seed=3)
    assert again.train == corpus.train and again.test == corpus.test
    other = d2l.make_enko_corpus(num_train=1500, num_valid=150, num_test=150, seed=4)
    assert other.train != corpus.train


def test_split_sizes_and_running_example(corpus):
    assert (len(corpus.train), len(corpus.valid), len(corpus.test)) == (1500, 150, 150)
    assert corpus.train[0] == ("I go home .", "나는 집에 간다 .")
    for split in (corpus.train, corpus.valid, corpus.test):
        assert len(set(split)) == len(split)


def test_held_out_triples_never_in_training(corpus):
    train_triples = {f.triple for f in corpus.train_frames}
    valid, test = set(corpus.valid_triples), set(corpus.test_triples)
    assert valid and test and not valid & test
    assert not train_triples & (valid | test)
    assert {f.triple for f in corpus.valid_frames} <= valid
    assert {f.triple for f in corpus.test_frames} <= test
    assert not set(corpus.train) & set(corpus.test)
    assert not set(corpus.train) & set(corpus.valid)
    assert not set(corpus.valid) & set(corpus.test)


def test_test_words_are_all_known_from_training(corpus):
    en_vocab = d2l.Vocab([d2l.tokenize_en(e) for e, _ in corpus.train])
    ko_vocab = d2l.Vocab([tokenize_ko(k, d2l.KO_NOUNS) for _, k in corpus.train])
    for en, ko in corpus.test:
        assert en_vocab.unk not in en_vocab[d2l.tokenize_en(en)], en
        # Verb endings are learnt per form, so only nouns and particles must be known.
        for tok in tokenize_ko(ko, d2l.KO_NOUNS):
            if tok in d2l.KO_NOUNS or tok in d2l.KO_PARTICLES:
                assert tok in ko_vocab, (ko, tok)


def test_every_generated_particle_agrees_with_its_noun(corpus):
    pairs = {"은": "은/는", "는": "은/는", "이": "이/가", "가": "이/가", "을": "을/를"}
    pairs |= {"를": "을/를", "와": "와/과", "과": "와/과", "으로": "(으)로", "로": "(으)로"}
    checked = 0
    for _, ko in corpus.train + corpus.test:
        tokens = tokenize_ko(ko, d2l.KO_NOUNS)
        assert d2l.detokenize_ko(tokens) == ko
        for prev, tok in zip(tokens, tokens[1:]):
            if tok in pairs:
                assert prev in d2l.KO_NOUNS, (ko, prev, tok)
                assert particle(prev, pairs[tok]) == tok, ko
                checked += 1
    assert checked > 2000


def test_korean_puts_the_verb_last(corpus):
    for frame, (_, ko) in zip(corpus.train_frames[:300], corpus.train[:300]):
        tokens = ko.split()
        assert tokens[-1] in (".", "?")
        if frame.verb != "there_is" and frame.form in ("statement", "question"):
            # The English verb comes second or after "do S"; the Korean verb is last.
            last = tokens[-2]
            assert last.endswith(("다", "니")), ko


def test_corpus_bad_arguments():
    with pytest.raises(ValueError, match="num_train"):
        d2l.make_enko_corpus(num_train=-1)
    with pytest.raises(ValueError, match="held_out"):
        d2l.make_enko_corpus(held_out=1.5)


# -- arrays and loaders ----------------------------------------------------------------------


def test_truncate_pad():
    assert d2l.truncate_pad([5, 6], 4, 0) == [5, 6, 0, 0]
    assert d2l.truncate_pad([5, 6, 7, 8, 9], 3, 0) == [5, 6, 7]
    with pytest.raises(ValueError, match="num_steps"):
        d2l.truncate_pad([1], 0, 0)


def test_build_array_adds_eos_and_counts_valid_tokens():
    vocab = d2l.Vocab([["a", "b", "c"]])
    array, valid_len = d2l.build_array([["a", "b"], ["c"], ["a", "b", "c", "a"]], vocab, 4)
    eos, pad = vocab.eos, vocab.pad
    assert array.tolist() == [
        vocab[["a", "b"]] + [eos, pad],
        vocab[["c"]] + [eos, pad, pad],
        vocab[["a", "b", "c", "a"]],  # truncated: no room for <eos>
    ]
    assert valid_len.tolist() == [3, 2, 4]


def test_load_data_enko_shapes_and_determinism():
    it, src_vocab, tgt_vocab = d2l.load_data_enko(32, 16, num_train=200, seed=1)
    X, X_len, Y, Y_len = next(iter(it))
    assert X.shape == (32, 16) and Y.shape == (32, 16)
    assert X_len.shape == (32,) and Y_len.shape == (32,)
    assert X.dtype == torch.long
    assert int(X_len.min()) >= 2 and int(Y_len.max()) <= 16
    # Each row ends in <eos> at valid_len - 1 and is padded after it.
    for row, n in zip(Y, Y_len):
        assert row[n - 1] == tgt_vocab.eos and (row[n:] == tgt_vocab.pad).all()
    it2, _, _ = d2l.load_data_enko(32, 16, num_train=200, seed=1)
    assert torch.equal(next(iter(it2))[0], X)
    assert src_vocab["home"] != src_vocab.unk and tgt_vocab["집"] != tgt_vocab.unk
    assert "간다" in tgt_vocab


def test_load_array_bad_inputs():
    with pytest.raises(ValueError, match="same first dimension"):
        d2l.load_array((torch.zeros(3), torch.zeros(4)), 2)
    with pytest.raises(ValueError, match="batch_size"):
        d2l.load_array((torch.zeros(3),), 0)


def test_tab_separated_file(tmp_path):
    path = tmp_path / "kor.txt"
    lines = [
        "Go.\t가.\tCC-BY 2.0 (France) Attribution: tatoeba.org #2877272",
        "",
        "I go home.\t나는 집에 간다.",
        "I like apples.\t나는 사과를 좋아한다.",
        'He said "hi".\t그는 "안녕"이라고 말했다.',
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    pairs = d2l.read_parallel_tsv(path)
    assert pairs[0] == ("Go.", "가.")
    assert pairs[1] == ("I go home.", "나는 집에 간다.")
    assert pairs[3][0] == 'He said "hi".'
    assert len(d2l.read_parallel_tsv(path, max_pairs=2)) == 2
    it, src_vocab, tgt_vocab = d2l.load_data_tsv(path, batch_size=2, num_steps=8, min_freq=1)
    X, X_len, Y, Y_len = next(iter(it))
    assert X.shape == (2, 8) and Y.shape == (2, 8)
    assert "home" in src_vocab and "간다" in tgt_vocab and "는" in tgt_vocab
    bad = tmp_path / "bad.txt"
    bad.write_text("only one column\n", encoding="utf-8")
    with pytest.raises(ValueError, match="English<TAB>Korean"):
        d2l.read_parallel_tsv(bad)
