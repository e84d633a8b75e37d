"""One validation layer for every public d2lite function and module.

Each check raises a ``ValueError`` that names the argument and says what was expected and what
was received (shape, dtype or range); checks that normalise their input return it. The chapters
call these in one line, so the taught code shows the idea and not the bookkeeping.

* :func:`check_scalar`: every number argument (sizes, counts, rates, probabilities), in the
  spirit of scikit-learn's ``check_scalar``: integers are ``numbers.Integral`` (NumPy integers
  too, ``bool`` never), floats are real and finite, each within its range.
* :func:`check_positive`, :func:`check_divisible`: sizes and counts of constructors.
* :func:`check_tokens`: token ids (batch, steps) of any integer dtype, at least one step.
* :func:`check_features`, :func:`check_scores`, :func:`check_rnn_inputs`,
  :func:`check_state`, :func:`check_images`: float activations and images.
* :func:`check_valid_lens`: integer lengths (integral floats converted) with
  ``min_len <= v <= num_keys``, shape (batch,) or (batch, queries).
* :func:`check_qkv`, :func:`check_in_features`: attention inputs and projection sizes.
* :func:`check_dtype`: a float input in the dtype of the model's weights (float64 data into a
  float32 model is named here, not deep inside PyTorch); :func:`check_sizes`: a size or shape.
* :func:`check_rnn_state`, :func:`check_decoder_state`: states handed from an encoder to a
  decoder (layers and hidden units that fit; one cache slot per block).
* :func:`check_params`, :func:`check_finite_grads`: what gradient clipping accepts and refuses.
* :func:`door`: where inputs enter a model (an encoder, a decoder, a whole encoder–decoder),
  their *values* (token ids in range, lengths in range) are checked once, with one host
  synchronization; the layers inside check shapes only. On a GPU every value check waits for
  the device, so a check in every layer would stall it once per layer.
"""

from __future__ import annotations

import contextvars
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from numbers import Integral, Real

import torch
from torch import Tensor, nn

__all__ = [
    "check_divisible",
    "check_dtype",
    "check_features",
    "check_bytes",
    "check_decoder_state",
    "check_images",
    "check_finite_grads",
    "check_in_features",
    "check_params",
    "check_positive",
    "check_qkv",
    "check_rnn_inputs",
    "check_rnn_state",
    "check_scalar",
    "check_scores",
    "check_sizes",
    "check_state",
    "check_tokens",
    "check_valid_lens",
    "door",
    "token_door",
    "values_checked",
]

# True inside a model whose door has checked the values of its inputs (see `door`).
_CHECKED = contextvars.ContextVar("d2lite_values_checked", default=False)


def _got(x: object) -> str:
    """How a received value is described: a tensor's shape and dtype, else its type."""
    if isinstance(x, Tensor):
        return f"shape {tuple(x.shape)}, dtype {x.dtype}"
    return f"{type(x).__name__} {x!r}"


def _is_int_dtype(x: Tensor) -> bool:
    return not x.is_floating_point() and not x.is_complex() and x.dtype != torch.bool


