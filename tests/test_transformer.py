"""Tests for the Transformer of chapter 8 (d2lite/transformer.py)."""

import math

import pytest
import torch
from torch import nn

import d2lite as d2l

D, FFN, HEADS = 24, 48, 4


@pytest.fixture(autouse=True)
def _seed():
    d2l.set_seed(0)


def _causal_lens(batch: int, steps: int) -> torch.Tensor:
    return torch.arange(1, steps + 1).repeat(batch, 1)


# -- shapes ----------------------------------------------------------------------------------


def test_d2l_shapes():
    X, valid_lens = torch.ones((2, 100, 24)), torch.tensor([3, 2])
    blk = d2l.TransformerEncoderBlock(24, 48, 8, 0.5)
    blk.eval()
    assert blk(X, valid_lens).shape == (2, 100, 24)
    assert blk.attention_weights.shape == (2, 8, 100, 100)

    encoder = d2l.TransformerEncoder(200, 24, 48, 8, 2, 0.5)
    encoder.eval()
    tokens = torch.ones((2, 100), dtype=torch.long)
    assert encoder(tokens, valid_lens).shape == (2, 100, 24)
    assert encoder.attention_weights.shape == (2, 2, 8, 100, 100)

    dec_blk = d2l.TransformerDecoderBlock(24, 48, 8, 0.5, 0)
    dec_blk.eval()
    state = [blk(X, valid_lens), valid_lens, [None]]
    assert dec_blk(X, state)[0].shape == (2, 100, 24)

    decoder = d2l.TransformerDecoder(150, 24, 48, 8, 2, 0.5)
    decoder.eval()
    state = decoder.init_state(encoder(tokens, valid_lens), valid_lens)
    logits, state = decoder(torch.ones((2, 7), dtype=torch.long), state)
    assert logits.shape == (2, 7, 150)
    self_w, cross_w = decoder.attention_weights
    assert self_w.shape == (2, 2, 8, 7, 7) and cross_w.shape == (2, 2, 8, 7, 100)
    assert all(c.shape == (2, 7, 24) for c in state[2])  # the cache holds the 7 inputs


def test_ffn_and_addnorm():
    ffn = d2l.PositionWiseFFN(4, 8)  # lazy input size, as in d2l
    X = torch.randn(2, 3, 4)
    assert ffn(X).shape == (2, 3, 8)
    # positionwise: position 1 alone gives what it gives inside the sequence
    assert torch.allclose(ffn(X)[:, 1], ffn(X[:, 1:2])[:, 0], atol=1e-6)
    ffn = d2l.PositionWiseFFN(16, 4, num_inputs=4)
    assert isinstance(ffn.dense1, nn.Linear) and ffn.dense1.in_features == 4
    add_norm = d2l.AddNorm(4, 0.0)
    out = add_norm(torch.randn(2, 3, 4), torch.randn(2, 3, 4))
    assert torch.allclose(out.mean(-1), torch.zeros(2, 3), atol=1e-6)
    assert torch.allclose(out.var(-1, unbiased=False), torch.ones(2, 3), atol=1e-3)


def test_layer_norm_vs_batch_norm():
    X = torch.tensor([[1.0, 2.0], [2.0, 3.0]])
    assert torch.allclose(nn.LayerNorm(2)(X), torch.tensor([[-1.0, 1.0], [-1.0, 1.0]]), atol=1e-4)
    bn = nn.BatchNorm1d(2).train()
    assert torch.allclose(bn(X), torch.tensor([[-1.0, -1.0], [1.0, 1.0]]), atol=1e-4)


# -- masks, numerically ----------------------------------------------------------------------


def test_padding_mask_encoder():
    encoder = d2l.TransformerEncoder(50, D, FFN, HEADS, 2, 0.0).eval()
    tokens = torch.randint(4, 50, (3, 10))
    lens = torch.tensor([10, 4, 1])
    noisy = tokens.clone()
    for b, n in enumerate(lens.tolist()):
        noisy[b, n:] = torch.randint(4, 50, (10 - n,))
    with torch.no_grad():
        out, out_noisy = encoder(tokens, lens), encoder(noisy, lens)
        weights = encoder.attention_weights
    for b, n in enumerate(lens.tolist()):
        assert torch.allclose(out[b, :n], out_noisy[b, :n], atol=1e-5)
        assert (weights[b, ..., n:] == 0).all()
    assert torch.allclose(weights.sum(-1), torch.ones(weights.shape[:-1]), atol=1e-5)
    assert not torch.allclose(out[1, 4:], out_noisy[1, 4:], atol=1e-3)  # padding did change


