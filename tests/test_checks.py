"""Bad inputs to every public tensor-facing callable raise a ValueError that names the argument
and the expected and received shape, dtype or range (d2lite.checks and its callers).

``BAD`` is the table: one row per (callable, bad input). ``test_every_public_callable_has_a_row``
fails when a module gains a public callable that neither has a row nor is listed in ``EXEMPT``
with the reason it needs none.
"""

import importlib

import pytest
import torch
from torch import nn

import d2lite as d2l
from d2lite import checks

D, H = 8, 2
X = torch.randn(2, 5, D)
TOKENS = torch.randint(0, 10, (2, 5))
LONG = torch.ones(2, 5, D, dtype=torch.long)


def _enc_state():
    enc = d2l.Seq2SeqEncoder(10, 4, D, 1)
    return enc(TOKENS, torch.tensor([5, 3]))


def _transformer_state():
    return [torch.randn(2, 5, D), torch.tensor([5, 3]), [None]]


# (callable name, thunk, regex the message must match)
BAD = [
    # -- chapter 1, 2: recurrent layers
    ("RNNScratch", lambda: d2l.RNNScratch(0, 4), r"num_inputs must be a positive int, got int 0"),
    (
        "RNNScratch",
        lambda: d2l.RNNScratch(3, 4)(torch.randn(5, 2, 4)),
        r"inputs must have shape \(steps, batch, 3\), got shape \(5, 2, 4\)",
    ),
    (
        "RNNScratch",
        lambda: d2l.RNNScratch(3, 4)(torch.ones(5, 2, 3, dtype=torch.long)),
        r"inputs must be a float tensor .*dtype torch.int64",
    ),
    ("RNNScratch", lambda: d2l.RNNScratch(3, 4)(torch.randn(0, 2, 3)), r"inputs must not be empty"),
    ("BiRNNScratch", lambda: d2l.BiRNNScratch(3, 0), r"num_hiddens must be a positive int"),
    (
        "BiRNNScratch",
        lambda: d2l.BiRNNScratch(3, 4)(torch.randn(5, 3)),
        r"inputs must have shape \(steps, batch, 3\)",
    ),
    (
        "input_gradient_norms",
        lambda: d2l.input_gradient_norms(d2l.RNNScratch(3, 4), torch.randn(5, 2, 3)),
        r"inputs must have shape \(steps, 1, features\), got \(5, 2, 3\)",
    ),
    (
        "LSTMScratch",
        lambda: d2l.LSTMScratch(3, 0),
        r"num_hiddens must be a positive int, got int 0",
    ),
    (
        "LSTMScratch",
        lambda: d2l.LSTMScratch(3, 4)(torch.randn(5, 2, 3), (torch.zeros(2, 4), torch.zeros(2, 5))),
        r"C must have shape \(2, 4\), got shape \(2, 5\)",
    ),
    (
        "bptt_forward",
        lambda: d2l.bptt_forward(
            lambda x, h: h, torch.randn(0, 2, 3), torch.zeros(2, 4), torch.ones(0)
        ),
        r"inputs must have shape \(steps, batch, features\), none 0, got \(0, 2, 3\)",
    ),
    (
        "scale_grad",
        lambda: d2l.scale_grad(torch.randn(3, 2), torch.ones(2)),
        r"scale must have shape",
    ),
    (
        "truncation_multipliers",
        lambda: d2l.truncation_multipliers(0, "full"),
        r"num_steps must be a positive int, got int 0",
    ),
    (
        "grad_clipping",
        lambda: d2l.grad_clipping(d2l.RNNScratch(3, 4), 0),
        r"theta must be a finite real number > 0",
    ),
    # -- chapter 3: attention pooling
    (
        "nadaraya_watson",
        lambda: d2l.nadaraya_watson(torch.randn(3), torch.randn(4), torch.randn(5)),
        r"y_train must have shape \(3,\) or \(3, v\), got \(4,\)",
    ),
    # -- chapter 4: masked softmax and scoring functions
    (
        "fused_attention",
        lambda: d2l.fused_attention(*(torch.randn(2, 3, 4) for _ in range(3))),
        r"queries must have shape \(batch, heads, n, d_q\), got shape \(2, 3, 4\)",
    ),
    (
        "fused_attention",
        lambda: d2l.fused_attention(torch.randn(1, 2, 3, 4), torch.randn(1, 2, 5, 4),
                                    torch.randn(1, 2, 4, 4)),  # fmt: skip
        r"values must have one row per key",
    ),
    (
        "fast_attention",
        lambda: d2l.fast_attention([1, 2]).__enter__(),
        r"fast_attention expects an nn.Module, got list",
    ),
    (
        "masked_softmax",
        lambda: d2l.masked_softmax(torch.randn(2, 3, 4), torch.tensor([5, 1])),
        r"valid_lens must lie in \[0, 4\] for 4 keys, got \[5, 1\]",
    ),
    (
        "masked_softmax",
        lambda: d2l.masked_softmax(torch.randn(2, 3, 4), torch.tensor([-1, 1])),
        r"valid_lens must lie in \[0, 4\]",
    ),
    (
        "masked_softmax",
        lambda: d2l.masked_softmax(torch.randn(2, 3, 4), torch.tensor([1.5, 1])),
        r"valid_lens must hold whole numbers, got \[1.5, 1.0\]",
    ),
    (
        "masked_softmax",
        lambda: d2l.masked_softmax(torch.randn(2, 3, 4), torch.tensor([True, True])),
        r"valid_lens must hold integers, got shape \(2,\), dtype torch.bool",
    ),
    (
        "masked_softmax",
        lambda: d2l.masked_softmax(torch.ones(2, 3, 4, dtype=torch.long), torch.tensor([1, 1])),
        r"X must be a float tensor of shape \(batch, queries, keys\), .*dtype torch.int64",
    ),
    (
        "DotProductAttention",
        lambda: d2l.DotProductAttention()(X, X, X, torch.tensor([6, 1])),
        r"valid_lens must lie in \[0, 5\] for 5 keys, got \[6, 1\]",
    ),
    (
        "DotProductAttention",
        lambda: d2l.DotProductAttention()(LONG, LONG, LONG),
        r"queries must be a float tensor of shape \(batch, n, d_q\)",
    ),
    (
        "DotProductAttention",
        lambda: d2l.DotProductAttention()(X[:, :0], X, X),
        r"queries must not be empty",
    ),
    ("AdditiveAttention", lambda: d2l.AdditiveAttention(0), r"num_hiddens must be a positive int"),
    (
        "AdditiveAttention",
        lambda: d2l.AdditiveAttention(4)(X, X, X, torch.tensor([9, 1])),
        r"valid_lens must lie in \[0, 5\]",
    ),
    # -- chapter 5: Bahdanau decoder and the seq2seq toolkit
    (
        "Seq2SeqEncoder",
        lambda: d2l.Seq2SeqEncoder(10, 0, D, 1),
        r"embed_size must be a positive int",
    ),
    (
        "Seq2SeqEncoder",
        lambda: d2l.Seq2SeqEncoder(10, 4, D, 1)(TOKENS.float()),
        r"X must hold integer token ids, got shape \(2, 5\), dtype torch.float32",
    ),
    (
        "Seq2SeqEncoder",
        lambda: d2l.Seq2SeqEncoder(10, 4, D, 1)(TOKENS, torch.tensor([6, 1])),
        r"valid_lens must lie in \[1, 5\]",
    ),
    ("Seq2SeqDecoder", lambda: d2l.Seq2SeqDecoder(10, 4, D, 0), r"num_layers must be a positive"),
    (
        "Seq2SeqDecoder",
        lambda: d2l.Seq2SeqDecoder(10, 4, D, 1)(TOKENS[:, :0], None),
        r"X must hold at least one sequence of one step",
    ),
    (
        "Seq2SeqAttentionDecoder",
        lambda: (lambda dec: dec(TOKENS, dec.init_state(_enc_state(), torch.tensor([6, 1]))))(
            d2l.Seq2SeqAttentionDecoder(10, 4, D, 1)
        ),  # the lengths' values are checked at forward's door
        r"enc_valid_lens must lie in \[1, 5\]",
    ),
    (
        "Seq2SeqAttentionDecoder",
        lambda: d2l.Seq2SeqAttentionDecoder(10, 4, D, 1)(TOKENS.float(), (*_enc_state(), None)),
        r"X must hold integer token ids",
    ),
    (
        "masked_cross_entropy",
        lambda: d2l.masked_cross_entropy(torch.randn(2, 3, 5), TOKENS[:, :3], torch.tensor([4, 1])),
        r"valid_lens must lie in \[0, 3\]",
    ),
    (
        "masked_cross_entropy",
        lambda: d2l.masked_cross_entropy(
            torch.randn(2, 3, 5), TOKENS[:, :3].float(), torch.tensor([3, 1])
        ),
        r"labels must hold integer token ids",
    ),
    (
        "MaskedSoftmaxCELoss",
        lambda: d2l.MaskedSoftmaxCELoss()(torch.randn(2, 3), TOKENS[:, :3], torch.tensor([3, 1])),
        r"logits must have shape \(batch, steps, vocab\), got shape \(2, 3\)",
    ),
    (
        "predict_seq2seq",
        lambda: d2l.predict_seq2seq(None, ["a"], d2l.Vocab(["a"]), d2l.Vocab(["a"]), 4),
        r"src_sentence must be a str, got list",
    ),
    (
        "translate",
        lambda: d2l.translate(None, "a b", d2l.Vocab(["a"]), d2l.Vocab(["a"]), 4),
        r"sentences must be a list of str, got one str",
    ),
    ("bleu", lambda: d2l.bleu("a b", "a b", k=0), r"k must be a positive int, got int 0"),
    ("corpus_bleu", lambda: d2l.corpus_bleu(["a"], ["a"], max_n=0), r"max_n must be a positive"),
    ("chrf", lambda: d2l.chrf(["a"], ["a"], char_order=0), r"char_order must be a positive"),
    ("evaluate_bleu", lambda: d2l.evaluate_bleu(None, [], None, None, 4), r"no pairs to evaluate"),
    # -- chapter 6: multi-head attention
    (
        "MultiHeadAttention",
        lambda: d2l.MultiHeadAttention(D, 0),
        r"num_heads must be a positive int",
    ),
    (
        "MultiHeadAttention",
        lambda: d2l.MultiHeadAttention(D, 3),
        r"num_hiddens must be divisible by num_heads=3 .*got num_hiddens=8",
    ),
    (
        "MultiHeadAttention",
        lambda: d2l.MultiHeadAttention(D, H)(X, X, X, torch.tensor([6, 1])),
        r"valid_lens must lie in \[0, 5\] for 5 keys, got \[6, 1\]",
    ),
    (
        "MultiHeadAttention",
        lambda: d2l.MultiHeadAttention(D, H, query_size=D)(X[..., :4], X, X),
        r"queries must have 8 features \(last axis\), got shape \(2, 5, 4\)",
    ),
    (
        "transpose_qkv",
        lambda: d2l.transpose_qkv(X, 0),
        r"num_heads must be a positive int, got int 0",
    ),
    ("transpose_output", lambda: d2l.transpose_output(X, 0), r"num_heads must be a positive int"),
    # -- chapter 7: positional encoding and local attention
    (
        "PositionalEncoding",
        lambda: d2l.PositionalEncoding(0),
        r"num_hiddens must be a positive int",
    ),
    (
        "local_attention_mask",
        lambda: d2l.local_attention_mask(4, -1),
        r"window must be a non-negative int",
    ),
    ("local_attention", lambda: d2l.local_attention(X, X, X, -1), r"window must be a non-negative"),
    (
        "local_attention",
        lambda: d2l.local_attention(LONG, LONG, LONG, 1),
        r"queries must be a float tensor",
    ),
    ("PositionalEncoding", lambda: d2l.PositionalEncoding(D)(LONG), r"X must be a float tensor"),
    ("PositionalEncoding", lambda: d2l.PositionalEncoding(D)(X[:, :0]), r"X must not be empty"),
    # -- chapter 8: the Transformer
    (
        "PositionWiseFFN",
        lambda: d2l.PositionWiseFFN(0, 4),
        r"ffn_num_hiddens must be a positive int",
    ),
    ("PositionWiseFFN", lambda: d2l.PositionWiseFFN(8, 4)(LONG), r"X must be a float tensor"),
    ("AddNorm", lambda: d2l.AddNorm(D, 0.0)(X, X[:, :3]), r"equal shapes"),
    ("AddNorm", lambda: d2l.AddNorm(D, 0.0)(LONG, LONG), r"X must be a float tensor"),
    (
        "TransformerEncoderBlock",
        lambda: d2l.TransformerEncoderBlock(D, 16, 3, 0.0),
        r"num_hiddens must be divisible by num_heads=3",
    ),
    (
        "TransformerEncoderBlock",
        lambda: d2l.TransformerEncoderBlock(D, 16, H, 0.0)(X, torch.tensor([6, 1])),
        r"valid_lens must lie in \[1, 5\]",
    ),
    (
        "TransformerEncoder",
        lambda: d2l.TransformerEncoder(10, D, 16, H, 0, 0.0),
        r"num_blks must be a positive int, got int 0",
    ),
    (
        "TransformerEncoder",
        lambda: d2l.TransformerEncoder(10, D, 16, H, 1, 0.0)(TOKENS.float()),
        r"X must hold integer token ids",
    ),
    (
        "TransformerEncoder",
        lambda: d2l.TransformerEncoder(10, D, 16, H, 1, 0.0)(TOKENS, torch.tensor([5.5, 1.0])),
        r"valid_lens must hold whole numbers",
    ),
    (
        "TransformerDecoderBlock",
        lambda: d2l.TransformerDecoderBlock(D, 16, H, 0.0, 0)(X, [X, torch.tensor([6, 1]), [None]]),
        r"enc_valid_lens must lie in \[1, 5\]",
    ),
    (
        "TransformerDecoder",
        lambda: d2l.TransformerDecoder(10, D, 16, H, 1, 0.0)(TOKENS[:, :0], _transformer_state()),
        r"X must hold at least one sequence of one step",
    ),
    (
        "TransformerDecoder",
        lambda: d2l.TransformerDecoder(10, D, 16, 0, 1, 0.0),
        r"num_heads must be a positive int",
    ),
    # -- chapter 9: the Vision Transformer
    (
        "PatchEmbedding",
        lambda: d2l.PatchEmbedding(8, 4, D)(torch.ones(2, 1, 8, 8, dtype=torch.long)),
        r"X must be a float tensor of shape \(batch, channels, height, width\)",
    ),
    ("PatchEmbedding", lambda: d2l.PatchEmbedding(8, 0, D),
     r"patch_size must be a positive int, got int 0"),
    ("ViTMLP", lambda: d2l.ViTMLP(0, D), r"mlp_num_hiddens must be a positive int"),
    ("ViTBlock", lambda: d2l.ViTBlock(D, D, 16, 3, 0.0), r"num_hiddens must be divisible by"),
    (
        "ViT",
        lambda: d2l.ViT(8, 4, D, 16, 3, 1, 0.0, 0.0, num_classes=10),
        r"num_hiddens must be divisible by num_heads=3",
    ),
    # -- chapter 11: efficient attention
    (
        "tiled_attention",
        lambda: d2l.tiled_attention(X, X, X, block_size=0),
        r"block_size must be a positive int, got int 0",
    ),
    (
        "tiled_attention",
        lambda: d2l.tiled_attention(X, X[..., :4], X),
        r"need q \(\.\.\., n, d\), k \(\.\.\., m, d\), .* got \(2, 5, 8\), \(2, 5, 4\)",
    ),
    (
        "KVCache",
        lambda: d2l.KVCache().append(torch.randn(1, 2, 3, 4), torch.randn(1, 2, 2, 4)),
        r"k and v disagree: \(1, 2, 3, 4\) vs \(1, 2, 2, 4\)",
    ),
    ("RotaryEmbedding", lambda: d2l.RotaryEmbedding(7), r"dim must be a positive even int, got 7"),
    (
        "RotaryEmbedding",
        lambda: d2l.RotaryEmbedding(D)(torch.randn(2, 5, 6)),
        r"expected a float tensor \(\.\.\., seq, 8\), got \(2, 5, 6\)",
    ),
    (
        "GroupedQueryAttention",
        lambda: d2l.GroupedQueryAttention(D, 4, 3),
        r"num_heads=4 not divisible by num_kv_heads=3",
    ),
    (
        "GroupedQueryAttention",
        lambda: d2l.GroupedQueryAttention(D, H, 1)(X, X, X, torch.tensor([0, 5])),
        r"valid_lens must lie in \[1, 5\] for 5 keys, got \[0, 5\]",
    ),
    (
        "GroupedQueryAttention",
        lambda: d2l.GroupedQueryAttention(D, H, 1)(X, X, X, torch.tensor([[1, 2]])),
        r"valid_lens must have shape \(2,\) or \(2, 5\), got shape \(1, 2\)",
    ),
    (
        "GroupedQueryAttention",
        lambda: d2l.GroupedQueryAttention(D, H, 1)(LONG, X, X),
        r"queries must be a float tensor of shape \(batch, steps, 8\)",
    ),
    ("RMSNorm", lambda: d2l.RMSNorm(D)(torch.randn(2, 4)),
     r"expected a float tensor with last dim 8, got \(2, 4\)"),
    (
        "GPT",
        lambda: d2l.GPT(10, D, H, 1, 8)(TOKENS[0] % 10),
        r"tokens must be token ids of shape \(batch, steps\), got shape \(5,\)",
    ),
    # -- chapter 10: tokenization and decoder-only language models
    ("BPETokenizer", lambda: d2l.BPETokenizer.train("ab ab", 100),
     r"vocab_size must be an int >= 256, got int 100"),
    ("BPETokenizer", lambda: d2l.BPETokenizer("word", [], []), r"unit must be one of"),
    ("sample_next_token", lambda: d2l.sample_next_token(torch.randn(4), temperature=0),
     r"temperature must be a finite real number > 0, got int 0"),
    ("sample_next_token", lambda: d2l.sample_next_token(torch.randn(2, 3, 4)),
     r"logits must have shape \(vocab,\) or \(batch, vocab\), got \(2, 3, 4\)"),
    ("GPTBlock", lambda: d2l.GPTBlock(D, H, 0.0)(LONG), r"X must be a float tensor"),
    ("GPT", lambda: d2l.GPT(10, D, H, 1, 4)(TOKENS[:, :5] % 10),
     r"tokens: 5 positions exceed max_len 4"),
    ("GPT", lambda: d2l.GPT(3, D, H, 1, 8)(torch.tensor([[0, 3]])),
     r"tokens must hold token ids in \[0, 3\)"),
    # -- chapter 2's side-by-side training (d2lite.budget; more rows in tests/test_bptt.py)
    ("stack_parameters", lambda: d2l.stack_parameters([]), r"models must be a non-empty"),
    ("stack_parameters", lambda: d2l.stack_parameters([nn.Linear(2, 3), nn.Linear(3, 3)]),
     r"models must have equal parameter names and shapes"),
    ("inputs_part", lambda: d2l.inputs_part(torch.zeros(3, 2, 4), torch.zeros(2, 4, 5),
                                            torch.zeros(2, 1, 5)),
     r"X must have shape \(steps, S, batch, inputs\), got shape \(3, 2, 4\)"),
    ("inputs_part", lambda: d2l.inputs_part(torch.zeros(3, 2, 1, 4), torch.zeros(2, 5, 5),
                                            torch.zeros(2, 1, 5)),
     r"W must have shape \(2, 4, outputs\), got \(2, 5, 5\)"),
    ("run_side_by_side", lambda: d2l.run_side_by_side("LSTM", {}, torch.zeros(3, 2, 1, 4)),
     r"params of kind 'LSTM' lack"),
    ("run_side_by_side", lambda: d2l.run_side_by_side("CNN", {}, torch.zeros(3, 2, 1, 4)),
     r"kind must be one of"),
    ("train_side_by_side", lambda: d2l.train_side_by_side(
        "RNN", [nn.Linear(2, 2)], None, [torch.Generator()], 5, (torch.zeros(3, 1, 2),
                                                                  torch.zeros(1)), eval_every=5),
     r"make_batch must be a function of a generator"),
]

