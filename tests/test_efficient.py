"""Chapter 11: tiled attention, KV cache, grouped-query attention, rotary embeddings, RMSNorm."""

import pytest
import torch
import torch.nn.functional as F

import d2lite as d2l


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n,m,block", [(37, 37, 8), (10, 10, 3), (5, 5, 64), (7, 7, 1)])
def test_tiled_attention_matches_pytorch(causal, n, m, block):
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 3, n, 8), torch.randn(2, 3, m, 8), torch.randn(2, 3, m, 5)
    ours = d2l.tiled_attention(q, k, v, block_size=block, causal=causal)
    assert ours.shape == (2, 3, n, 5)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    assert (ours - ref).abs().max() <= 1e-5


def test_tiled_attention_rejects_bad_input():
    q = torch.randn(1, 4, 8)
    with pytest.raises(ValueError, match="block_size"):
        d2l.tiled_attention(q, q, q, block_size=0)
    with pytest.raises(ValueError, match="need q"):
        d2l.tiled_attention(q, torch.randn(1, 4, 7), q)
    with pytest.raises(ValueError, match="dimensions"):
        d2l.tiled_attention(q, q[0], q)


def mha_and_its_gqa_copy():
    """Inputs (2, 6, 32), a 4-head MultiHeadAttention and a GroupedQueryAttention with 4 key/value
    heads holding the same weights."""
    torch.manual_seed(0)
    x = torch.randn(2, 6, 32)
    mha = d2l.MultiHeadAttention(32, 4)
    mha(x, x, x)  # materialise the lazy projections
    gqa = d2l.GroupedQueryAttention(32, 4, 4)
    gqa.load_state_dict(mha.state_dict())
    return x, mha, gqa


def test_gqa_equals_multihead_attention_with_copied_weights():
    x, mha, gqa = mha_and_its_gqa_copy()
    assert (gqa(x, x, x) - mha(x, x, x)).abs().max() <= 1e-6


@pytest.mark.parametrize("kv_heads", [4, 2, 1])
def test_cached_decoding_equals_full_causal_attention(kv_heads):
    torch.manual_seed(0)
    attn = d2l.GroupedQueryAttention(32, 4, kv_heads, rotary=d2l.RotaryEmbedding(8, max_len=16))
    x = torch.randn(2, 9, 32)
    full = attn(x, x, x, causal=True)
    cache = d2l.KVCache()
    first = attn(x[:, :4], x[:, :4], x[:, :4], causal=True, cache=cache)  # a prompt, then tokens
    rest = [attn(x[:, t : t + 1], x[:, t : t + 1], x[:, t : t + 1], causal=True, cache=cache)
            for t in range(4, 9)]
    assert (torch.cat([first, *rest], 1) - full).abs().max() <= 1e-5
    assert len(cache) == 9
    assert cache.num_bytes() == 2 * 2 * kv_heads * 9 * 8 * 4


def test_gqa_rejects_bad_sizes():
    with pytest.raises(ValueError, match="num_kv_heads"):
        d2l.GroupedQueryAttention(32, 4, 3)
    with pytest.raises(ValueError, match="num_heads"):
        d2l.GroupedQueryAttention(30, 4, 2)
    with pytest.raises(ValueError, match="positive"):
        d2l.GroupedQueryAttention(32, 4, 0)
    with pytest.raises(ValueError, match=r"queries must have shape \(batch, steps, 32\)"):
        d2l.GroupedQueryAttention(32, 4, 2)(torch.randn(1, 2, 16), torch.randn(1, 2, 16),
                                            torch.randn(1, 2, 16))


@pytest.mark.parametrize("lens", [torch.tensor([2, 6]), torch.tensor([[1, 2, 3, 4, 5, 6],
                                                                      [6, 6, 5, 5, 1, 1]])])
def test_gqa_valid_lens_equal_multihead_attention(lens):
    x, mha, gqa = mha_and_its_gqa_copy()
    assert (gqa(x, x, x, lens) - mha(x, x, x, lens)).abs().max() <= 1e-6
    # Keys past a sequence's length change nothing for it.
    y = x.clone()
    y[0, 2:] = torch.randn(4, 32)
    out_x, out_y = gqa(x, x, x, torch.tensor([2, 6])), gqa(x[:1, :2].expand(2, 2, 32), y, y,
                                                             torch.tensor([2, 6]))
    assert (out_x[0, :2] - out_y[0]).abs().max() <= 1e-6