def test_causal_mask_and_source_padding_in_the_decoder():
    encoder = d2l.TransformerEncoder(40, D, FFN, HEADS, 2, 0.0).eval()
    decoder = d2l.TransformerDecoder(30, D, FFN, HEADS, 2, 0.0).eval()
    src, src_lens = torch.randint(0, 40, (2, 6)), torch.tensor([6, 3])
    tgt = torch.randint(0, 30, (2, 8))
    with torch.no_grad():
        enc = encoder(src, src_lens)
        logits, _ = decoder(tgt, decoder.init_state(enc, src_lens))
        self_w, cross_w = decoder.attention_weights
        assert torch.triu(self_w, diagonal=1).abs().max() == 0
        assert cross_w[1, ..., 3:].abs().max() == 0
        for t in range(7):
            changed = tgt.clone()
            changed[:, t + 1 :] = (tgt[:, t + 1 :] + 1) % 30
            new, _ = decoder(changed, decoder.init_state(enc, src_lens))
            assert torch.allclose(new[:, : t + 1], logits[:, : t + 1], atol=1e-5)
            assert not torch.allclose(new[:, t + 1 :], logits[:, t + 1 :], atol=1e-3)
        # padding in the source is invisible to the decoder
        src2 = src.clone()
        src2[1, 3:] = (src[1, 3:] + 1) % 40
        enc2 = encoder(src2, src_lens)
        logits2, _ = decoder(tgt, decoder.init_state(enc2, src_lens))
        assert torch.allclose(logits2[1], logits[1], atol=1e-5)


def test_incremental_decoding_matches_full_pass():
    encoder = d2l.TransformerEncoder(40, D, FFN, HEADS, 2, 0.0).eval()
    decoder = d2l.TransformerDecoder(30, D, FFN, HEADS, 2, 0.0).eval()
    src, src_lens = torch.randint(0, 40, (3, 5)), torch.tensor([5, 2, 4])
    tgt = torch.randint(0, 30, (3, 9))
    with torch.no_grad():
        enc = encoder(src, src_lens)
        full, _ = decoder(tgt, decoder.init_state(enc, src_lens))
        state = decoder.init_state(enc, src_lens)
        steps = [decoder(tgt[:, t : t + 1], state)[0] for t in range(9)]
        # chunks of several tokens after a cache work too
        state = decoder.init_state(enc, src_lens)
        chunks = [decoder(tgt[:, :4], state)[0], decoder(tgt[:, 4:], state)[0]]
    assert torch.allclose(torch.cat(steps, 1), full, atol=1e-5)
    assert torch.allclose(torch.cat(chunks, 1), full, atol=1e-5)


# -- equality with torch.nn pieces -----------------------------------------------------------


def _copy_mha(ours, theirs: nn.MultiheadAttention, bias: bool) -> None:
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight]))
        theirs.out_proj.weight.copy_(ours.W_o.weight)
        if bias:
            theirs.in_proj_bias.copy_(torch.cat([ours.W_q.bias, ours.W_k.bias, ours.W_v.bias]))
            theirs.out_proj.bias.copy_(ours.W_o.bias)
        else:
            theirs.in_proj_bias.zero_()
            theirs.out_proj.bias.zero_()


def _copy_linear_norm(pairs) -> None:
    with torch.no_grad():
        for ours, theirs in pairs:
            theirs.weight.copy_(ours.weight)
            theirs.bias.copy_(ours.bias)


def _reference_encoder_layer(blk, bias: bool) -> nn.TransformerEncoderLayer:
    ref = nn.TransformerEncoderLayer(D, HEADS, FFN, dropout=0.0, batch_first=True)
    _copy_mha(blk.attention, ref.self_attn, bias)
    _copy_linear_norm([(blk.ffn.dense1, ref.linear1), (blk.ffn.dense2, ref.linear2),
                       (blk.addnorm1.ln, ref.norm1), (blk.addnorm2.ln, ref.norm2)])  # fmt: skip
    return ref.train()  # dropout 0; training mode keeps PyTorch off its fused fast path


def _reference_decoder_layer(blk) -> nn.TransformerDecoderLayer:
    ref = nn.TransformerDecoderLayer(D, HEADS, FFN, dropout=0.0, batch_first=True)
    _copy_mha(blk.attention1, ref.self_attn, bias=False)
    _copy_mha(blk.attention2, ref.multihead_attn, bias=False)
    _copy_linear_norm([(blk.ffn.dense1, ref.linear1), (blk.ffn.dense2, ref.linear2),
                       (blk.addnorm1.ln, ref.norm1), (blk.addnorm2.ln, ref.norm2),
                       (blk.addnorm3.ln, ref.norm3)])  # fmt: skip
    return ref.train()