# Public callables of the tensor-facing modules that need no row here, and why.
EXEMPT = {
    "Encoder": "abstract interface: forward raises NotImplementedError",
    "Decoder": "abstract interface",
    "AttentionDecoder": "abstract interface",
    "EncoderDecoder": "delegates to its encoder and decoder, which validate",
    "Seq2Seq": "delegates to its encoder and decoder, which validate",
    "gaussian_kernel": "elementwise on any float tensor: every shape is valid",
    "boxcar_kernel": "elementwise on any float tensor",
    "constant_kernel": "elementwise on any float tensor",
    "triangular_kernel": "elementwise on any float tensor",
    "epanechnikov_kernel": "elementwise on any float tensor",
    "PeakMemory": "takes no arguments; it only watches the operators run inside its block",
    "split_jamo": "str -> str: any character is valid (non-syllables come back unchanged)",
    "join_jamo": "str -> str: any text is valid (only initial + medial runs are joined)",
    "learn_merges": "takes the id lists BPETokenizer.train builds; train validates its inputs",
}
MODULES = ["rnn", "bptt", "pooling", "attention", "seq2seq", "bahdanau", "multihead",
           "positional", "transformer", "vit", "lm", "efficient", "budget"]  # fmt: skip


@pytest.mark.parametrize(("name", "thunk", "pattern"), BAD,
                         ids=[f"{row[0]}-{i}" for i, row in enumerate(BAD)])  # fmt: skip
