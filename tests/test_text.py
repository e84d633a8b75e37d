"""Tokenisers, the Korean detokeniser and Vocab (d2lite.text)."""

import pytest
import torch

import d2lite as d2l
from d2lite.text import KO_PARTICLES, detokenize_ko, tokenize_en, tokenize_ko


def test_tokenize_en_lowercases_and_splits_punctuation():
    assert tokenize_en("I go home .") == ["i", "go", "home", "."]
    assert tokenize_en("Where did you go?") == ["where", "did", "you", "go", "?"]
    assert tokenize_en("Don't stop, Tom!") == ["don't", "stop", ",", "tom", "!"]
    assert tokenize_en("  ") == []


def test_tokenize_ko_splits_particles():
    assert tokenize_ko("나는 집에 간다 .") == ["나", "는", "집", "에", "간다", "."]
    assert tokenize_ko("나는 도서관에서 책을 읽는다.") == [
        "나", "는", "도서관", "에서", "책", "을", "읽는다", ".",
    ]  # fmt: skip
    # "으로" is one particle, not 으 + 로.
    assert tokenize_ko("펜으로") == ["펜", "으로"]
    assert tokenize_ko("지하철로") == ["지하철", "로"]


def test_tokenize_ko_with_lexicon_keeps_nouns_whole():
    # Without a lexicon 사과 ("apple") looks like 사 + the particle 과.
    assert tokenize_ko("사과를 먹는다") == ["사과", "를", "먹는다"]
    assert tokenize_ko("사과") == ["사", "과"]
    assert tokenize_ko("사과", nouns={"사과"}) == ["사과"]
    assert tokenize_ko("고양이가", nouns={"고양이"}) == ["고양이", "가"]
    # A word ending in a particle after an unknown stem stays whole with a lexicon.
    assert tokenize_ko("간다", nouns={"집"}) == ["간다"]


@pytest.mark.parametrize(
    "sentence",
    [
        "나는 집에 간다 .",
        "내 친구는 오늘 도서관에서 책을 읽는다 .",
        "그녀는 어제 어디에 갔니 ?",
        "공원에 고양이가 없다 .",
        "우리는 젓가락으로 밥을 먹었다 .",
        "사과와 고양이",
    ],
)
def test_detokenize_ko_round_trip(sentence):
    assert detokenize_ko(tokenize_ko(sentence)) == sentence
    assert detokenize_ko(tokenize_ko(sentence, nouns=d2l.KO_NOUNS)) == sentence


def test_detokenize_ko_attaches_particles_only_after_words():
    assert detokenize_ko(["나", "는", "집", "에", "간다", "."]) == "나는 집에 간다 ."
    # A particle at the start or after punctuation has nothing to attach to.
    assert detokenize_ko(["는", "집"]) == "는 집"
    assert detokenize_ko([".", "는"]) == ". 는"
    assert all(p in KO_PARTICLES for p in ("은", "는", "이", "가", "을", "를", "에서", "으로"))


def test_tokenizers_reject_non_strings():
    with pytest.raises(ValueError, match="str"):
        tokenize_en(["i", "go"])
    with pytest.raises(ValueError, match="str"):
        tokenize_ko(None)
    with pytest.raises(ValueError, match="str"):
        detokenize_ko(["나", 3])


def test_vocab_reserved_tokens_and_order():
    vocab = d2l.Vocab([["b", "a", "b"], ["c", "b", "a"]])
    assert vocab.idx_to_token[:4] == ["<pad>", "<bos>", "<eos>", "<unk>"]
    assert (vocab.pad, vocab.bos, vocab.eos, vocab.unk) == (0, 1, 2, 3)
    # Most frequent first (b: 3, a: 2, c: 1).
    assert vocab.idx_to_token[4:] == ["b", "a", "c"]
    assert len(vocab) == 7
    assert vocab.token_freqs == [("b", 3), ("a", 2), ("c", 1)]


def test_vocab_both_ways():
    vocab = d2l.Vocab("the cat sat on the mat".split())
    assert vocab["the"] == 4
    assert vocab[["the", "dog"]] == [4, vocab.unk]
    assert vocab.to_tokens(4) == "the"
    ids = vocab[["cat", "sat", "mat"]]
    assert vocab.to_tokens(ids) == ["cat", "sat", "mat"]
    assert vocab.to_tokens(torch.tensor(ids)) == ["cat", "sat", "mat"]
    assert "cat" in vocab and "dog" not in vocab


def test_vocab_ties_do_not_depend_on_input_order():
    a = d2l.Vocab(["x", "y", "z"])
    b = d2l.Vocab(["z", "y", "x"])
    assert a.idx_to_token == b.idx_to_token


def test_vocab_min_freq_and_extra_reserved():
    vocab = d2l.Vocab(["a", "a", "b"], min_freq=2, reserved_tokens=["<sep>"])
    assert vocab.idx_to_token == ["<pad>", "<bos>", "<eos>", "<unk>", "<sep>", "a"]
    assert vocab["b"] == vocab.unk


def test_vocab_bad_inputs():
    with pytest.raises(ValueError, match="min_freq"):
        d2l.Vocab(["a"], min_freq=-1)
    with pytest.raises(ValueError, match="duplicates"):
        d2l.Vocab(["a"], reserved_tokens=["<x>", "<x>"])
    vocab = d2l.Vocab(["a"])
    with pytest.raises(ValueError, match="out of range"):
        vocab.to_tokens(99)
    with pytest.raises(ValueError, match="shape"):
        vocab.to_tokens(torch.zeros(2, 2, dtype=torch.long))
    with pytest.raises(ValueError, match="token"):
        vocab[3]
    with pytest.raises(ValueError, match="str"):
        d2l.Vocab([1, 2])