def _randomize_norms(module: nn.Module) -> None:
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, nn.LayerNorm):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)


@pytest.mark.parametrize("bias", [False, True])
def test_encoder_block_equals_torch_layer(bias):
    blk = d2l.TransformerEncoderBlock(D, FFN, HEADS, 0.0, use_bias=bias)
    _randomize_norms(blk)
    ref = _reference_encoder_layer(blk, bias)
    X, lens = torch.randn(3, 7, D), torch.tensor([7, 3, 5])
    pad = torch.arange(7) >= lens[:, None]  # PyTorch: True = padding, ignored
    out = blk(X, lens)
    expected = ref(X, src_key_padding_mask=pad)
    assert torch.allclose(out, expected, atol=1e-5)
    assert torch.allclose(blk(X, None), ref(X), atol=1e-5)


def test_decoder_block_equals_torch_layer():
    blk = d2l.TransformerDecoderBlock(D, FFN, HEADS, 0.0, 0)
    _randomize_norms(blk)
    ref = _reference_decoder_layer(blk)
    X, memory, mem_lens = torch.randn(2, 6, D), torch.randn(2, 9, D), torch.tensor([9, 4])
    out, _ = blk(X, [memory, mem_lens, [None]])
    causal = nn.Transformer.generate_square_subsequent_mask(6)  # -inf above the diagonal
    mem_pad = torch.arange(9) >= mem_lens[:, None]
    expected = ref(X, memory, tgt_mask=causal, memory_key_padding_mask=mem_pad)
    assert torch.allclose(out, expected, atol=1e-5)


def test_encoder_decoder_equals_torch_reference():
    """The whole Seq2Seq against embeddings + positional encoding + nn layers + nn.Linear."""
    src_vocab, tgt_vocab, num_blks = 31, 29, 2
    encoder = d2l.TransformerEncoder(src_vocab, D, FFN, HEADS, num_blks, 0.0)
    decoder = d2l.TransformerDecoder(tgt_vocab, D, FFN, HEADS, num_blks, 0.0)
    net = d2l.Seq2Seq(encoder, decoder)
    _randomize_norms(net)
    enc_layers = [_reference_encoder_layer(b, bias=False) for b in encoder.blks]
    dec_layers = [_reference_decoder_layer(b) for b in decoder.blks]
    src, src_lens = torch.randint(0, src_vocab, (3, 8)), torch.tensor([8, 2, 5])
    tgt = torch.randint(0, tgt_vocab, (3, 6))
    P = encoder.pos_encoding.P

    memory = encoder.embedding(src) * math.sqrt(D) + P[:, :8]
    pad = torch.arange(8) >= src_lens[:, None]
    for layer in enc_layers:
        memory = layer(memory, src_key_padding_mask=pad)
    Y = decoder.embedding(tgt) * math.sqrt(D) + P[:, :6]
    causal = nn.Transformer.generate_square_subsequent_mask(6)
    for layer in dec_layers:
        Y = layer(Y, memory, tgt_mask=causal, memory_key_padding_mask=pad)
    expected = decoder.dense(Y)

    assert torch.allclose(net(src, tgt, src_lens), expected, atol=1e-4)


def test_attention_agrees_with_sdpa():
    F = torch.nn.functional
    attention = d2l.DotProductAttention(0.0)
    Q, K, V = torch.randn(2, 5, 8), torch.randn(2, 5, 8), torch.randn(2, 5, 3)
    assert torch.allclose(
        attention(Q, K, V, _causal_lens(2, 5)),
        F.scaled_dot_product_attention(Q, K, V, is_causal=True),
        atol=1e-6,
    )
    lens = torch.tensor([5, 2])
    mask = (torch.arange(5) < lens[:, None]).unsqueeze(1)
    assert torch.allclose(
        attention(Q, K, V, lens), F.scaled_dot_product_attention(Q, K, V, attn_mask=mask), atol=1e-6
    )


# -- with the chapter-5 toolkit --------------------------------------------------------------


