"""Unit tests for chapter 10's exported code (d2lite.lm) and the shipped corpus (d2lite.prose)."""

import contextlib
import random
import unicodedata

import pytest
import torch

import d2lite as d2l
from tools import prose

TEXT = ("낮말은 새가 듣고 밤말은 쥐가 듣는다. 트랜스포머는 어텐션만으로 문장을 번역합니다. "
        "The Transformer translates with attention alone. ") * 3

STRANGE = [
    "", " ", "\n\n", "😀", "👍🏽👨‍👩‍👧", "naïve café", "漢字と かな", "ᄒᆞᆫ글", "\ud800", "\udfff x",
    "ㅋㅋㅋ ㄱㄴㄷ", unicodedata.normalize("NFD", "한국어 자모"), "가\u0301", "\x00\x7f",
    "힣" * 50, "a" * 300, "  two  spaces\t\ttabs ", "Ω≈ç√∫ 𝔘𝔫𝔦", "\u200b\ufeff", "\ufffd",
]


@pytest.fixture(scope="module", params=d2l.BPETokenizer.UNITS)
def tok(request):
    return d2l.BPETokenizer.train(TEXT, 300, unit=request.param)


# -- the tokenizer ----------------------------------------------------------------------------


@pytest.mark.parametrize("s", STRANGE)
def test_round_trip_of_strange_strings(tok, s):
    ids = tok.encode(s)
    assert all(isinstance(i, int) and 0 <= i < len(tok) for i in ids)
    assert tok.decode(ids) == s


def test_round_trip_of_random_unicode(tok):
    rng = random.Random(0)
    for _ in range(200):
        s = "".join(chr(rng.choice([rng.randrange(0x20, 0x80), rng.randrange(0xAC00, 0xD7A4),
                                    rng.randrange(0x1100, 0x1200), rng.randrange(0x80, 0x110000)]))
                    for _ in range(rng.randrange(0, 12)))  # fmt: skip
        assert tok.decode(tok.encode(s)) == s, repr(s)


def test_empty_string_and_tensor_decode(tok):
    assert tok.encode("") == [] and tok.decode([]) == ""
    ids = tok.encode("밤말은 😀")
    assert tok.decode(torch.tensor(ids)) == "밤말은 😀"


def test_vocabulary_size_and_compression():
    for unit in d2l.BPETokenizer.UNITS:
        tok = d2l.BPETokenizer.train(TEXT, 1000, unit=unit)
        assert 256 < len(tok) <= 1000
        assert len(tok.encode(TEXT)) < len(TEXT) / 3  # merges make it shorter than characters


def test_unseen_characters_fall_back_to_bytes():
    tok = d2l.BPETokenizer.train("가나다 가나다", 300, unit="syllable")
    assert tok.encode("😀") == list("😀".encode())
    jamo = d2l.BPETokenizer.train("가나다 가나다", 300, unit="jamo")
    assert jamo.encode("ᄀ") == list("ᄀ".encode())  # typed jamo are never joined


def test_training_is_deterministic_and_ties_go_to_smaller_ids():
    a = d2l.BPETokenizer.train(TEXT, 300, unit="byte")
    b = d2l.BPETokenizer.train(list(TEXT), 300, unit="byte")  # same chunks, other grouping
    assert a.merges == d2l.BPETokenizer.train(TEXT, 300, unit="byte").merges
    assert len(a.merges) > 0 and a.encode(TEXT) == a.encode(TEXT)
    assert isinstance(b, d2l.BPETokenizer)
    # (c, d), (d, a) and (a, b) all occur twice: the pair of smaller ids, (a, b), goes first.
    tie = d2l.BPETokenizer.train("cdab cdab", 300, unit="byte")
    assert tie.merges[0] == (ord("a"), ord("b"))


def test_a_smaller_vocabulary_is_a_prefix():
    big = d2l.BPETokenizer.train(TEXT, 320, unit="byte")
    small = d2l.BPETokenizer.train(TEXT, 290, unit="byte")
    assert big.merges[: len(small.merges)] == small.merges


@pytest.mark.parametrize("kwargs", [
    {"texts": TEXT, "vocab_size": 255}, {"texts": TEXT, "vocab_size": 300.0},
    {"texts": TEXT, "vocab_size": True}, {"texts": TEXT, "vocab_size": 300, "unit": "word"},
    {"texts": 123, "vocab_size": 300}, {"texts": ["ok", 1], "vocab_size": 300},
])  # fmt: skip
def test_bad_training_arguments(kwargs):
    with pytest.raises(ValueError):
        d2l.BPETokenizer.train(**kwargs)


