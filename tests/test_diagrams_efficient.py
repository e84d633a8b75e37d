"""Chapter 11's diagrams (d2lite.diagrams.efficient): the tiling schedule is the one
tiled_attention runs, the cache rows are a GPT's KVCache after real decoding steps, the GQA
panels print the modules' key/value shapes and cache bytes, RoPE's arrows are the embedding's
output, and only palette colors are drawn."""

import math

import matplotlib

matplotlib.use("Agg")

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import d2lite as d2l
from d2lite.diagrams import efficient as deff
from tests.test_diagrams import (  # noqa: F401 (the fixture is autouse)
    _check_drawn,
    _colors,
    _strict_fonts_and_closed_figures,
    _t,
)


class _Matmuls(TorchDispatchMode):
    """Records the (rows, columns) of every batched matrix product's output."""

    def __init__(self):
        super().__init__()
        self.shapes = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func in (torch.ops.aten.bmm.default, torch.ops.aten.mm.default):
            self.shapes.append(tuple(out.shape[-2:]))
        return out


@pytest.mark.parametrize("n,m,block,causal", [(37, 37, 8, True), (37, 37, 8, False),
                                              (5, 37, 8, True), (20, 30, 16, True)])
def test_schedule_is_what_tiled_attention_computes(n, m, block, causal):
    q, k, v = torch.randn(1, 1, n, 4), torch.randn(1, 1, m, 4), torch.randn(1, 1, m, 4)
    with _Matmuls() as mm:
        d2l.tiled_attention(q, k, v, block_size=block, causal=causal)
    sched = deff.tiling_schedule(n, m, block, causal)
    # two products per tile: the scores (query rows, key rows), then weights @ values
    expected = []
    for i, j in sched:
        rows, cols = min(block, n - i * block), min(block, m - j * block)
        expected += [(rows, cols), (rows, 4)]
    assert mm.shapes == expected
    if not causal:
        assert len(sched) == math.ceil(n / block) * math.ceil(m / block)


@pytest.mark.parametrize("step", [None, 1, 12])
def test_tiling_diagram_numbers_the_tiles_and_prints_the_blocks(step):
    q, k, v = torch.randn(2, 4, 37, 16), torch.randn(2, 4, 37, 16), torch.randn(2, 4, 37, 6)
    d = deff.draw_tiling(q, k, v, 8, causal=True, step=step, t=_t("ko"))
    sched = deff.tiling_schedule(37, 37, 8, True)
    grid = d.parts["grid"]
    assert grid.shape == (5, 5) and grid.visible.sum() == len(sched) == 15
    i, j = sched[(step or 15) - 1]
    assert d.shapes["Qi"] == tuple(q[..., i * 8 : i * 8 + 8, :].shape)
    assert d.shapes["Kj"] == tuple(k[..., j * 8 : j * 8 + 8, :].shape)
    assert d.shapes["S"] == d.shapes["Qi"][:-1] + (d.shapes["Kj"][-2],)
    _check_drawn(d)
    with pytest.raises(ValueError, match="step must be at most 15"):
        deff.draw_tiling(q, k, v, 8, causal=True, step=16)


def test_tiling_rejects_bad_lengths():
    with pytest.raises(ValueError, match="causal tiling needs n <= m"):
        deff.tiling_schedule(9, 4, 2, True)
    with pytest.raises(ValueError, match="block_size must be an int >= 1"):
        deff.tiling_schedule(9, 9, 0)


@pytest.mark.parametrize("heads,blocks,hidden,prompt_len,steps", [
    (8, 4, 64, 8, 3), (2, 1, 16, 3, 2), (4, 2, 32, 5, 1)])  # fmt: skip