def _range_text(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    if low is not None and high is not None:
        return f"in {'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {low}"
    return f"{'<' if high_open else '<='} {high}"


def check_scalar(
    value: object,
    name: str,
    kind: type = int,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> int | float:
    """Return ``value`` as a Python ``int`` or ``float`` if it is a number of ``kind`` in range.

    ``kind=int`` accepts any ``numbers.Integral`` (``np.int64(8)`` too) but never ``bool``;
    ``kind=float`` accepts any real number (integers too) that is finite. ``low``/``high`` bound
    the value, inclusive unless ``low_open``/``high_open``. The error names the argument, the
    expected kind and range, and the received value.
    """
    if kind not in (int, float):
        raise TypeError(f"check_scalar: kind must be int or float, got {kind!r}")
    bounded = low is not None or high is not None
    where = f" {_range_text(low, high, low_open, high_open)}" if bounded else ""
    if kind is int and high is None and (low, low_open) in ((1, False), (0, True)):
        what, where = "a positive int", ""
    elif kind is int and high is None and (low, low_open) == (0, False):
        what, where = "a non-negative int", ""
    else:
        what = "an int" if kind is int else "a finite real number"
    ok_type = isinstance(value, Integral if kind is int else Real) and not isinstance(value, bool)
    if not ok_type or (kind is float and not math.isfinite(value)):
        raise ValueError(f"{name} must be {what}{where}, got {_got(value)}")
    number = int(value) if kind is int else float(value)
    below = low is not None and (number <= low if low_open else number < low)
    above = high is not None and (number >= high if high_open else number > high)
    if below or above:
        raise ValueError(f"{name} must be {what}{where}, got {_got(value)}")
    return number


#: The largest single table or buffer a d2lite constructor builds: a request above it is a typo
#: (max_len=10**9), refused before anything is allocated.
MAX_BYTES = 16 * 2**30


def check_bytes(nbytes: int, what: str) -> None:
    """Refuse to allocate more than :data:`MAX_BYTES` for ``what``, saying how much it needs."""
    if nbytes > MAX_BYTES:
        raise ValueError(f"{what} would need {nbytes / 2**30:,.1f} GiB (at most "
                         f"{MAX_BYTES / 2**30:.0f} GiB): is a size argument too large?")


def check_positive(value: object, name: str) -> int:
    """Return ``value`` as an int if it is a positive integer (``bool`` is refused), else raise."""
    return check_scalar(value, name, int, low=1)


def check_sizes(value: object, name: str) -> int | tuple[int, ...]:
    """A positive int, or a non-empty tuple or list of them (a shape such as ``norm_shape``)."""
    if isinstance(value, (tuple, list)) and value:
        return tuple(check_scalar(v, name, int, low=1) for v in value)
    if isinstance(value, (tuple, list)):
        raise ValueError(f"{name} must be a positive int or a non-empty shape, got {value!r}")
    return check_positive(value, name)


def check_decoder_state(state: object, num_blks: int, name: str = "state") -> list:
    """A Transformer decoder's state ``[enc_outputs, enc_valid_lens, cache]`` with one cache
    slot per block, as its ``init_state`` returns it; returned as is."""
    if not isinstance(state, list) or len(state) != 3:
        raise ValueError(f"{name} must be the list [enc_outputs, enc_valid_lens, cache] that "
                         f"init_state returns, got {_got(state)}")
    cache = state[2]
    if not isinstance(cache, list) or len(cache) != num_blks:
        got = f"{len(cache)} slots" if isinstance(cache, list) else _got(cache)
        raise ValueError(f"{name}[2] must be a cache list with one slot per block ({num_blks}), "
                         f"got {got}: was the state made by a decoder with other num_blks?")
    return state


def check_divisible(num_hiddens: int, num_heads: int) -> None:
    """Both positive ints and ``num_hiddens % num_heads == 0`` (every head gets a share)."""
    check_positive(num_hiddens, "num_hiddens")
    check_positive(num_heads, "num_heads")
    if num_hiddens % num_heads:
        raise ValueError(
            f"num_hiddens must be divisible by num_heads={num_heads} (each head gets "
            f"num_hiddens / num_heads features), got num_hiddens={num_hiddens}"
        )


def check_tokens(X: object, name: str = "X") -> Tensor:
    """Token ids: a (batch, steps) tensor of any integer dtype with batch, steps >= 1."""
    if not isinstance(X, Tensor) or X.dim() != 2:
        raise ValueError(f"{name} must be token ids of shape (batch, steps), got {_got(X)}")
    if not _is_int_dtype(X):
        raise ValueError(f"{name} must hold integer token ids, got {_got(X)}")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} must hold at least one sequence of one step, got {_got(X)}")
    return X


def _check_float(x: object, name: str, dims: int, layout: str,
                 module: nn.Module | None = None) -> Tensor:
    if not isinstance(x, Tensor) or x.dim() != dims:
        raise ValueError(f"{name} must have shape {layout}, got {_got(x)}")
    if not x.is_floating_point():
        raise ValueError(f"{name} must be a float tensor of shape {layout}, got {_got(x)}")
    if x.numel() == 0:
        raise ValueError(f"{name} must not be empty: expected {layout}, got {_got(x)}")
    if module is not None:
        check_dtype(x, module, name)
    return x


def check_features(
    X: object, name: str = "X", size: int | None = None, last: str = "features",
    module: nn.Module | None = None,
) -> Tensor:
    """A float tensor (batch, steps, size) with no empty axis; ``size=None`` accepts any
    size of the last axis, which error messages call ``last``. With ``module``, ``X`` must
    also have the dtype of its weights (:func:`check_dtype`)."""
    layout = f"(batch, steps, {last if size is None else size})"
    _check_float(X, name, 3, layout, module)
    if size is not None and X.shape[-1] != size:
        raise ValueError(f"{name} must have shape {layout}, got {_got(X)}")
    return X


def check_scores(X: object, name: str = "X") -> Tensor:
    """Attention scores: a float tensor (batch, queries, keys), no empty axis."""
    return _check_float(X, name, 3, "(batch, queries, keys)")


def check_images(X: object, name: str = "X", module: nn.Module | None = None) -> Tensor:
    """Images: a float tensor (batch, channels, height, width), no empty axis; with
    ``module``, in the dtype of its weights."""
    return _check_float(X, name, 4, "(batch, channels, height, width)", module)


def check_rnn_inputs(inputs: object, num_inputs: int, name: str = "inputs",
                     module: nn.Module | None = None) -> Tensor:
    """Time-major RNN inputs: a float tensor (steps, batch, num_inputs), no empty axis; with
    ``module``, in the dtype of its weights."""
    layout = f"(steps, batch, {num_inputs})"
    _check_float(inputs, name, 3, layout, module)
    if inputs.shape[-1] != num_inputs:
        raise ValueError(f"{name} must have shape {layout}, got {_got(inputs)}")
    return inputs


def check_state(state: object, shape: Sequence[int], name: str = "state") -> Tensor:
    """A float tensor of exactly ``shape`` (a recurrent state)."""
    if not isinstance(state, Tensor) or tuple(state.shape) != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {_got(state)}")
    if not state.is_floating_point():
        raise ValueError(f"{name} must be a float tensor, got {_got(state)}")
    return state


def check_rnn_state(hidden: object, rnn: nn.RNNBase, batch: int, name: str = "state") -> Tensor:
    """A recurrent state that fits ``rnn``: (num_layers * directions, batch, hidden_size), in the
    dtype of its weights. The usual mistake is an encoder with another number of layers."""
    layers = rnn.num_layers * (2 if rnn.bidirectional else 1)
    shape = (layers, batch, rnn.hidden_size)
    if not isinstance(hidden, Tensor) or tuple(hidden.shape) != shape:
        raise ValueError(
            f"{name} must have shape (num_layers, batch, num_hiddens) = {shape} for this "
            f"{layers}-layer decoder, got {_got(hidden)}: the encoder needs as many layers "
            f"({layers}) and hidden units ({rnn.hidden_size}) as the decoder")
    check_dtype(hidden, rnn, name)
    return hidden


def check_dtype(x: Tensor, module: nn.Module, name: str = "X") -> Tensor:
    """``x`` has the floating dtype of ``module``'s weights (a float64 tensor into a float32
    model fails deep inside PyTorch otherwise); a module without weights accepts any."""
    weight = next((p for p in module.parameters() if p.is_floating_point()), None)
    if weight is not None and x.is_floating_point() and x.dtype != weight.dtype:
        raise ValueError(
            f"{name} must have the model's dtype {weight.dtype}, got {_got(x)}: convert it "
            f"with .to({weight.dtype}) (or the model with .to({x.dtype}))")
    return x


def check_valid_lens(
    valid_lens: object,
    batch: int,
    num_keys: int,
    queries: int | None = None,
    min_len: int = 0,
    name: str = "valid_lens",
    values: bool = True,
) -> Tensor | None:
    """Valid lengths as an integer tensor, or None.

    Accepts a tensor (any integer dtype, or a float dtype holding whole numbers, converted to
    int64) or a list of ints, of shape (batch,) or, when ``queries`` is given, (batch, queries).
    Every length must lie in [min_len, num_keys]: 0 means "no key" (an all-zero weight row),
    while encoders pass ``min_len=1`` because every sentence has at least ``<eos>``. With
    ``values=False`` (a model's :func:`door` checks them) or inside a door, integer lengths are
    not read, so no host synchronization happens here.
    """
    if valid_lens is None:
        return None
    if isinstance(valid_lens, (list, tuple)):
        try:
            valid_lens = torch.tensor(valid_lens)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a tensor of ints, got {_got(valid_lens)}") from None
    shapes = [(batch,)] + ([(batch, queries)] if queries is not None else [])
    expected = " or ".join(str(s) for s in shapes)
    if not isinstance(valid_lens, Tensor) or tuple(valid_lens.shape) not in shapes:
        raise ValueError(f"{name} must have shape {expected}, got {_got(valid_lens)}")
    if valid_lens.is_floating_point():
        if not bool((valid_lens == valid_lens.round()).all()):
            raise ValueError(f"{name} must hold whole numbers, got {valid_lens.tolist()}")
        valid_lens = valid_lens.long()
    elif not _is_int_dtype(valid_lens):
        raise ValueError(f"{name} must hold integers, got {_got(valid_lens)}")
    if not values or _CHECKED.get():  # a model's door checks (or checked) the range: no sync
        return valid_lens
    if valid_lens.numel() and (valid_lens.min() < min_len or valid_lens.max() > num_keys):
        raise ValueError(
            f"{name} must lie in [{min_len}, {num_keys}] for {num_keys} keys, "
            f"got {valid_lens.tolist()}"
        )
    return valid_lens


def check_qkv(
    queries: object, keys: object, values: object, same_size: bool = False, heads: bool = False
) -> None:
    """(batch, n, d_q), (batch, m, d_k), (batch, m, d_v) float tensors that fit together, or with
    ``heads`` (batch, heads, n, d_q) and so on; ``same_size`` demands d_q == d_k (dot products)."""
    lead = "batch, heads" if heads else "batch"
    for name, x, rows, size in (("queries", queries, "n", "d_q"), ("keys", keys, "m", "d_k"),
                                ("values", values, "m", "d_v")):  # fmt: skip
        _check_float(x, name, 4 if heads else 3, f"({lead}, {rows}, {size})")
    if not queries.dtype == keys.dtype == values.dtype:
        raise ValueError(f"queries, keys and values need one dtype, got {queries.dtype}, "
                         f"{keys.dtype} and {values.dtype}")
    q, k, v = (tuple(x.shape) for x in (queries, keys, values))
    if not q[:-2] == k[:-2] == v[:-2]:
        what = "batch size and number of heads" if heads else "batch size"
        raise ValueError(f"queries, keys and values need one {what}, got {q}, {k}, {v}")
    if k[-2] != v[-2]:
        raise ValueError(f"values must have one row per key: keys {k}, got values {v}")
    if same_size and q[-1] != k[-1]:
        raise ValueError(f"keys must have the queries' feature size {q[-1]}, got keys {k}")


def check_in_features(layer: nn.Module, x: Tensor, name: str) -> None:
    """``x``'s last axis and dtype fit ``layer`` (an nn.Linear); a lazy layer accepts any."""
    check_dtype(x, layer, name)  # a lazy layer's weights have their dtype already
    if isinstance(layer, nn.modules.lazy.LazyModuleMixin):
        return
    if x.shape[-1] != layer.in_features:
        raise ValueError(
            f"{name} must have {layer.in_features} features (last axis), got {_got(x)}"
        )


def check_params(net: object, name: str = "net") -> list[tuple[str, Tensor]]:
    """The ``(name, parameter)`` pairs of an ``nn.Module`` (its parameter names), of an object
    with a ``params`` list (``params[i]``) or of an iterable of tensors (``parameter i``)."""
    if isinstance(net, nn.Module):
        return list(net.named_parameters())
    if hasattr(net, "params"):
        pairs = [(f"params[{i}]", p) for i, p in enumerate(net.params)]
    elif isinstance(net, Tensor):
        pairs = [("parameter 0", net)]
    else:
        try:
            pairs = [(f"parameter {i}", p) for i, p in enumerate(net)]
        except TypeError:
            pairs = None
    if pairs is None or not all(isinstance(p, Tensor) for _, p in pairs):
        raise ValueError(f"{name} must be an nn.Module, an object with a params list or an "
                         f"iterable of tensors, got {_got(net)}")
    return pairs


def check_finite_grads(norm: float, grads: Sequence[tuple[str, Tensor]]) -> None:
    """Raise when the joint gradient ``norm`` is NaN or infinite, naming the parameters whose
    gradients hold such values (scaling by it would spread them to every gradient)."""
    if math.isfinite(norm):
        return
    bad = [name for name, g in grads if not bool(torch.isfinite(g).all())]
    raise ValueError(f"gradients must be finite to be clipped, got a norm of {norm}: the "
                     f"gradient of {', '.join(bad) or 'the parameters'} holds NaN or inf "
                     "(a loss that overflowed or divided by zero?)")


def values_checked() -> bool:
    """Whether the caller runs inside a :func:`door` that has checked its inputs' values."""
    return _CHECKED.get()


def _on_one_device(tensors: Sequence[Tensor]) -> list[Tensor]:
    """``tensors`` moved to one device, so that they can be stacked: the first accelerator's
    among theirs (a GPU), else the CPU. Token ids on a GPU with lengths left on the CPU are
    a normal call; copying a few CPU scalars to the GPU does not wait for it."""
    target = next((t.device for t in tensors if t.device.type != "cpu"), torch.device("cpu"))
    return [t if t.device == target else t.to(target) for t in tensors]


@contextmanager
def door(
    tokens: Sequence[tuple[str, Tensor, int]] = (),
    lens: Sequence[tuple[str, Tensor | None, int, int]] = (),
) -> Iterator[None]:
    """Check the values of a model's inputs once, then trust them inside the ``with`` block.

    ``tokens`` holds ``(name, ids, vocab_size)``: every id must lie in ``[0, vocab_size)``;
    ``lens`` holds ``(name, valid_lens, low, high)``: every length in ``[low, high]`` (``None``
    lengths are skipped). Shapes and dtypes are the caller's to check first (``check_tokens``,
    ``check_valid_lens``). All the conditions are gathered on the device and read with one host
    synchronization; an error names the argument, the range and the values found. Inside a door
    that has already checked (a decoder inside an encoder–decoder), nothing is checked again.
    """
    if _CHECKED.get():
        yield
        return
    conditions, messages = [], []
    for name, ids, vocab_size in tokens:
        if ids.numel():
            conditions.append((ids.min() < 0) | (ids.max() >= vocab_size))
            messages.append(lambda n=name, x=ids, v=vocab_size: (
                f"{n} must hold token ids in [0, {v}) (the vocabulary's size), got ids from "
                f"{int(x.min())} to {int(x.max())}"))
    for name, valid_lens, low, high in lens:
        if valid_lens is not None and valid_lens.numel():
            conditions.append((valid_lens.min() < low) | (valid_lens.max() > high))
            messages.append(lambda n=name, x=valid_lens, a=low, b=high: (
                f"{n} must lie in [{a}, {b}], got {x.tolist()}"))
    if conditions:
        flags = torch.stack(_on_one_device(conditions)).tolist()  # the one host synchronization
        for bad, message in zip(flags, messages):
            if bad:
                raise ValueError(message())
    token = _CHECKED.set(True)
    try:
        yield
    finally:
        _CHECKED.reset(token)


@contextmanager
def token_door(
    X: object, vocab_size: int, valid_lens: object = None, *, min_len: int = 1, name: str = "X",
    more_lens: Sequence[tuple[str, Tensor | None, int, int]] = (),
) -> Iterator[Tensor | None]:
    """The door of a model that reads token ids: ``with token_door(X, V, valid_lens) as lens:``.

    Checks that ``X`` is (batch, steps) integer ids and ``valid_lens`` a (batch,) length tensor
    (or None), then their values (ids in ``[0, vocab_size)``, lengths in ``[min_len, steps]``)
    with one host synchronization, and yields the lengths as an integer tensor; inside the block
    the layers trust them. ``more_lens`` adds other lengths to the same check, as in
    :func:`door` (a decoder's source lengths).
    """
    X = check_tokens(X, name)
    lens = check_valid_lens(valid_lens, *X.shape, min_len=min_len, values=False)
    all_lens = [("valid_lens", lens, min_len, X.shape[1]), *more_lens]
    with door(tokens=[(name, X, vocab_size)], lens=all_lens):
        yield lens