def test_bad_encode_and_decode_arguments(tok):
    for bad in (b"bytes", None, 3):
        with pytest.raises(ValueError):
            tok.encode(bad)
    for bad in ([len(tok)], [-1], [1.0], [True], torch.zeros(2, 2, dtype=torch.long),
                torch.zeros(3)):  # fmt: skip
        with pytest.raises(ValueError):
            tok.decode(bad)


def test_jamo_helpers():
    for ch in ("가", "각", "힣", "a", "ᄀ"):
        assert d2l.join_jamo(d2l.split_jamo(ch)) == ch
    assert d2l.split_jamo("한") == unicodedata.normalize("NFD", "한")


# -- sampling ---------------------------------------------------------------------------------


def _logits(*shape, seed=0):
    z = torch.randn(*shape, generator=d2l.generator(seed))
    z[..., 5] = z.max() + 1  # a tie at the maximum: ids 5 and 7
    z[..., 7] = z[..., 5]
    return z


@pytest.mark.parametrize("shape", [(50,), (4, 50)])
def test_top_k_one_and_tiny_top_p_are_argmax(shape):
    z = _logits(*shape)
    for kwargs in ({"top_k": 1}, {"top_p": 1e-9}, {"top_k": 1, "temperature": 5.0}):
        got = d2l.sample_next_token(z, generator=d2l.generator(1), **kwargs)
        assert got.shape == shape[:-1]
        assert torch.equal(got, z.argmax(-1))


def test_samples_stay_inside_top_k_and_top_p():
    z = torch.tensor([3.0, 2.0, 1.0, 0.0, -1.0])
    gen = d2l.generator(0)
    top2 = {int(d2l.sample_next_token(z, top_k=2, generator=gen)) for _ in range(200)}
    assert top2 == {0, 1}
    p = torch.softmax(z, 0)  # 0.64, 0.24, ...: 0.8 needs the first two
    nucleus = {int(d2l.sample_next_token(z, top_p=0.8, generator=gen)) for _ in range(200)}
    assert nucleus == {0, 1} and p[0] < 0.8 < p[0] + p[1]
    everything = {int(d2l.sample_next_token(z, temperature=50.0, generator=gen))
                  for _ in range(300)}  # fmt: skip
    assert everything == set(range(5))


def test_sampling_is_reproducible_with_a_generator():
    z = _logits(3, 40)
    a = d2l.sample_next_token(z, top_p=0.9, generator=d2l.generator(3))
    b = d2l.sample_next_token(z, top_p=0.9, generator=d2l.generator(3))
    assert torch.equal(a, b) and a.dtype == torch.long


@pytest.mark.parametrize("kwargs", [
    {"temperature": 0}, {"temperature": 0.0}, {"temperature": -0.5},
    {"temperature": float("nan")}, {"temperature": float("inf")}, {"top_k": 0},
    {"top_k": 2.0}, {"top_p": 0.0}, {"top_p": 1.01}, {"top_p": float("nan")},
])  # fmt: skip
def test_bad_sampling_arguments(kwargs):
    with pytest.raises(ValueError):
        d2l.sample_next_token(_logits(10), **kwargs)


@pytest.mark.parametrize("logits", [torch.zeros(2, 3, 4), torch.zeros(()), torch.zeros(2, 0),
                                    torch.ones(5, dtype=torch.long), [0.1, 0.2]])  # fmt: skip
def test_bad_logits(logits):
    with pytest.raises(ValueError):
        d2l.sample_next_token(logits)


# -- the GPT ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def net():
    d2l.set_seed(0)
    return d2l.GPT(vocab_size=50, num_hiddens=32, num_heads=4, num_blks=2, max_len=24).eval()


def test_shapes_and_tying(net):
    X = torch.randint(0, 50, (3, 10), generator=d2l.generator(0))
    assert net(X).shape == (3, 10, 50)
    assert net.head.weight is net.embedding.weight


@pytest.mark.parametrize("t", [0, 5, 9])
def test_causality(net, t):
    X = torch.randint(0, 50, (2, 10), generator=d2l.generator(1))
    Y = X.clone()
    Y[:, t] = (Y[:, t] + 7) % 50
    a, b = net(X), net(Y)
    assert torch.equal(a[:, :t], b[:, :t])
    assert not torch.allclose(a[:, t:], b[:, t:])


