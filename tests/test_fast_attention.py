"""The fused fast path (need_weights=False, d2l.fast_attention) equals the taught path."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import d2lite as d2l

TOL = 1e-5
LENS = {
    "none": None,
    "per example": torch.tensor([2, 7, 4]),
    "per query, with 0": torch.tensor([[0, 1, 2, 3, 7]] * 3),
    "example of length 0": torch.tensor([0, 7, 3]),
}


def _run(module, inputs, lens, need_weights):
    leaves = [x.clone().requires_grad_() for x in inputs]
    module.zero_grad()
    out = module(*leaves, lens, need_weights=need_weights)
    (out * torch.linspace(-1, 1, out.shape[-1])).sum().backward()
    grads = [x.grad for x in leaves] + [p.grad.clone() for p in module.parameters()]
    return out, grads


def _gap(a, b):
    return (a - b).abs().max().item()


@pytest.mark.parametrize("lens", LENS.values(), ids=LENS.keys())
def test_dot_product_paths_agree_in_values_and_gradients(lens):
    torch.manual_seed(0)
    inputs = (torch.randn(3, 5, 8), torch.randn(3, 7, 8), torch.randn(3, 7, 4))
    attention = d2l.DotProductAttention()
    taught, taught_grads = _run(attention, inputs, lens, True)
    weights = attention.attention_weights
    fast, fast_grads = _run(attention, inputs, lens, False)
    assert _gap(taught, fast) <= TOL
    assert all(_gap(a, b) <= TOL for a, b in zip(taught_grads, fast_grads))
    assert attention.attention_weights is None and weights is not None
    assert not torch.isnan(fast).any()


def test_rows_of_valid_length_zero_are_zero_on_both_paths():
    q, k, v = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 6)
    lens = torch.tensor([[0, 2, 5], [0, 0, 1]])
    for need in (True, False):
        out = d2l.DotProductAttention()(q, k, v, lens, need_weights=need)
        assert torch.all(out[0, 0] == 0) and torch.all(out[1, :2] == 0)
        assert torch.all(out[0, 1:] != 0)


@pytest.mark.parametrize("lens", [torch.tensor([2, 5]), torch.tensor([0, 5]),
                                  torch.tensor([[1, 2, 5], [0, 3, 5]])],
                         ids=["no empty row", "an empty example", "an empty query"])
def test_fused_attention_inside_and_outside_a_door_agree(lens):
    """Outside a model fused_attention asks whether a row is empty and passes the mask alone
    when none is; inside a model's door it does not ask and zeroes empty rows regardless."""
    from d2lite import checks

    torch.manual_seed(3)
    q, k, v = torch.randn(2, 2, 3, 4), torch.randn(2, 2, 5, 4), torch.randn(2, 2, 5, 6)
    outside = d2l.fused_attention(q, k, v, lens)
    with checks.door(lens=[("valid_lens", lens, 0, 5)]):
        assert checks.values_checked()
        inside = d2l.fused_attention(q, k, v, lens)
    taught = d2l.DotProductAttention()(q.flatten(0, 1), k.flatten(0, 1), v.flatten(0, 1),
                                       lens.repeat_interleave(2, 0)).unflatten(0, (2, 2))
    assert _gap(outside, inside) == 0 and _gap(outside, taught) <= TOL
    empty = (lens == 0).reshape(2, 1, -1, 1).expand_as(outside)
    assert torch.all(outside[empty] == 0) and not torch.isnan(outside).any()


@pytest.mark.parametrize("lens", LENS.values(), ids=LENS.keys())
def test_multihead_paths_agree_and_match_torch(lens):
    torch.manual_seed(1)
    mha = d2l.MultiHeadAttention(16, 4, 0.0, False, 16, 16, 16)
    inputs = (torch.randn(3, 5, 16), torch.randn(3, 7, 16), torch.randn(3, 7, 16))
    taught, taught_grads = _run(mha, inputs, lens, True)
    fast, fast_grads = _run(mha, inputs, lens, False)
    assert _gap(taught, fast) <= TOL
    assert all(_gap(a, b) <= TOL for a, b in zip(taught_grads, fast_grads))
    assert mha.attention.attention_weights is None


def test_multihead_fast_path_matches_nn_multiheadattention():
    torch.manual_seed(2)
    ours = d2l.MultiHeadAttention(32, 4, 0.0, False, 32, 32, 32)
    theirs = nn.MultiheadAttention(32, 4, bias=False, batch_first=True)
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight]))
        theirs.out_proj.weight.copy_(ours.W_o.weight)
    x, lens = torch.randn(2, 9, 32), torch.tensor([4, 9])
    expected, _ = theirs(x, x, x, key_padding_mask=torch.arange(9) >= lens[:, None])
    assert _gap(ours(x, x, x, lens, need_weights=False), expected) <= TOL