def test_train_and_predict_with_the_seq2seq_toolkit(predict_source_weights):
    train_iter, src_vocab, tgt_vocab = d2l.load_data_enko(64, 16, num_train=128)
    net = d2l.Seq2Seq(d2l.TransformerEncoder(len(src_vocab), 32, 64, 4, 1, 0.0),
                      d2l.TransformerDecoder(len(tgt_vocab), 32, 64, 4, 1, 0.0))  # fmt: skip
    history = d2l.train_seq2seq(net, train_iter, 0.01, 2, tgt_vocab, torch.device("cpu"),
                                plot=False)  # fmt: skip
    assert history["loss"][-1] < history["loss"][0]
    text, attn = d2l.predict_seq2seq(net, "I go home .", src_vocab, tgt_vocab, 16,
                                     save_attention_weights=True)  # fmt: skip
    text2, _ = d2l.predict_seq2seq(net, "I go home .", src_vocab, tgt_vocab, 16)
    assert isinstance(text, str) and text == text2
    assert d2l.translate(net, ["I go home ."], src_vocab, tgt_vocab, 16) == [text]
    # (16, 16), rows summing to 1, no weight on the padding after "I go home . <eos>".
    attn = predict_source_weights(net, src_vocab, tgt_vocab, 16, real=5)
    # BLEU of the toolkit on this model: its own output as the reference scores exactly 1
    # (unigrams: the detokenised output may be a single word), anything else less.
    forced = d2l.translate(net, ["I go home ."], src_vocab, tgt_vocab, 16)[0]
    pairs = [("I go home .", forced)]
    assert d2l.evaluate_bleu(net, pairs, src_vocab, tgt_vocab, 16, k=1) == 1.0
    pairs = [("I go home .", forced + " 집")]
    assert d2l.evaluate_bleu(net, pairs, src_vocab, tgt_vocab, 16, k=1) < 1.0
    # The rows are the last block's cross-attention averaged over its heads.
    assert net.decoder.source_attention_weights.shape == (1, 1, 16)
    last_cross = net.decoder.blks[-1].attention_weights[1]  # (1, heads, 1, 16)
    assert torch.allclose(attn[-1], last_cross[0, :, -1].mean(dim=0))


# -- bad input -------------------------------------------------------------------------------


def _raises(fn, match):
    with pytest.raises(ValueError, match=match):
        fn()


def test_bad_inputs_raise_clear_errors():
    encoder = d2l.TransformerEncoder(50, D, FFN, HEADS, 1, 0.0)
    tokens = torch.randint(0, 50, (2, 6))
    _raises(lambda: encoder(tokens.float(), torch.tensor([6, 2])), "integer token ids")
    _raises(lambda: encoder(tokens, torch.tensor([7, 2])), r"\[1, 6\]")
    _raises(lambda: encoder(tokens, torch.tensor([0, 2])), r"\[1, 6\]")
    _raises(lambda: encoder(tokens, torch.tensor([6.5, 2.0])), "whole numbers")
    assert torch.equal(encoder(tokens, torch.tensor([6.0, 2.0])),  # integral floats convert
                       encoder(tokens, torch.tensor([6, 2])))  # fmt: skip
    assert encoder(tokens.int(), None).shape == (2, 6, D)  # any integer dtype
    _raises(lambda: encoder(tokens, torch.tensor([6, 2, 1])), r"shape \(2,\)")
    _raises(lambda: encoder(tokens[0], None), r"\(batch, steps\)")

    blk = d2l.TransformerEncoderBlock(D, FFN, HEADS, 0.0)
    _raises(lambda: blk(torch.randn(2, 6, D + 1), None), rf"\(batch, steps, {D}\)")
    _raises(lambda: blk(torch.randn(2, 6, D), torch.tensor([9, 1])), r"\[1, 6\]")
    _raises(lambda: blk(torch.ones(2, 6, D, dtype=torch.long), None), "float")

    _raises(lambda: d2l.AddNorm(D, 0.0)(torch.randn(2, 3, D), torch.randn(2, 4, D)), "equal shapes")
    _raises(lambda: d2l.PositionWiseFFN(8, 4)(torch.ones(2, 3, 4, dtype=torch.long)), "float")
    _raises(lambda: d2l.PositionWiseFFN(0, 4), "positive int")

    decoder = d2l.TransformerDecoder(30, D, FFN, HEADS, 1, 0.0)
    enc = encoder(tokens, torch.tensor([6, 2]))
    state = decoder.init_state(enc, torch.tensor([6, 2]))
    _raises(lambda: decoder(torch.randint(0, 30, (2, 3)).float(), state), "integer token ids")
    _raises(lambda: decoder(torch.randint(0, 30, (3, 3)), state), "batch")
    bad_state = decoder.init_state(enc, torch.tensor([8, 2]))
    _raises(lambda: decoder(torch.randint(0, 30, (2, 3)), bad_state), "enc_valid_lens")
    long_state = decoder.init_state(enc, torch.tensor([6, 2]))
    long_state[2][0] = torch.zeros(2, 999, D)
    _raises(lambda: decoder(torch.randint(0, 30, (2, 3)), long_state), "max_len")