def test_causality_on_the_fast_path(net):
    X = torch.randint(0, 50, (2, 10), generator=d2l.generator(2))
    Y = X.clone()
    Y[:, 6] = (Y[:, 6] + 1) % 50
    with d2l.fast_attention(net):
        torch.testing.assert_close(net(X)[:, :6], net(Y)[:, :6], rtol=0, atol=1e-6)


@pytest.mark.parametrize("kwargs", [{"top_k": 1}, {"temperature": 1.0}, {"top_p": 0.8},
                                    {"temperature": 0.7, "top_k": 10}])  # fmt: skip
def test_cached_generation_equals_uncached(net, kwargs):
    prompt = torch.randint(0, 50, (3, 4), generator=d2l.generator(3))
    a = net.generate(prompt, 15, generator=d2l.generator(4), **kwargs)
    b = net.generate(prompt, 15, generator=d2l.generator(4), use_cache=False, **kwargs)
    assert a.shape == (3, 19) and torch.equal(a, b) and torch.equal(a[:, :4], prompt)


def test_cached_logits_equal_full_logits(net):
    X = torch.randint(0, 50, (2, 12), generator=d2l.generator(5))
    full = net(X)
    cache = net.init_cache()
    steps = [net(X[:, :5], cache)] + [net(X[:, i : i + 1], cache) for i in range(5, 12)]
    torch.testing.assert_close(torch.cat(steps, dim=1), full, rtol=1e-5, atol=1e-5)


def _greedy_with_logits(net, prompt, steps, use_cache):
    """Greedy decoding by hand: the tokens and the logits each step chose from."""
    tokens, chosen_from = prompt, []
    cache = net.init_cache() if use_cache else None
    new = prompt
    with torch.no_grad():
        for _ in range(steps):
            logits = (net(new, cache) if use_cache else net(tokens))[:, -1]
            chosen_from.append(logits)
            new = logits.argmax(-1, keepdim=True)
            tokens = torch.cat([tokens, new], dim=1)
    return tokens, torch.stack(chosen_from, 1)


@pytest.mark.parametrize("fast", [False, True])
def test_greedy_generation_with_and_without_the_cache_agree(net, fast):
    prompt = torch.randint(0, 50, (2, 3), generator=d2l.generator(6))
    with d2l.fast_attention(net) if fast else contextlib.nullcontext():
        a, logits_a = _greedy_with_logits(net, prompt, 18, use_cache=True)
        b, logits_b = _greedy_with_logits(net, prompt, 18, use_cache=False)
    assert logits_a.dtype == torch.float32 and torch.equal(a, b)
    torch.testing.assert_close(logits_a, logits_b, rtol=0, atol=1e-5)
    assert torch.equal(net.generate(prompt, 18, top_k=1), a)


def test_the_cache_holds_keys_and_values_per_head_and_block(net):
    cache = net.init_cache()
    net(torch.randint(0, 50, (3, 7), generator=d2l.generator(7)), cache)
    net(torch.randint(0, 50, (3, 1), generator=d2l.generator(8)), cache)
    assert len(cache) == 2 and all(isinstance(c, d2l.KVCache) for c in cache)
    assert all(len(c) == 8 and c.k.shape == c.v.shape == (3, 4, 8, 8) for c in cache)
    # 2 blocks x (keys, values) x 32 features x 4 bytes per token of each sequence
    assert sum(c.num_bytes() for c in cache) == 3 * 8 * 2 * 2 * 32 * 4


@pytest.mark.parametrize("fast", [False, True])
def test_a_cached_step_projects_one_token_and_attends_over_the_context(fast):
    """FLOPs of one cached step: the projections, FFN and output layer cost the same at
    every context length; only attention grows, by 2 (scores) + 2 (weighted sum) FLOPs per
    feature per cached key in each block."""
    d2l.set_seed(0)
    vocab, d, blocks = 40, 16, 3
    model = d2l.GPT(vocab, d, 4, blocks, 64).eval()
    X = torch.randint(0, vocab, (1, 64), generator=d2l.generator(9))

    def step(t, use_cache):
        with torch.no_grad(), d2l.fast_attention(model) if fast else contextlib.nullcontext():
            if not use_cache:
                return d2l.count_flops(lambda: model(X[:, : t + 1]))
            cache = model.init_cache()
            model(X[:, :t], cache)
            return d2l.count_flops(lambda: model(X[:, t : t + 1], cache))

    projections = blocks * (4 * 2 * d * d + 2 * 2 * d * 4 * d) + 2 * d * vocab
    for t in (1, 8, 31, 63):
        attention = blocks * 4 * d * (t + 1)
        assert step(t, True) == projections + attention
        # without the cache all t + 1 positions are projected again
        assert step(t, False) == (t + 1) * projections + blocks * 4 * d * (t + 1) ** 2


