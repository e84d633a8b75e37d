"""``from d2lite import d2l``: d2l 1.0's PyTorch API, exercised by d2l-style cells written here."""

import gzip
import hashlib
import math
import os
import struct
import subprocess
import sys
import urllib.error
import zipfile

os.environ.setdefault("MPLBACKEND", "Agg")

import matplotlib  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib import pyplot as plt  # noqa: E402
from torch import nn  # noqa: E402

from d2lite import d2l  # noqa: E402


def test_import_d2lite_does_not_load_the_compat_module():
    code = "import sys, d2lite; print('d2lite.d2l' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_tensor_helpers():
    x = d2l.arange(12, dtype=d2l.float32)
    assert d2l.reshape(x, (3, 4)).shape == (3, 4)
    assert d2l.reduce_sum(x).item() == 66
    assert d2l.astype(x, torch.int64).dtype == torch.int64
    assert d2l.concat((d2l.ones(2), d2l.zeros(3))).tolist() == [1, 1, 0, 0, 0]
    assert isinstance(d2l.numpy(d2l.eye(2)), np.ndarray)
    assert d2l.normal(0, 1, (2, 3)).shape == (2, 3)
    assert d2l.rand(2).shape == d2l.randn(2).shape == (2,)
    assert torch.allclose(d2l.exp(d2l.tensor([0.0])), d2l.tensor([1.0]))
    assert d2l.abs(d2l.sin(d2l.tensor([-math.pi / 2]))).item() == pytest.approx(1.0)
    assert d2l.plt is plt
    d2l.use_svg_display()
    d2l.check_shape(x, (12,))
    with pytest.raises(AssertionError):
        d2l.check_shape(x, (3, 4))


def test_hyperparameters_and_add_to_class():
    class B(d2l.HyperParameters):
        def __init__(self, a, b, c=3, ignored=0):
            self.save_hyperparameters(ignore=["ignored"])

    b = B(1, 2)
    assert (b.a, b.b, b.c) == (1, 2, 3) and not hasattr(b, "ignored")

    @d2l.add_to_class(B)
    def total(self):
        return self.a + self.b + self.c

    assert b.total() == 6


class SyntheticRegression(d2l.DataModule):
    def __init__(self, w, b, noise=0.01, num_train=1000, num_val=100, batch_size=20):
        super().__init__()
        self.save_hyperparameters()
        g = torch.Generator().manual_seed(0)
        n = num_train + num_val
        self.X = torch.randn(n, len(w), generator=g)
        self.y = self.X @ w.reshape(-1, 1) + b + noise * torch.randn(n, 1, generator=g)

    def get_dataloader(self, train):
        i = slice(0, self.num_train) if train else slice(self.num_train, None)
        return self.get_tensorloader((self.X, self.y), train, i)


class LinearRegression(d2l.Module):
    def __init__(self, lr):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.LazyLinear(1)

    def loss(self, y_hat, y):
        return nn.functional.mse_loss(y_hat, y)


def test_trainer_fits_a_linear_model():
    torch.manual_seed(0)
    data = SyntheticRegression(w=torch.tensor([2.0, -3.4]), b=4.2)
    model = LinearRegression(lr=0.05)
    trainer = d2l.Trainer(max_epochs=3)
    trainer.fit(model, data)
    assert trainer.num_train_batches == 50 and trainer.num_val_batches == 5
    assert trainer.train_batch_idx == 150
    w, b = model.net.weight.data.reshape(-1), model.net.bias.data
    assert torch.allclose(w, torch.tensor([2.0, -3.4]), atol=0.05), w
    assert abs(b.item() - 4.2) < 0.05
    # The live plot collected train and validation losses: one averaged point per half epoch.
    assert len(model.board.data["train_loss"]) == 6
    assert len(model.board.data["val_loss"]) == 3


