"""The Vision Transformer: patch embedding, pre-norm blocks and a [CLS] classifier (chapter 9).

Generated from book/09_vit.md
by `python -m tools.export`; edit the chapter, not this file.
"""

# ruff: noqa: I001  (imports stay in the order the chapter introduces them)

from functools import partial

import torch
from torch import Tensor, nn

import d2lite as d2l
from d2lite import checks


def _pair(value: int | tuple[int, int], name: str) -> tuple[int, int]:
    """An int n or a pair (h, w) as a pair of positive ints: n -> (n, n)."""
    pair = value if isinstance(value, (tuple, list)) else (value, value)
    if len(pair) != 2:
        raise ValueError(
            f"{name} must be an int or a pair (h, w) of ints, got {value!r}"
        )
    return tuple(checks.check_scalar(v, name, int, low=1) for v in pair)


class PatchEmbedding(nn.Module):
    """Cut images into p×p patches and project each: (batch, c, h, w) ->
    (batch, m, num_hiddens).

    m = (h / p_h) * (w / p_w). A convolution whose kernel and stride both equal
    the patch size sees every patch exactly once and applies the same linear map
    to each. ``in_channels=None`` infers the channel count at the first call
    (``nn.LazyConv2d``), as d2l does. Unlike d2l, an image size that the patch
    size does not divide raises ``ValueError`` instead of silently dropping the
    border pixels; sizes may be an int or a pair (h, w).
    """

    def __init__(
        self,
        img_size: int | tuple[int, int] = 96,
        patch_size: int | tuple[int, int] = 16,
        num_hiddens: int = 512,
        in_channels: int | None = None,
    ) -> None:
        super().__init__()
        self.img_size = _pair(img_size, "img_size")
        self.patch_size = _pair(patch_size, "patch_size")
        (h, w), (ph, pw) = self.img_size, self.patch_size
        if h % ph or w % pw:
            raise ValueError(
                f"img_size {h}x{w} is not divisible by patch_size {ph}x{pw}: "
                f"{h} % {ph} = {h % ph} and {w} % {pw} = {w % pw} "
                "pixels would be left over"
            )
        self.grid = (h // ph, w // pw)  # patches per column and per row
        self.num_patches = self.grid[0] * self.grid[1]
        num_hiddens = checks.check_positive(num_hiddens, "num_hiddens")
        if in_channels is not None:
            in_channels = checks.check_positive(in_channels, "in_channels")
        self.in_channels = in_channels
        conv = nn.LazyConv2d if in_channels is None else partial(nn.Conv2d, in_channels)
        self.conv = conv(
            num_hiddens, kernel_size=self.patch_size, stride=self.patch_size
        )

    def forward(self, X: Tensor) -> Tensor:
        """X (batch, channels, h, w) -> (batch, num_patches, num_hiddens), patches
        row by row.
        """
        checks.check_images(X, module=self)
        c = "channels" if self.in_channels is None else self.in_channels
        ok = X.dim() == 4 and tuple(X.shape[-2:]) == self.img_size
        if not ok or (self.in_channels is not None and X.shape[1] != self.in_channels):
            raise ValueError(
                "expected images of shape "
                f"(batch, {c}, {self.img_size[0]}, {self.img_size[1]}), "
                f"got {tuple(X.shape)}"
            )
        return self.conv(X).flatten(2).transpose(1, 2)


class ViTMLP(nn.Module):
    """The block's MLP, Linear -> GELU -> Dropout -> Linear -> Dropout:
    (..., d) -> (..., outputs).

    ``num_inputs=None`` infers the input width at the first call
    (``nn.LazyLinear``), as d2l does; unlike d2l, ``num_inputs`` can also fix it.
    """

    def __init__(
        self,
        mlp_num_hiddens: int,
        mlp_num_outputs: int,
        dropout: float = 0.5,
        num_inputs: int | None = None,
    ) -> None:
        super().__init__()
        checks.check_positive(mlp_num_hiddens, "mlp_num_hiddens")
        checks.check_positive(mlp_num_outputs, "mlp_num_outputs")
        if num_inputs is not None:
            num_inputs = checks.check_positive(num_inputs, "num_inputs")
        first = nn.LazyLinear if num_inputs is None else partial(nn.Linear, num_inputs)
        self.fc1 = first(mlp_num_hiddens)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(mlp_num_hiddens, mlp_num_outputs)
        self.drop = nn.Dropout(dropout)

    def forward(self, X: Tensor) -> Tensor:
        """X (..., num_inputs) -> (..., mlp_num_outputs)."""
        return self.drop(self.fc2(self.drop(self.act(self.fc1(X)))))


class ViTBlock(nn.Module):
    """Pre-norm Transformer encoder block: X + MHA(LN(X)), then X + MLP(LN(X)).

    X (batch, steps, num_hiddens) -> same shape. Unlike d2l, the block keeps the
    attention weights of its last call in ``attention_weights``, as
    (batch, num_heads, steps, steps).
    """

    def __init__(
        self,
        num_hiddens: int,
        norm_shape: int | list[int],
        mlp_num_hiddens: int,
        num_heads: int,
        dropout: float,
        use_bias: bool = False,
    ) -> None:
        super().__init__()
        self.num_hiddens, self.num_heads = num_hiddens, num_heads
        norm_shape = checks.check_sizes(norm_shape, "norm_shape")
        self.ln1 = nn.LayerNorm(norm_shape)
        self.attention = d2l.MultiHeadAttention(
            num_hiddens, num_heads, dropout, use_bias,
            query_size=num_hiddens, key_size=num_hiddens, value_size=num_hiddens,
        )  # fmt: skip
        self.ln2 = nn.LayerNorm(norm_shape)
        self.mlp = ViTMLP(mlp_num_hiddens, num_hiddens, dropout, num_inputs=num_hiddens)

    def forward(self, X: Tensor, valid_lens: Tensor | None = None) -> Tensor:
        """X (batch, steps, num_hiddens) -> (batch, steps, num_hiddens)."""
        checks.check_features(X, size=self.num_hiddens, module=self)
        Y = self.ln1(X)
        # the residual path never sees a norm
        X = X + self.attention(Y, Y, Y, valid_lens)
        return X + self.mlp(self.ln2(X))

    @property
    def attention_weights(self) -> Tensor | None:
        """Weights of the last call, (batch, num_heads, queries, keys); None before
        any call.
        """
        # (batch * num_heads, queries, keys)
        w = self.attention.attention.attention_weights
        if w is None:
            return None
        return w.reshape(-1, self.num_heads, *w.shape[1:])


class ViT(nn.Module):
    """Vision Transformer: images (batch, c, h, w) -> class logits (batch, num_classes).

    Stem: patch embedding, a learnable [CLS] token and learnable position
    embeddings. Body: ``num_blks`` pre-norm blocks. Head: LayerNorm and a linear
    layer on the [CLS] output. Unlike d2l's ``ViT`` (a ``d2l.Classifier``), this
    is a plain ``nn.Module`` trained with ``d2l.train_classifier``; ``lr`` is
    only stored, and ``in_channels`` may fix the channel count.
    """

    def __init__(
        self,
        img_size: int | tuple[int, int],
        patch_size: int | tuple[int, int],
        num_hiddens: int,
        mlp_num_hiddens: int,
        num_heads: int,
        num_blks: int,
        emb_dropout: float,
        blk_dropout: float,
        lr: float = 0.1,
        use_bias: bool = False,
        num_classes: int = 10,
        in_channels: int | None = None,
    ) -> None:
        super().__init__()
        checks.check_positive(num_blks, "num_blks")
        checks.check_positive(num_classes, "num_classes")
        self.lr = lr
        self.patch_embedding = PatchEmbedding(
            img_size, patch_size, num_hiddens, in_channels
        )
        self.cls_token = nn.Parameter(torch.zeros(1, 1, num_hiddens))
        num_steps = self.patch_embedding.num_patches + 1  # the patches and [CLS]
        self.pos_embedding = nn.Parameter(0.02 * torch.randn(1, num_steps, num_hiddens))
        self.dropout = nn.Dropout(emb_dropout)
        self.blks = nn.ModuleList(
            ViTBlock(num_hiddens, num_hiddens, mlp_num_hiddens, num_heads,
                     blk_dropout, use_bias)
            for _ in range(num_blks)
        )
        self.head = nn.Sequential(
            nn.LayerNorm(num_hiddens), nn.Linear(num_hiddens, num_classes)
        )

    def forward(self, X: Tensor) -> Tensor:
        """X (batch, channels, h, w) -> logits (batch, num_classes)."""
        X = self.patch_embedding(X)  # (batch, m, d)
        cls = self.cls_token.expand(X.shape[0], -1, -1)  # (batch, 1, d)
        # (batch, m + 1, d)
        X = self.dropout(torch.cat([cls, X], dim=1) + self.pos_embedding)
        for blk in self.blks:
            X = blk(X)
        return self.head(X[:, 0])  # only the [CLS] position reaches the classifier

    @property
    def attention_weights(self) -> list[Tensor | None]:
        """Per block, the weights of the last call: (batch, num_heads, m + 1, m + 1)."""
        return [blk.attention_weights for blk in self.blks]


__all__ = [
    "PatchEmbedding",
    "ViT",
    "ViTBlock",
    "ViTMLP",
]