def test_cache_diagram_follows_the_gpts_cache(heads, blocks, hidden, prompt_len, steps):
    with torch.random.fork_rng(devices=[]):
        net = d2l.GPT(30, hidden, heads, blocks, max_len=32)
    net(torch.zeros(1, 2, dtype=torch.long))  # attention weights left with gradients
    prompt = torch.randint(0, 30, (1, prompt_len), generator=d2l.generator(1))
    state = torch.random.get_rng_state()
    d = deff.draw_kv_cache(net, prompt, steps, t=_t("en"))
    assert torch.equal(state, torch.random.get_rng_state())
    cache = net.init_cache()  # the same decoding by hand
    with torch.no_grad():
        feed = prompt
        for s in range(steps + 1):
            nxt = net(feed, cache)[:, -1].argmax(-1, keepdim=True)
            assert d.shapes[f"k{s}"] == tuple(cache[0].k.shape)
            assert d.parts[f"cache{s}"].kind == "cache"
            feed = nxt
    assert d.shapes["k0"] == (1, heads, prompt_len, hidden // heads)
    assert d.shapes["new1"] == (1, heads, 1, hidden // heads)
    assert f"cache{steps + 1}" not in d.parts
    _check_drawn(d)


@pytest.mark.parametrize("heads,kv", [((8, 8), (8, 2, 1)), ((4, 4), (4, 1)), ((6,), (3,))])
def test_gqa_panels_print_the_modules_kv_shapes(heads, kv):
    mods = [d2l.GroupedQueryAttention(8 * h, h, g) for h, g in zip(heads * 3, kv)]
    d = deff.draw_gqa(*mods, batch=2, steps=3, t=_t("ko"))
    for p, (mod, g) in enumerate(zip(mods, kv)):
        cache = d2l.KVCache()
        x = torch.zeros(2, 3, mod.W_q.in_features)
        mod(x, x, x, cache=cache)
        assert d.shapes[f"k{p}"] == tuple(cache.k.shape) == (2, g, 3, 8)
        assert f"캐시 {cache.num_bytes() // 6} B/토큰" in d.labels()
        links = [n for n in d.parts if n.startswith(f"link{p}_")]
        assert len(links) == mod.num_heads
        kvs = [n for n in d.parts if n.startswith(f"kv{p}_")]
        assert len(kvs) == g
    _check_drawn(d)
    with pytest.raises(TypeError, match="expected a GroupedQueryAttention"):
        deff.draw_gqa(torch.nn.Linear(2, 2))


@pytest.mark.parametrize("pairs,positions", [((0, 1), 6), ((0,), 4), ((1, 0), 8)])
def test_rope_arrows_are_the_embeddings_output(pairs, positions):
    rope = d2l.RotaryEmbedding(16, max_len=32)
    x = torch.randn(16, generator=d2l.generator(0))
    d = deff.draw_rope(rope, x, pairs=pairs, positions=positions, t=_t("en"))
    out = rope(x.expand(1, positions, 16))[0]
    assert d.shapes["rope"] == tuple(out.shape)
    for p, i in enumerate(pairs):
        o = d.parts[f"p{p}_0"]
        for pos in range(positions):
            a = d.parts[f"p{p}_{pos}"]
            tip = [pt for name, pts in d._paths if name == a.name for pt in pts][-1]
            origin = [pt for name, pts in d._paths if name == o.name for pt in pts][0]
            angle = math.atan2(tip[1] - origin[1], tip[0] - origin[0])
            want = math.atan2(float(out[pos, 2 * i + 1]), float(out[pos, 2 * i]))
            assert abs(math.remainder(angle - want, 2 * math.pi)) < 1e-4
        theta = (10000.0 ** (-2 * i / 16))
        assert f"θ = {theta:.2f} rad" in "\n".join(d.labels())
    _check_drawn(d)
    with pytest.raises(ValueError, match="pairs must be 1 or 2 pair indices"):
        deff.draw_rope(rope, x, pairs=(8,))


def test_cache_and_gqa_reject_what_they_cannot_draw():
    net = d2l.GPT(10, 8, 2, 1, max_len=16)
    prompt = torch.zeros(1, 2, dtype=torch.long)
    with pytest.raises(ValueError, match="steps must be at most 3"):
        deff.draw_kv_cache(net, prompt, 4)
    with pytest.raises(ValueError, match=r"prompt must be token ids of shape \(1, p\)"):
        deff.draw_kv_cache(net, torch.zeros(2, 2, dtype=torch.long))
    gqa = d2l.GroupedQueryAttention(16, 4, 2)
    assert d2l.diagrams.draw(gqa).shapes == {"k0": (1, 2, 4, 4)}  # its registered drawer