def test_gradient_clipping_bounds_the_global_norm():
    model = LinearRegression(lr=0.1)
    model(torch.zeros(1, 3))
    for p in model.parameters():
        p.grad = torch.full_like(p, 10.0)
    d2l.Trainer(max_epochs=1, gradient_clip_val=1).clip_gradients(1, model)
    norm = torch.sqrt(sum((p.grad**2).sum() for p in model.parameters()))
    assert norm.item() == pytest.approx(1.0, rel=1e-5)


def test_classifier_accuracy_and_loss():
    clf = d2l.Classifier()
    Y_hat = torch.tensor([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]])
    Y = torch.tensor([1, 1, 1])
    assert clf.accuracy(Y_hat, Y).item() == pytest.approx(2 / 3)
    assert clf.loss(Y_hat, Y).shape == ()


def test_seq2seq_encoder_is_time_first_and_attention_decoder_lists_weights():
    vocab, embed, hidden, layers, batch, steps = 10, 8, 16, 2, 4, 9
    encoder = d2l.Seq2SeqEncoder(vocab, embed, hidden, layers)
    X = torch.zeros((batch, steps), dtype=torch.long)
    outputs, state = encoder(X)
    d2l.check_shape(outputs, (steps, batch, hidden))
    d2l.check_shape(state, (layers, batch, hidden))
    decoder = d2l.Seq2SeqAttentionDecoder(vocab, embed, hidden, layers)
    Y, dec_state = decoder(X, decoder.init_state(encoder(X), None))
    d2l.check_shape(Y, (batch, steps, vocab))
    assert isinstance(decoder.attention_weights, list) and len(decoder.attention_weights) == steps
    d2l.check_shape(decoder.attention_weights[0], (batch, 1, steps))
    d2l.check_shape(dec_state[0], (batch, steps, hidden))


class TinyCopy(d2l.DataModule):
    """Copy task: the target is the source (token ids 3..7), 1 = <pad>, 2 = <bos>."""

    def __init__(self, batch_size=16, num_steps=5, n=64):
        super().__init__()
        self.save_hyperparameters()
        g = torch.Generator().manual_seed(0)
        src = torch.randint(3, 8, (n, num_steps), generator=g)
        valid = torch.full((n,), num_steps)
        tgt_in = torch.cat([torch.full((n, 1), 2), src[:, :-1]], 1)
        self.arrays = (src, tgt_in, valid, src)

    def get_dataloader(self, train):
        return self.get_tensorloader(self.arrays, train)


def test_seq2seq_trains_with_trainer_and_predicts():
    torch.manual_seed(0)
    data = TinyCopy()
    encoder = d2l.Seq2SeqEncoder(8, 16, 32, 1)
    decoder = d2l.Seq2SeqAttentionDecoder(8, 16, 32, 1)
    model = d2l.Seq2Seq(encoder, decoder, tgt_pad=1, lr=0.01)
    batch = next(iter(data.train_dataloader()))
    before = model.loss(model(*batch[:-1]), batch[-1]).item()
    d2l.Trainer(max_epochs=15, gradient_clip_val=1).fit(model, data)
    after = model.loss(model(*batch[:-1]), batch[-1]).item()
    assert after < before / 2, (before, after)
    model.eval()
    preds, weights = model.predict_step(batch, "cpu", 5, save_attention_weights=True)
    d2l.check_shape(preds, (16, 5))
    assert len(weights) == 5 and isinstance(weights[0], list)


def test_seq2seq_loss_ignores_padding():
    model = d2l.Seq2Seq(d2l.Seq2SeqEncoder(5, 4, 4, 1), d2l.Seq2SeqDecoder(5, 4, 4, 1), 0, 0.1)
    Y_hat = torch.randn(1, 3, 5)
    Y = torch.tensor([[2, 0, 0]])
    expected = nn.functional.cross_entropy(Y_hat[0, :1], Y[0, :1])
    assert model.loss(Y_hat, Y).item() == pytest.approx(expected.item(), rel=1e-6)