def test_gqa_valid_lens_with_causal_mask_and_cache():
    torch.manual_seed(0)
    attn = d2l.GroupedQueryAttention(32, 4, 2)
    x = torch.randn(2, 5, 32)
    lens = torch.tensor([3, 5])
    full = attn(x, x, x, lens, causal=True)
    # Query i sees keys j <= i and j < length: the minimum of both bounds, per query.
    per_query = torch.minimum(torch.arange(1, 6).expand(2, 5), lens[:, None])
    assert (full - attn(x, x, x, per_query)).abs().max() <= 1e-6
    cache = d2l.KVCache()
    attn(x[:, :3], x[:, :3], x[:, :3], causal=True, cache=cache)
    rest = attn(x[:, 3:], x[:, 3:], x[:, 3:], lens, causal=True, cache=cache)  # 5 keys now
    assert (rest - full[:, 3:]).abs().max() <= 1e-5


def test_gqa_rejects_bad_valid_lens():
    attn = d2l.GroupedQueryAttention(32, 4, 2)
    x = torch.randn(2, 5, 32)
    with pytest.raises(ValueError, match=r"valid_lens must have shape \(2,\) or \(2, 5\)"):
        attn(x, x, x, torch.tensor([1, 2, 3]))
    with pytest.raises(ValueError, match=r"valid_lens must lie in \[1, 5\]"):
        attn(x, x, x, torch.tensor([0, 5]))
    with pytest.raises(ValueError, match=r"valid_lens must lie in \[1, 5\]"):
        attn(x, x, x, torch.tensor([6, 5]))
    with pytest.raises(ValueError, match="valid_lens must hold integers"):
        attn(x, x, x, torch.tensor([True, False]))
    with pytest.raises(ValueError, match=r"keys and values \(b, m, 32\)"):
        attn(x, x[:1], x[:1])


def test_peak_memory_counts_live_bytes():
    with d2l.PeakMemory() as mem:
        a = torch.zeros(1000)  # 4000 bytes
        b = a[:10].view(2, 5)  # a view: nothing new
        a.add_(1)  # in place: nothing new
        c = torch.ones(500)  # 2000 more
        assert mem.live == 6000
        del a, b
        assert mem.live == 2000  # a's storage is gone
        d = torch.ones(250)
        del c, d
    assert mem.peak == 6000 and mem.live == 0
    x = torch.randn(10)
    with d2l.PeakMemory() as mem:
        x.mul_(2)
        y = x[2:]  # views of a tensor made outside count nothing
        z = x + 1
    assert mem.peak == 40 and y.shape == (8,) and z.shape == (10,)


@pytest.mark.parametrize("n", [64, 128])
def test_peak_memory_of_attention(n):
    q, k, v = (torch.randn(1, 2, n, 16) for _ in range(3))
    with torch.no_grad(), d2l.PeakMemory() as plain:
        torch.softmax(q @ k.transpose(-2, -1) / 4, -1) @ v
    assert plain.peak == 2 * 2 * n * n * 4  # the scaled scores and the weights
    with torch.no_grad(), d2l.PeakMemory() as tiled:
        d2l.tiled_attention(q, k, v, block_size=16)
    assert tiled.peak < 2 * n * 16 * 4 + 2 * 16 * 16 * 4 * 10  # output + a few tiles


def test_kv_cache_rejects_mismatch():
    cache = d2l.KVCache()
    cache.append(torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4))
    with pytest.raises(ValueError, match="do not fit"):
        cache.append(torch.randn(1, 3, 1, 4), torch.randn(1, 3, 1, 4))
    with pytest.raises(ValueError, match="disagree"):
        cache.append(torch.randn(1, 2, 1, 4), torch.randn(1, 2, 2, 4))