def test_bad_input_raises_a_clear_value_error(name, thunk, pattern):
    with pytest.raises(ValueError, match=pattern):
        thunk()


def test_every_public_callable_has_a_row():
    covered = {row[0] for row in BAD}
    public = {
        name
        for module in MODULES
        for name in importlib.import_module(f"d2lite.{module}").__all__
        if callable(getattr(d2l, name))
    }
    missing = sorted(public - covered - set(EXEMPT))
    assert not missing, (
        f"public callables without a bad-input row in tests/test_checks.py: {missing}"
    )
    assert not (covered | set(EXEMPT)) - public, "rows or exemptions for names that are gone"


# -- the checks themselves, on good input ----------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8])
def test_tokens_of_any_integer_dtype_are_accepted(dtype):
    assert checks.check_tokens(TOKENS.to(dtype)).dtype == dtype


def test_valid_lens_are_converted_to_integers():
    lens = checks.check_valid_lens(torch.tensor([3.0, 0.0]), 2, 5)
    assert lens.dtype == torch.int64 and lens.tolist() == [3, 0]
    assert checks.check_valid_lens([2, 5], 2, 5).tolist() == [2, 5]
    assert checks.check_valid_lens(torch.tensor([[1, 2, 3]]), 1, 3, queries=3).shape == (1, 3)
    assert checks.check_valid_lens(None, 2, 5) is None
    with pytest.raises(ValueError, match=r"valid_lens must have shape \(1,\) or \(1, 3\)"):
        checks.check_valid_lens(torch.tensor([[1, 2]]), 1, 3, queries=3)
    with pytest.raises(ValueError, match=r"lens must lie in \[1, 5\]"):
        checks.check_valid_lens(torch.tensor([0]), 1, 5, min_len=1, name="lens")


def test_integral_float_lengths_give_the_same_attention_as_integers():
    attention = d2l.DotProductAttention()
    expected = attention(X, X, X, torch.tensor([5, 2]))
    assert torch.equal(attention(X, X, X, torch.tensor([5.0, 2.0])), expected)
    assert torch.equal(attention(X, X, X, torch.tensor([5, 2], dtype=torch.int32)), expected)


def test_positive_and_divisible():
    assert checks.check_positive(3, "n") == 3
    for bad in (0, -1, 2.0, True, "3", None):
        with pytest.raises(ValueError, match="n must be a positive int"):
            checks.check_positive(bad, "n")
    checks.check_divisible(8, 2)
    with pytest.raises(ValueError, match="num_heads must be a positive int"):
        checks.check_divisible(8, 0)