def test_multihead_attention_shapes_and_weight_layout():
    num_hiddens, num_heads, batch, n_q, n_k = 100, 5, 2, 4, 6
    attention = d2l.MultiHeadAttention(num_hiddens, num_heads, 0.5)
    attention.eval()
    X, Y = torch.ones((batch, n_q, num_hiddens)), torch.ones((batch, n_k, num_hiddens))
    out = attention(X, Y, Y, torch.tensor([3, 2]))
    d2l.check_shape(out, (batch, n_q, num_hiddens))
    w = attention.attention.attention_weights
    d2l.check_shape(w, (batch * num_heads, n_q, n_k))
    assert torch.all(w[:num_heads, :, 3:] == 0) and torch.all(w[num_heads:, :, 2:] == 0)


def test_masked_softmax_values():
    X = torch.zeros(2, 2, 4)
    w = d2l.masked_softmax(X, torch.tensor([2, 3]))
    assert torch.allclose(w[0, 0], torch.tensor([0.5, 0.5, 0, 0]))
    w2 = d2l.masked_softmax(X, torch.tensor([[1, 3], [2, 4]]))
    assert torch.allclose(w2[1, 1], torch.full((4,), 0.25))


def test_transformer_encoder_and_decoder_weights_are_lists():
    enc = d2l.TransformerEncoder(200, 24, 48, 8, 2, 0.5)
    enc.eval()
    X = torch.ones((2, 100), dtype=torch.long)
    d2l.check_shape(enc(X, torch.tensor([3, 2])), (2, 100, 24))
    assert len(enc.attention_weights) == 2
    d2l.check_shape(enc.attention_weights[0], (16, 100, 100))
    dec = d2l.TransformerDecoder(200, 24, 48, 8, 2, 0.5)
    dec.eval()
    state = dec.init_state(enc(X, torch.tensor([3, 2])), torch.tensor([3, 2]))
    out, state = dec(torch.ones((2, 1), dtype=torch.long), state)
    d2l.check_shape(out, (2, 1, 200))
    self_w, cross_w = dec.attention_weights
    d2l.check_shape(cross_w[1], (16, 1, 100))


def test_positional_encoding_matches_the_formula():
    pe = d2l.PositionalEncoding(32, 0)
    P = pe.P[0]
    assert P[3, 4].item() == pytest.approx(math.sin(3 / 10000 ** (4 / 32)), abs=1e-6)
    assert P[3, 5].item() == pytest.approx(math.cos(3 / 10000 ** (4 / 32)), abs=1e-6)


def test_vit_parts_and_forward():
    X = torch.zeros(4, 3, 96, 96)
    patch = d2l.PatchEmbedding(96, 16, 512)
    d2l.check_shape(patch(X), (4, 36, 512))
    mlp = d2l.ViTMLP(48, 24)
    assert hasattr(mlp, "dense1") and hasattr(mlp, "dense2")
    blk = d2l.ViTBlock(24, 24, 48, 8, 0.5)
    blk.eval()
    d2l.check_shape(blk(torch.ones(2, 100, 24)), (2, 100, 24))
    vit = d2l.ViT(96, 16, 64, 128, 4, 2, 0.1, 0.1)
    d2l.check_shape(vit(X), (4, 10))
    assert isinstance(vit, d2l.Classifier)


def test_addnorm_and_ffn():
    ffn = d2l.PositionWiseFFN(4, 8)
    d2l.check_shape(ffn(torch.ones((2, 3, 4))), (2, 3, 8))
    add_norm = d2l.AddNorm(4, 0.5)
    add_norm.eval()
    d2l.check_shape(add_norm(torch.ones((2, 3, 4)), torch.ones((2, 3, 4))), (2, 3, 4))


def test_bleu_matches_d2l_for_short_predictions():
    assert d2l.bleu("a", "a b", k=2) == pytest.approx(math.exp(-1))
    assert d2l.bleu("il est bon", "il est bon", k=2) == 1.0
    assert d2l.bleu("il est", "il est bon", k=2) == pytest.approx(math.exp(-0.5))
    assert d2l.bleu("il a", "il est bon", k=2) == 0.0  # no shared 2-gram


