"""What a GPU would break, shown on the CPU (issue 47): half precision through the d2l layer,
lengths and inputs on different devices, tables that move with their module, pictures and
counts made from tensors that may live on a GPU."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import d2lite as d2l
from d2lite import checks
from d2lite import d2l as d2l_compat


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_the_d2l_masked_softmax_works_in_half_precision(dtype):
    # d2l fills hidden scores with -1e6, which float16 cannot hold (masked_fill raised)
    X = torch.randn(2, 3, 4, generator=d2l.generator(0))
    lens = torch.tensor([2, 3])
    w = d2l_compat.masked_softmax(X.to(dtype), lens)
    assert w.dtype == dtype
    expected = d2l_compat.masked_softmax(X, lens)
    assert torch.allclose(w.float(), expected, atol=1e-2)
    assert torch.all(w[0, :, 2:] == 0) and torch.all(w[1, :, 3:] == 0)


def test_the_d2l_masked_softmax_hides_keys_whatever_the_kept_scores():
    # kept scores below -1e6 lost to d2l's fill: the hidden key took all the weight
    X = torch.tensor([[[-3e6, -2e6, 5.0, 7.0]]])
    w = d2l_compat.masked_softmax(X, torch.tensor([2]))
    assert w[0, 0, 2:].tolist() == [0.0, 0.0]
    assert w[0, 0, 1].item() == 1.0  # exp(-1e6) of the other kept key is 0 in float32
    w = d2l_compat.masked_softmax(torch.full((1, 2, 3), -1e30), torch.tensor([[1, 2]]))
    assert w[0].tolist() == [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]]


def test_a_d2l_row_of_length_zero_gets_equal_weights_as_in_d2l():
    X = torch.randn(1, 2, 4, generator=d2l.generator(1))
    w = d2l_compat.masked_softmax(X, torch.tensor([[0, 4]]))
    assert torch.equal(w[0, 0], torch.full((4,), 0.25))
    assert torch.allclose(w[0, 1], torch.softmax(X[0, 1], -1))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_a_d2l_transformer_runs_in_half_precision(dtype):
    d2l.set_seed(0)
    enc = d2l_compat.TransformerEncoder(30, 16, 32, 4, 2, 0.0)
    dec = d2l_compat.TransformerDecoder(30, 16, 32, 4, 2, 0.0)
    X, lens = torch.randint(0, 30, (2, 5), generator=d2l.generator(0)), torch.tensor([3, 5])
    enc(X, lens), dec(X, dec.init_state(enc(X, lens), lens))  # size the lazy layers
    enc.eval().to(dtype), dec.eval().to(dtype)
    out = enc(X, lens)
    assert out.dtype == dtype and torch.isfinite(out).all()
    Y, _ = dec(X, dec.init_state(out, lens))
    assert Y.dtype == dtype and torch.isfinite(Y).all()
    for w in enc.attention_weights:
        assert torch.all(w.reshape(2, 4, 5, 5)[0, :, :, 3:] == 0)


def test_the_positional_table_is_a_buffer_that_state_dicts_leave_out():
    pe = d2l_compat.PositionalEncoding(8, 0.0, max_len=20)
    assert "P" in dict(pe.named_buffers()) and pe.state_dict() == {}
    pe.to(torch.float64)  # moves and casts with the module, instead of a copy per call
    assert pe.P.dtype == torch.float64
    X = torch.zeros(1, 5, 8, dtype=torch.float64)
    assert torch.equal(pe(X), pe.P[:, :5])
    assert pe(torch.zeros(1, 5, 8, dtype=torch.float32)).dtype == torch.float32


def test_d2l_lengths_may_live_on_another_device_than_the_scores():
    # the meta device stands in for a GPU: the lengths must follow the scores there
    X = torch.empty(2, 3, 4, device="meta")
    assert d2l_compat.masked_softmax(X, torch.tensor([2, 3])).device.type == "meta"


def test_a_door_gathers_its_conditions_on_one_device():
    # ids on a GPU with lengths on the CPU are a normal call; the check stacks them together
    ids, lens = torch.empty(2, 3, device="meta"), torch.tensor([1, 2])
    moved = checks._on_one_device([ids.min() < 0, lens.min() < 1])
    assert [t.device.type for t in moved] == ["meta", "meta"]
    on_cpu = checks._on_one_device([torch.tensor(True), lens.max() > 3])
    assert [t.device.type for t in on_cpu] == ["cpu", "cpu"]
    with checks.door(tokens=[("X", torch.tensor([[1, 2]]), 5)],
                     lens=[("valid_lens", torch.tensor([2]), 1, 2)]):
        pass
    with pytest.raises(ValueError, match=r"valid_lens must lie in \[1, 2\], got \[3\]"):
        with checks.door(lens=[("valid_lens", torch.tensor([3]), 1, 2)]):
            pass


def test_the_fashion_mnist_pictures_take_tensors_from_any_device(monkeypatch):
    shown = []

    class Img(torch.Tensor):  # a tensor that, like a GPU's, refuses numpy() until on the CPU
        def numpy(self, *args, **kwargs):
            if not getattr(self, "_on_cpu", False):
                raise TypeError("can't convert cuda:0 device type tensor to numpy")
            return super().numpy(*args, **kwargs)

        def cpu(self, *args, **kwargs):
            out = super().cpu(*args, **kwargs).as_subclass(Img)
            out._on_cpu = True
            return out

    data = d2l_compat.FashionMNIST.__new__(d2l_compat.FashionMNIST)
    monkeypatch.setattr("matplotlib.axes.Axes.imshow", lambda ax, img, **k: shown.append(img))
    X = torch.zeros(2, 1, 4, 4).as_subclass(Img)
    data.visualize((X, torch.tensor([0, 1])), ncols=2)
    assert len(shown) == 2 and shown[0].shape == (4, 4)


def test_accuracy_compares_predictions_and_labels_on_the_models_device(monkeypatch):
    # the labels go to the predictions' device, not the predictions to the CPU
    moved = []
    real_cpu = torch.Tensor.cpu
    monkeypatch.setattr(torch.Tensor, "cpu", lambda t, *a, **k: (moved.append(t.shape),
                                                                 real_cpu(t, *a, **k))[1])
    X = torch.randn(6, 3, generator=d2l.generator(0))
    data = d2l.load_array([X, (X[:, 0] > 0).long()], 3, seed=0)
    acc = d2l.accuracy(nn.Linear(3, 2), data, torch.device("cpu"))
    assert 0 <= acc <= 1 and moved == []


def test_the_d2l_layer_summary_builds_its_input_where_the_layers_are(capsys):
    class Net(d2l_compat.Classifier):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(4, 3), nn.ReLU())

    Net().to("meta").layer_summary((2, 4))  # meta stands in for a GPU: a CPU input would fail
    assert "Linear output shape:\t torch.Size([2, 3])" in capsys.readouterr().out


def test_chapter_9_downloads_fashion_mnist_only_when_the_reader_turns_it_on():
    # a GPU alone must not start a 30 MB download: the one call sits behind a switch that the
    # chapter leaves off and nothing but the reader turns on
    import ast
    from pathlib import Path

    import jupytext

    source = Path(__file__).resolve().parents[1] / "book" / "09_vit.md"
    code = "\n".join(c.source for c in jupytext.read(source).cells if c.cell_type == "code")
    tree = ast.parse("\n".join(ln for ln in code.splitlines() if not ln.lstrip().startswith("%")))
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
             and getattr(n.func, "attr", None) == "load_data_fashion_mnist"]
    switches = [n for n in ast.walk(tree) if isinstance(n, ast.If)
                and isinstance(n.test, ast.Name) and n.test.id == "use_fashion_mnist"]
    assert len(calls) == 1 and len(switches) == 1
    assert any(c is n for n in ast.walk(switches[0]) for c in calls)
    settings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Assign)
                and any(getattr(t, "id", None) == "use_fashion_mnist" for t in n.targets)]
    assert len(settings) == 1 and isinstance(settings[0], ast.Constant)
    assert settings[0].value is False