def test_generate_accepts_one_prompt_and_restores_training_mode():
    d2l.set_seed(0)
    model = d2l.GPT(30, 16, 2, 1, 12, dropout=0.1)
    assert model.training
    out = model.generate(torch.tensor([1, 2, 3]), 5, top_k=1)
    assert out.shape == (8,) and model.training
    assert model.generate(torch.tensor([[1, 2]]), 0).tolist() == [[1, 2]]


@pytest.mark.parametrize("X, match", [
    (torch.tensor([[0, 50]]), r"\[0, 50\)"), (torch.tensor([[-1, 0]]), r"\[0, 50\)"),
    (torch.zeros(1, 25, dtype=torch.long), "max_len"), (torch.zeros(1, 3), "integer"),
    (torch.zeros(3, dtype=torch.long), "batch, steps"),
    (torch.zeros(1, 0, dtype=torch.long), "one"),
])  # fmt: skip
def test_bad_tokens(net, X, match):
    with pytest.raises(ValueError, match=match):
        net(X)


def test_bad_generate_arguments(net):
    prompt = torch.tensor([[1, 2, 3]])
    for kwargs in ({"max_new_tokens": 22}, {"max_new_tokens": -1}, {"max_new_tokens": 2.0},
                   {"max_new_tokens": 2, "temperature": 0}):  # fmt: skip
        with pytest.raises(ValueError):
            net.generate(prompt, **kwargs)
    with pytest.raises(ValueError, match="prompt"):
        net.generate(torch.tensor([[1, 99]]), 0)
    with pytest.raises(ValueError):
        net.generate(prompt.float(), 1)


@pytest.mark.parametrize("kwargs", [
    {"vocab_size": 0}, {"num_hiddens": 30, "num_heads": 4}, {"num_blks": 0}, {"max_len": 0},
    {"dropout": 1.0}, {"dropout": -0.1}, {"vocab_size": 10.0},
])  # fmt: skip
def test_bad_constructor_arguments(kwargs):
    args = {"vocab_size": 10, "num_hiddens": 8, "num_heads": 2, "num_blks": 1, "max_len": 8}
    with pytest.raises(ValueError):
        d2l.GPT(**{**args, **kwargs})


# -- the book's prose -------------------------------------------------------------------------


def test_book_prose_loads_per_language():
    ko, en = d2l.load_book_prose("ko"), d2l.load_book_prose("en")
    assert sum(map(len, ko)) > 100_000 and sum(map(len, en)) > 100_000
    hangul = sum("가" <= ch <= "힣" for p in ko for ch in p)
    assert hangul > 0.5 * sum(map(len, ko))
    assert not any("{ref}" in p or "```" in p or "$$" in p for p in ko + en)
    with pytest.raises(ValueError):
        d2l.load_book_prose("fr")


def test_book_prose_is_in_sync_with_the_chapters():
    """After editing chapter prose, run `python -m tools.prose` (the file ships in the wheel)."""
    assert prose.TARGET.read_text(encoding="utf-8") == prose.render(prose.build()), (
        "d2lite/book_prose.json is out of date: run `python -m tools.prose`")


def test_strip_markup():
    text = ("{ref}`어텐션 <term-attention>`과 **굵게**, `code`, $x_t$, $\\alpha$ "
            "{cite:p}`Vaswani2017` [링크](https://x.org) {numref}`%s장 <chap-rnn>`")
    assert prose.strip_markup(text) == "어텐션과 굵게, code, x_t, 링크 장"


def test_lm_benchmark_measures_both_models_and_writes_its_table():
    from tools import bench_lm

    config = {"vocab_size": 64, "num_hiddens": 16, "num_heads": 2, "num_blks": 1,
              "max_len": 8, "batch_size": 2}  # fmt: skip
    result = bench_lm.measure(config)
    assert result["ours"] > 0 and result["torch"] > 0
    assert result["ours_params"] == result["torch_params"]  # the same model, twice
    assert "`d2l.GPT` (fast path)" in bench_lm.table(result)