def test_additive_and_dot_attention():
    queries, keys = torch.normal(0, 1, (2, 1, 20)), torch.normal(0, 1, (2, 10, 2))
    values = torch.arange(40, dtype=torch.float32).reshape(1, 10, 4).repeat(2, 1, 1)
    add = d2l.AdditiveAttention(8, 0.1)
    add.eval()
    d2l.check_shape(add(queries, keys, values, torch.tensor([2, 6])), (2, 1, 4))
    dot = d2l.DotProductAttention(0.5)
    dot.eval()
    q = torch.normal(0, 1, (2, 1, 2))
    d2l.check_shape(dot(q, keys, values, torch.tensor([2, 6])), (2, 1, 4))


def test_show_heatmaps_and_plot_return_nothing_and_figsize_is_the_figure():
    plt.close("all")
    assert d2l.show_heatmaps(torch.rand(2, 4, 3, 3), "k", "q", figsize=(7, 3.5)) is None
    fig = plt.gcf()
    assert tuple(fig.get_size_inches()) == (7, 3.5)
    # per-panel colour scales, as in d2l: one colour bar per panel
    assert len(fig.axes) == 2 * 4 * 2
    plt.close("all")
    assert d2l.plot(torch.arange(3.0), torch.ones(3)) is None
    # d2l draws on the current axes and accepts an empty or shorter legend
    d2l.plot(torch.arange(3.0), [torch.zeros(3), torch.ones(3)], "x", "y", legend=["zero"])
    d2l.plot(torch.arange(3.0), torch.ones(3), legend=[])
    assert len(plt.get_fignums()) == 1 and len(plt.gca().get_lines()) == 4
    plt.close("all")


# -- data modules, offline ---------------------------------------------------------------------


def _fake_fra_eng(tmp_path):
    text = "\n".join(["Go.\tVa !", "Hi.\tSalut !", "Run!\tCours\u202f!", "Go.\tVa !",
                      "Hi.\tSalut.", "Run!\tCourez !"] * 3)
    archive = tmp_path / "src" / "fra-eng.zip"
    archive.parent.mkdir()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("fra-eng/fra.txt", text)
    return archive, hashlib.sha1(archive.read_bytes()).hexdigest()


def test_mtfraeng_downloads_verifies_and_builds_arrays(tmp_path, monkeypatch, capsys):
    archive, digest = _fake_fra_eng(tmp_path)
    monkeypatch.setitem(d2l.DATA_HUB, "fra-eng.zip", (archive.as_uri(), "sha1", digest))
    data = d2l.MTFraEng(batch_size=3, num_steps=5, num_train=8, num_val=4,
                        root=str(tmp_path / "data"))
    src, tgt, src_valid_len, label = data.arrays
    assert src.shape == (13, 5) and tgt.shape == label.shape == (13, 5)
    assert "fra-eng.zip: 100%" in capsys.readouterr().err  # the progress bar (tqdm's)
    # "go ." + <eos> + one <pad>: valid length 3 (the pad does not count)
    assert src_valid_len[0].item() == 3
    assert data.src_vocab.idx_to_token == sorted(data.src_vocab.idx_to_token)
    assert tgt[0, 0].item() == data.tgt_vocab["<bos>"]
    batch = next(iter(data.train_dataloader()))
    assert len(batch) == 4 and batch[0].shape == (3, 5)
    src2, *_ = data.build(["hi ."], ["salut !"])
    assert src2.shape == (1, 5)


def test_mtfraeng_rejects_a_wrong_digest(tmp_path, monkeypatch):
    archive, _ = _fake_fra_eng(tmp_path)
    monkeypatch.setitem(d2l.DATA_HUB, "fra-eng.zip", (archive.as_uri(), "sha1", "0" * 40))
    with pytest.raises(ValueError, match="expected 0000"):
        d2l.MTFraEng(batch_size=3, root=str(tmp_path / "data"))
    assert not list((tmp_path / "data").glob("fra-eng.zip*"))