def test_rotary_scores_depend_only_on_offset_and_keep_norm():
    torch.manual_seed(0)
    rope = d2l.RotaryEmbedding(8, max_len=20)
    a, b = torch.randn(8), torch.randn(8)
    qa, kb = rope(a.expand(1, 20, 8))[0], rope(b.expand(1, 20, 8))[0]
    s = [float(qa[m] @ kb[n]) for m, n in ((5, 2), (10, 7), (19, 16))]
    assert max(s) - min(s) <= 1e-4
    assert abs(float(qa[0] @ kb[3]) - s[0]) > 1e-3  # m - n = -3 differs from +3 in general
    assert torch.allclose(qa.norm(dim=-1), a.norm().expand(20), atol=1e-5)
    assert torch.allclose(rope(a.expand(1, 2, 8), offset=7)[0, 1], qa[8], atol=1e-6)


def test_rotary_rejects_bad_input():
    with pytest.raises(ValueError, match="even"):
        d2l.RotaryEmbedding(7)
    rope = d2l.RotaryEmbedding(8, max_len=4)
    with pytest.raises(ValueError, match="max_len"):
        rope(torch.randn(1, 3, 8), offset=2)
    with pytest.raises(ValueError, match="expected"):
        rope(torch.randn(1, 3, 6))


def test_rmsnorm():
    x = torch.randn(3, 16)
    y = d2l.RMSNorm(16)(x)
    assert torch.allclose(y.pow(2).mean(-1), torch.ones(3), atol=1e-4)
    with pytest.raises(ValueError):
        d2l.RMSNorm(16)(torch.randn(3, 8))
    with pytest.raises(ValueError):
        d2l.RMSNorm(0)


def test_gqa_with_rotary_positions_decodes_with_a_cache_as_in_one_pass():
    """Rotary positions follow the cache: token by token (offset = cached length) equals
    the whole causal pass."""
    torch.manual_seed(0)
    attn = d2l.GroupedQueryAttention(32, 4, 2, rotary=d2l.RotaryEmbedding(8, 16)).eval()
    x = torch.randn(2, 9, 32)
    with torch.no_grad():
        full = attn(x, x, x, causal=True)
        cache = d2l.KVCache()
        steps = [attn(x[:, :4], x[:, :4], x[:, :4], causal=True, cache=cache)]
        steps += [attn(x[:, t : t + 1], x[:, t : t + 1], x[:, t : t + 1], causal=True,
                       cache=cache) for t in range(4, 9)]  # fmt: skip
    torch.testing.assert_close(torch.cat(steps, 1), full, rtol=0, atol=1e-5)
    assert len(cache) == 9 and cache.k.shape == (2, 2, 9, 8)


def test_there_is_one_language_model_class_and_one_cache():
    assert not hasattr(d2l, "TinyDecoderLM")
    assert d2l.KVCache is d2l.lm.KVCache and not hasattr(d2l.efficient, "KVCache")


# -- half precision, one causal convention, no silent upcast (issue 23) ------------------------


def _bottom_right_reference(q, k, v):
    """Causal attention where the n queries are the last n of the m key positions."""
    n, m = q.shape[-2], k.shape[-2]
    mask = torch.ones(n, m, dtype=torch.bool).tril(m - n)
    return F.scaled_dot_product_attention(q.double(), k.double(), v.double(), attn_mask=mask)


@pytest.mark.parametrize("n, m", [(5, 13), (13, 13), (1, 9), (9, 40)])
def test_tiled_attention_and_gqa_share_the_causal_convention(n, m):
    g = d2l.generator(0)
    q, k, v = (torch.randn(2, 3, t, 8, generator=g, dtype=torch.float64) for t in (n, m, m))
    ref = _bottom_right_reference(q, k, v)
    torch.testing.assert_close(d2l.tiled_attention(q, k, v, block_size=4, causal=True), ref)
    if n == m:  # SDPA's is_causal aligns top-left, which agrees only when n == m
        torch.testing.assert_close(F.scaled_dot_product_attention(q, k, v, is_causal=True), ref)


