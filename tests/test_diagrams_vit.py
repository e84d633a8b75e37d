"""Chapter 9's diagram (d2lite.diagrams.vit): the ViT's stem, body and head print the shapes the
model really produces, for several configurations."""

import matplotlib

matplotlib.use("Agg")

import pytest
import torch

import d2lite as d2l
from d2lite.diagrams.vit import draw_vit
from tests.test_diagrams import (  # noqa: F401 (the fixture is autouse)
    _check_drawn,
    _colors,
    _strict_fonts_and_closed_figures,
    _t,
)

CONFIGS = [
    dict(img_size=8, patch_size=2, num_hiddens=48, mlp_num_hiddens=96, num_heads=4, num_blks=2,
         in_channels=1),
    dict(img_size=8, patch_size=4, num_hiddens=16, mlp_num_hiddens=32, num_heads=2, num_blks=3,
         in_channels=3, num_classes=7),
    dict(img_size=(6, 12), patch_size=3, num_hiddens=24, mlp_num_hiddens=24, num_heads=3,
         num_blks=1, in_channels=2),
]


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("lang", ["ko", "en"])
def test_vit_prints_the_shapes_the_model_produces(config, lang):
    vit = d2l.ViT(**config, emb_dropout=0.1, blk_dropout=0.1).eval()
    d = d2l.diagrams.draw(vit, batch=3, t=_t(lang))  # found through @drawer(ViT)
    emb = vit.patch_embedding
    X = torch.zeros(3, config["in_channels"], *emb.img_size)
    with torch.no_grad():
        patches_out = emb(X)
        logits = vit(X)
    m, dim = emb.num_patches, config["num_hiddens"]
    assert d.shapes == {
        "image": tuple(X.shape), "patches": tuple(patches_out.shape), "cls": (1, 1, dim),
        "pos": (1, m + 1, dim), "tokens": (3, m + 1, dim), "body": (3, m + 1, dim),
        "cls_out": (3, dim), "logits": tuple(logits.shape),
    }  # fmt: skip
    _check_drawn(d)
    blocks = config["num_blks"]
    assert (f"블록 {blocks}개" if lang == "ko" else f"{blocks} blocks") in d.labels()
    gh, gw = emb.grid
    assert any(f"{gh}×{gw} = {m}" in s for s in d.labels())


def test_vit_rejects_wrong_inputs_and_leaves_the_rng_alone():
    vit = d2l.ViT(8, 2, 16, 32, 2, 1, 0.1, 0.1, in_channels=1)
    torch.manual_seed(1)
    draw_vit(vit)
    drawn = torch.rand(2)
    torch.manual_seed(1)
    assert torch.equal(torch.rand(2), drawn)
    with pytest.raises(TypeError, match="vit"):
        draw_vit(d2l.PatchEmbedding(8, 2, 16, 1))
    with pytest.raises(ValueError, match="batch"):
        draw_vit(vit, batch=0)
    with pytest.raises(ValueError):  # the model reads one channel
        draw_vit(vit, channels=3)
    # a wrong shape is caught: another patch size prints other shapes
    other = draw_vit(d2l.ViT(8, 4, 16, 32, 2, 1, 0.1, 0.1, in_channels=1))
    assert other.shapes["patches"] == (2, 4, 16) != draw_vit(vit).shapes["patches"]


def test_vit_called_with_gradients_can_be_drawn_and_stays_as_it_was():
    vit = d2l.ViT(8, 2, 16, 32, 2, 2, 0.1, 0.1, in_channels=1)
    vit(torch.rand(3, 1, 8, 8))  # training mode, with gradients: weights are not graph leaves
    kept = [blk.attention.attention.attention_weights for blk in vit.blks]
    assert not kept[0].is_leaf
    d = draw_vit(vit)
    assert d.shapes["tokens"] == (2, 17, 16)
    now = [blk.attention.attention.attention_weights for blk in vit.blks]
    assert all(a is b for a, b in zip(kept, now))  # the model's own, untouched
    assert vit.training
