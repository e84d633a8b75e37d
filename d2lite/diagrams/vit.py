"""Chapter 9's diagram: the Vision Transformer, image -> patches -> tokens + [CLS] + positions ->
encoder -> head, drawn from a ``d2l.ViT`` by running it on a small batch (on a copy)."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from ..vit import ViT  # d2lite imports its models before the diagrams
from .core import Diagram, drawer, trace

__all__ = ["draw_vit"]


@drawer(ViT)
def draw_vit(
    vit: nn.Module,
    *,
    batch: int = 2,
    channels: int | None = None,
    t: Callable[[str, str], str] | None = None,
) -> Diagram:
    """The ViT ``vit``: the image is cut into p×p patches and projected (the patch embedding),
    the learnable [CLS] token is put in front, the position embeddings P are added, the
    sequence passes ``len(vit.blks)`` pre-norm blocks, and only the [CLS] position reaches the
    head. Shapes come from running ``vit`` on a batch of ``batch`` images (``channels``
    defaults to the model's ``in_channels``, or 3 when it infers them); ``shapes`` holds
    "image", "patches", "cls", "pos", "tokens", "body", "cls_out" and "logits"."""
    if not isinstance(vit, ViT):
        raise TypeError(f"vit must be a d2l.ViT, got {type(vit).__name__}")
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ValueError(f"batch must be a positive int, got {batch!r}")
    emb = vit.patch_embedding
    c = channels if channels is not None else (emb.in_channels or 3)
    if isinstance(c, bool) or not isinstance(c, int) or c < 1:
        raise ValueError(f"channels must be a positive int, got {channels!r}")
    (h, w), (ph, pw), (gh, gw) = emb.img_size, emb.patch_size, emb.grid
    X = torch.zeros(batch, c, h, w)
    tr = trace(vit, X)  # trace copes with weights kept from a call with gradients
    last = f"blks.{len(vit.blks) - 1}"
    d = Diagram(6.4, 5.0, t=t, title=("비전 트랜스포머", "The Vision Transformer"))
    lx, rx = 2.55, 4.85
    img = d.tensor(lx, 0.45, ("이미지", "images"), X.shape, w=1.25, name="image")
    pe = d.box(lx, 1.35, ("패치 임베딩", "patch embedding"),
               (f"{ph}×{pw} 합성곱, 보폭 {ph}", f"{ph}×{pw} conv, stride {ph}"),
               name="patch_embedding")  # fmt: skip
    d.arrow(img, pe)
    m = emb.num_patches
    patches = d.tensor(lx, 2.3, (f"패치 토큰 {gh}×{gw} = {m}개", f"{gh}×{gw} = {m} patch tokens"),
                       tr["patch_embedding"], name="patches")  # fmt: skip
    d.arrow(pe, patches)
    cat = d.box(lx, 3.15, ("[CLS]를 앞에 붙이기", "prepend [CLS]"), kind="op", name="concat")
    d.arrow(patches, cat)
    cls = d.tensor(0.62, 3.15, "[CLS]", tuple(vit.cls_token.shape), role="query", name="cls")
    d.arrow(cls, cat)
    plus = d.add(lx, 4.0, name="plus")
    d.arrow(cat, plus)
    pos = d.tensor(0.62, 4.0, ("위치 P", "positions P"), tuple(vit.pos_embedding.shape),
                   role="state", name="pos")  # fmt: skip
    d.arrow(pos, plus)
    body = d.box(rx, 4.0, ("사전 정규화 블록", "pre-norm block"), ("LN → MHA → +, LN → MLP → +",
                 "LN → MHA → +, LN → MLP → +"), name="block")  # fmt: skip
    n = len(vit.blks)
    d.group([body], (f"블록 {n}개", f"{n} blocks"), name="body_group")
    d.arrow(plus, body, shape=tr.inputs["blks.0"][0], label_side="above", name="tokens")
    cls_out = d.tensor(rx, 2.3, ("[CLS] 자리의 출력", "output at [CLS]"), tr.inputs["head"][0],
                       role="query", name="cls_out")  # fmt: skip
    d.arrow(body, cls_out, shape=tr[last], label_side="right", name="body")
    head = d.box(rx, 1.35, ("머리", "head"), ("LN + 선형 층", "LN + linear"), name="head")
    d.arrow(cls_out, head)
    logits = d.tensor(rx, 0.45, ("클래스 로짓", "class logits"), tr[""], role="output",
                      name="logits")  # fmt: skip
    d.arrow(head, logits)
    return d.finish()