def test_gqa_with_a_cache_equals_its_bottom_right_reference():
    d2l.set_seed(0)
    attn = d2l.GroupedQueryAttention(16, 4, 2).double().eval()
    x = torch.randn(1, 10, 16, dtype=torch.float64)
    cache = d2l.KVCache()
    with torch.no_grad():
        attn(x[:, :6], x[:, :6], x[:, :6], causal=True, cache=cache)
        tail = attn(x[:, 6:], x[:, 6:], x[:, 6:], causal=True, cache=cache)  # n=4 < m=10
        full = attn(x, x, x, causal=True)
    torch.testing.assert_close(tail, full[:, 6:])


def test_more_causal_queries_than_keys_is_an_error_not_zeros():
    q, k = torch.randn(1, 1, 6, 8), torch.randn(1, 1, 4, 8)
    with pytest.raises(ValueError, match="every query needs a key"):
        d2l.tiled_attention(q, k, k, causal=True)
    with pytest.raises(ValueError, match="every query needs a key"):
        d2l.tiled_attention(q, k[..., :0, :], k[..., :0, :])
    attn = d2l.GroupedQueryAttention(8, 2, 1)
    with pytest.raises(ValueError, match="causal attention needs queries <= keys"):
        attn(torch.randn(1, 6, 8), torch.randn(1, 4, 8), torch.randn(1, 4, 8), causal=True)


@pytest.mark.parametrize("dtype, tol", [(torch.float16, 2e-3), (torch.bfloat16, 2e-2)])
def test_tiled_attention_accumulates_half_precision_in_float32(dtype, tol):
    g = d2l.generator(1)
    q, k, v = (torch.randn(1, 2, t, 32, generator=g) for t in (64, 4096, 4096))
    ref = F.scaled_dot_product_attention(q, k, v)  # float32
    half = [x.to(dtype) for x in (q, k, v)]
    ours = d2l.tiled_attention(*half, block_size=64)
    assert ours.dtype == dtype
    fused = F.scaled_dot_product_attention(*half).float()
    err_ours, err_fused = (ours.float() - ref).abs().max(), (fused - ref).abs().max()
    assert err_ours <= max(tol, 2 * err_fused), (err_ours, err_fused)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_rmsnorm_squares_half_precision_in_float32(dtype):
    x = torch.full((2, 8), 300.0, dtype=dtype)
    ours, torchs = d2l.RMSNorm(8), torch.nn.RMSNorm(8, eps=1e-6)
    out = ours(x)
    assert out.dtype == dtype and torch.isfinite(out).all()
    torch.testing.assert_close(out.float(), torchs(x.float()), atol=1e-2, rtol=1e-2)
    torch.testing.assert_close(out.float(), torch.ones(2, 8))


@pytest.mark.parametrize("eps", [0, -1e-6, float("nan")])
def test_rmsnorm_refuses_an_eps_that_divides_by_zero(eps):
    with pytest.raises(ValueError, match="eps must be a finite real number > 0"):
        d2l.RMSNorm(8, eps=eps)


def test_the_kv_cache_keeps_its_dtype_and_grows_without_quadratic_copies():
    cache = d2l.KVCache()
    k = torch.randn(1, 2, 1, 4, dtype=torch.float16)
    cache.append(k, k)
    with pytest.raises(ValueError, match="do not fit the cache"):
        cache.append(torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4))  # float32 into fp16
    steps = [torch.randn(1, 2, 1, 4, dtype=torch.float16) for _ in range(99)]
    for s in steps:
        keys, values = cache.append(s, s)
    assert len(cache) == 100 and keys.dtype == torch.float16 and keys.shape == (1, 2, 100, 4)
    torch.testing.assert_close(keys, torch.cat([k, *steps], dim=-2))
    assert cache._k.shape[-2] <= 256  # doubled from 16 a few times, not one copy per token
    assert cache.num_bytes() == 2 * 100 * 2 * 4 * 2


def test_rotary_refuses_integers_bad_bases_and_absurd_tables():
    rope = d2l.RotaryEmbedding(8, max_len=16)
    with pytest.raises(ValueError, match="expected a float tensor"):
        rope(torch.arange(16).reshape(2, 8))
    for base in (0, -10000.0, float("inf")):
        with pytest.raises(ValueError, match="base must be"):
            d2l.RotaryEmbedding(8, base=base)
    with pytest.raises(ValueError, match=r"would need .* GiB"):
        d2l.RotaryEmbedding(64, max_len=10**9)