def test_offline_download_says_where_to_put_the_file(tmp_path, monkeypatch):
    def offline(*args, **kwargs):
        raise urllib.error.URLError("no network")

    monkeypatch.setattr(d2l.urllib.request, "urlopen", offline)
    with pytest.raises(OSError, match="offline.*fra-eng.zip"):
        d2l.MTFraEng(batch_size=3, root=str(tmp_path / "data"))


def _idx_gz(path, array):
    header = struct.pack(">I", 0x0800 + array.ndim) + b"".join(
        struct.pack(">I", n) for n in array.shape)
    with gzip.open(path, "wb") as f:
        f.write(header + array.astype(np.uint8).tobytes())


def test_fashion_mnist_from_a_fake_mirror(tmp_path, monkeypatch):
    from d2lite import vision

    mirror = tmp_path / "mirror"
    mirror.mkdir()
    rng = np.random.default_rng(0)
    digests = {}
    for prefix, n in (("train", 12), ("t10k", 6)):
        _idx_gz(mirror / f"{prefix}-images-idx3-ubyte.gz", rng.integers(0, 256, (n, 28, 28)))
        _idx_gz(mirror / f"{prefix}-labels-idx1-ubyte.gz", rng.integers(0, 10, (n,)))
    for name in vision.FASHION_MNIST_FILES:
        digests[name] = hashlib.sha256((mirror / name).read_bytes()).hexdigest()
    monkeypatch.setattr(vision, "FASHION_MNIST_FILES", digests)
    monkeypatch.setattr(d2l.FashionMNIST, "MIRROR", mirror.as_uri() + "/")
    data = d2l.FashionMNIST(batch_size=4, resize=(32, 32), root=str(tmp_path / "data"))
    X, y = next(iter(data.val_dataloader()))
    assert X.shape == (4, 1, 32, 32) and y.shape == (4,)
    assert 0 <= X.min() and X.max() <= 1
    assert len(data.text_labels(y)) == 4
    assert data.train[0].dtype == torch.uint8  # resized per batch, not all at once
    X, _ = next(iter(data.train_dataloader()))
    assert X.shape == (4, 1, 32, 32)


def test_every_listed_name_exists_and_diff_notes_are_bilingual():
    for name in d2l.__all__:
        assert hasattr(d2l, name), name
        note = getattr(getattr(d2l, name), "__d2l_diff__", None)
        if note is not None:
            assert set(note) == {"ko", "en"}, name
            assert any("\uac00" <= ch <= "\ud7a3" for ch in note["ko"]), name


matplotlib.use("Agg")


def test_korean_notes_name_real_shared_names():
    import d2lite

    missing = [name for name in d2l.BOOK_DIFFS_KO if not hasattr(d2lite, name)]
    assert not missing, missing
    for name, note in d2l.BOOK_DIFFS_KO.items():
        assert any("\uac00" <= ch <= "\ud7a3" for ch in note), name