def test_fused_attention_takes_4d_tensors_and_checks_them():
    q, k, v = torch.randn(2, 3, 5, 8), torch.randn(2, 3, 6, 8), torch.randn(2, 3, 6, 4)
    d2l.check_shape(d2l.fused_attention(q, k, v, torch.tensor([2, 6])), (2, 3, 5, 4))
    with pytest.raises(ValueError, match=r"queries must have shape \(batch, heads, n, d_q\)"):
        d2l.fused_attention(q[:, 0], k, v)
    with pytest.raises(ValueError, match="one batch size and number of heads"):
        d2l.fused_attention(q, k[:, :2], v[:, :2])
    with pytest.raises(ValueError, match="feature size 8"):
        d2l.fused_attention(q, k[..., :4], v)
    with pytest.raises(ValueError, match=r"valid_lens must lie in \[0, 6\]"):
        d2l.fused_attention(q, k, v, torch.tensor([2, 7]))


def test_fast_attention_switches_every_layer_and_restores_even_on_error():
    net = d2l.TransformerEncoder(50, 16, 32, 4, 2, 0.0)
    layers = [m for m in net.modules() if hasattr(m, "need_weights")]
    assert len(layers) == 4  # per block: MultiHeadAttention and its DotProductAttention
    with pytest.raises(RuntimeError, match="boom"), d2l.fast_attention(net):
        assert not any(m.need_weights for m in layers)
        raise RuntimeError("boom")
    assert all(m.need_weights for m in layers)
    with pytest.raises(ValueError, match="nn.Module"):
        with d2l.fast_attention("net"):
            pass


def test_transformer_and_vit_give_the_same_outputs_inside_fast_attention():
    torch.manual_seed(3)
    encoder = d2l.TransformerEncoder(50, 16, 32, 4, 2, 0.0).eval()
    decoder = d2l.TransformerDecoder(50, 16, 32, 4, 2, 0.0).eval()
    X, Y = torch.randint(0, 50, (2, 6)), torch.randint(0, 50, (2, 5))
    lens = torch.tensor([3, 6])

    def run():
        enc = encoder(X, lens)
        return enc, decoder(Y, decoder.init_state(enc, lens))[0]

    taught = run()
    with d2l.fast_attention(encoder), d2l.fast_attention(decoder):
        fast = run()
    assert all(_gap(a, b) <= TOL for a, b in zip(taught, fast))
    vit = d2l.ViT(16, 4, 32, 64, 4, 2, 0.0, 0.0, in_channels=1).eval()
    images = torch.randn(2, 1, 16, 16)
    taught = vit(images)
    with d2l.fast_attention(vit):
        assert _gap(vit(images), taught) <= TOL


def test_dropout_on_the_fast_path_acts_in_training_only():
    torch.manual_seed(4)
    attention = d2l.DotProductAttention(dropout=0.5)
    q, k, v = torch.randn(2, 4, 8), torch.randn(2, 6, 8), torch.randn(2, 6, 3)
    attention.eval()
    evaluated = attention(q, k, v, need_weights=False)
    assert _gap(evaluated, attention(q, k, v)) <= TOL
    attention.train()
    assert _gap(attention(q, k, v, need_weights=False), evaluated) > 1e-3


def test_attention_benchmark_measures_every_variant_and_writes_its_table(tmp_path):
    from tools import bench_attention

    result = bench_attention.measure(sizes=(64,), mha_sizes=(16,), repeats=1, memory=False)
    assert set(result["dot"][0]["s"]) == set(bench_attention.DOT_VARIANTS)
    assert set(result["mha"][0]["s"]) == set(bench_attention.MHA_VARIANTS)
    text = bench_attention.table(result)
    assert "| 64 | 32 |" in text and "| 16 |" in text
    # Memory is measured in a fresh process: the taught path keeps the (32, 512, 512) weights
    # (32 MiB) and needs their gradients; the fused kernel keeps no (n, n) matrix.
    taught = bench_attention.peak_mib("dot", "taught", 512)
    fast = bench_attention.peak_mib("dot", "fast", 512)
    assert taught > 2 * 32 * 512 * 512 * 4 / 2**20 and taught > 3 * fast


def test_readme_quotes_the_committed_attention_table():
    from tools import bench_attention

    root = bench_attention.ROOT
    table = (root / "benchmarks" / "attention.md").read_text(encoding="utf-8")
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert bench_attention.readme_block(readme) == table.strip("\n")
