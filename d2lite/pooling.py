"""Kernels and Nadaraya-Watson regression as attention pooling (chapter 3).

Generated from book/03_attention_pooling.md
by `python -m tools.export`; edit the chapter, not this file.
"""

# ruff: noqa: I001  (imports stay in the order the chapter introduces them)

from collections.abc import Callable

import torch
from torch import Tensor


def gaussian_kernel(u: Tensor) -> Tensor:
    """Gaussian kernel exp(-u^2 / 2), elementwise: any shape in, the same shape out."""
    return torch.exp(-(u**2) / 2)


def boxcar_kernel(u: Tensor) -> Tensor:
    """Boxcar kernel, 1 where |u| <= 1 and 0 elsewhere, elementwise: same shape out."""
    return (u.abs() <= 1).to(u.dtype)


def constant_kernel(u: Tensor) -> Tensor:
    """Constant kernel, 1 everywhere: every key gets the same weight; same shape out."""
    return torch.ones_like(u)


def triangular_kernel(u: Tensor) -> Tensor:
    """Triangular kernel max(0, 1 - |u|), elementwise (not the Epanechnikov kernel)."""
    return torch.clamp(1 - u.abs(), min=0)


def epanechnikov_kernel(u: Tensor) -> Tensor:
    """Epanechnikov kernel 3/4 * max(0, 1 - u^2), elementwise: same shape out."""
    return 0.75 * torch.clamp(1 - u**2, min=0)


def nadaraya_watson(
    x_train: Tensor,
    y_train: Tensor,
    x_query: Tensor,
    kernel: Callable[[Tensor], Tensor] = gaussian_kernel,
    sigma: float = 1.0,
) -> tuple[Tensor, Tensor]:
    """Nadaraya-Watson regression as attention pooling with keys x_train and values
    y_train.

    x_train (m,), y_train (m,) or (m, v), x_query (n,) -> predictions (n,) or (n, v)
    and attention weights (n, m) whose rows sum to one. Only gaussian_kernel itself
    takes the underflow-safe softmax path; any other kernel is evaluated as given.
    """
    if x_train.dim() != 1 or x_query.dim() != 1:
        raise ValueError(
            f"x_train and x_query must be 1-D, got {tuple(x_train.shape)} and "
            f"{tuple(x_query.shape)}"
        )
    if y_train.dim() not in (1, 2) or y_train.shape[0] != x_train.shape[0]:
        raise ValueError(
            f"y_train must have shape ({x_train.shape[0]},) "
            f"or ({x_train.shape[0]}, v), "
            f"got {tuple(y_train.shape)}"
        )
    if not sigma > 0:
        raise ValueError(f"sigma must be positive, got {sigma!r}")
    # (n, m): every query with every key
    u = (x_query[:, None] - x_train[None, :]) / sigma
    # a softmax of -u^2/2: the max is subtracted, no underflow
    if kernel is gaussian_kernel:
        weights = torch.softmax(-(u**2) / 2, dim=1)
        return weights @ y_train, weights
    k = kernel(u)
    total = k.sum(dim=1, keepdim=True)
    empty = (total <= 0).flatten()
    if empty.any():
        where = x_query[empty][:3].tolist()
        raise ValueError("no training input within the kernel's reach of queries "
                         f"{where}")
    weights = k / total
    return weights @ y_train, weights


__all__ = [
    "boxcar_kernel",
    "constant_kernel",
    "epanechnikov_kernel",
    "gaussian_kernel",
    "nadaraya_watson",
    "triangular_kernel",
]