def test_in_jupyter_each_figure_shows_once_and_nothing_is_echoed(monkeypatch):
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel uses Jupyter's inline backend
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    fit = (
        "import torch\nfrom torch import nn\nfrom d2lite import d2l\n"
        "class Data(d2l.DataModule):\n"
        "    def __init__(self, batch_size=16):\n"
        "        super().__init__(); self.save_hyperparameters()\n"
        "        self.X = torch.randn(64, 2); self.y = self.X.sum(1, keepdim=True)\n"
        "    def get_dataloader(self, train):\n"
        "        i = slice(0, 48) if train else slice(48, None)\n"
        "        return self.get_tensorloader((self.X, self.y), train, i)\n"
        "class Lin(d2l.Module):\n"
        "    def __init__(self, lr):\n"
        "        super().__init__(); self.save_hyperparameters(); self.net = nn.LazyLinear(1)\n"
        "    def loss(self, y_hat, y): return nn.functional.mse_loss(y_hat, y)\n"
        "d2l.Trainer(max_epochs=3).fit(Lin(0.05), Data())"
    )
    cells = [fit,
             "d2l.show_heatmaps(torch.rand(2, 4, 3, 3), 'keys', 'queries', figsize=(7, 3.5))",
             "d2l.plot(torch.arange(3.0), torch.ones(3))",
             "import d2lite\nd2lite.plot(torch.arange(3.0), torch.ones(3))"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    for cell in nb.cells:
        kinds = [out["output_type"] for out in cell.outputs]
        # one image (the live training plot is updated in place), no echoed return value
        assert kinds == ["display_data"], (cell.source[-60:], kinds)
        assert "image/png" in cell.outputs[0]["data"]


def test_the_compat_page_runs_here_as_the_website_build_runs_it():
    """book/d2l_compat.md asserts a Korean line for every public name: a new name without one
    fails here in seconds instead of in the website build."""
    import jupytext

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    page = jupytext.read(os.path.join(root, "book", "d2l_compat.md"))
    namespace: dict = {}
    cwd = os.getcwd()
    os.chdir(os.path.join(root, "book"))  # where the build runs the page
    try:
        for cell in page.cells:
            if cell.cell_type == "code":
                exec(compile(cell.source, "d2l_compat.md", "exec"), namespace)
    finally:
        os.chdir(cwd)
    assert namespace["NAMES"] and "count_flops" in namespace["NAMES"]


def test_the_notes_on_d2l_live_once_in_notes_json():
    """d2lite.d2l and the appendix page read d2lite/d2l/notes.json; no copy is kept in code."""
    import json
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    notes = json.loads((root / "d2lite" / "d2l" / "notes.json").read_text(encoding="utf-8"))
    assert {"d2l_diff", "book_note", "book_diff_ko", "summary_ko"} <= set(notes)
    assert d2l.BOOK_DIFFS_KO == notes["book_diff_ko"]
    for name, note in notes["d2l_diff"].items():
        assert getattr(d2l, name).__d2l_diff__ == note, name
    literal = re.compile(
        r'^[ \t]*[\w.]*\b(__d2l_diff__|SUMMARY_KO|BOOK_DIFFS_KO|NOTES)\b[^=\n]*=\s*\{\s*["\n]',
        re.M,
    )
    for path in [*(root / "d2lite").rglob("*.py"), root / "book" / "d2l_compat.md"]:
        found = literal.search(path.read_text(encoding="utf-8"))
        assert not found, f"{path.relative_to(root)}: {found.group(0)!r}, not in notes.json"


def test_download_is_the_shared_verified_downloader(tmp_path, monkeypatch, capsys):
    from pathlib import Path

    from d2lite import vision

    source = tmp_path / "src" / "a.bin"
    source.parent.mkdir()
    source.write_bytes(b"hello")
    digest = hashlib.sha256(b"hello").hexdigest()
    calls = []
    fetch = vision._fetch
    monkeypatch.setattr(vision, "_fetch", lambda *a, **k: (calls.append(a[0]), fetch(*a, **k)))
    path = Path(d2l.download(source.as_uri(), tmp_path / "data", digest))
    assert path.read_bytes() == b"hello" and len(calls) == 1
    assert "a.bin: 100%" in capsys.readouterr().err  # d2l's progress bar (tqdm's)
    path.write_bytes(b"damaged")  # fetched again: the cached copy fails the check
    assert Path(d2l.download(source.as_uri(), tmp_path / "data", digest)).read_bytes() == b"hello"
    assert len(calls) == 2
    path.write_bytes(b"any")  # without a digest, as in d2l, a cached file is kept
    d2l.download(source.as_uri(), tmp_path / "data")
    assert len(calls) == 2 and path.read_bytes() == b"any"
