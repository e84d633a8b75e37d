"""d2lite.shipped: saving and loading a GPT, bits per character, the generation trace and the
playground's HTML (no browser: tests/test_playground.py runs the JavaScript side)."""

from __future__ import annotations

import json
import math

import pytest
import torch

import d2lite as d2l
from d2lite import shipped


@pytest.fixture(scope="module")
def small():
    texts = ["트랜스포머는 어텐션을 씁니다.", "언어 모델은 다음 토큰을 맞힙니다.", "Hello 똠!"] * 3
    tok = d2l.BPETokenizer.train(texts, 320, unit="jamo")
    torch.manual_seed(0)
    net = d2l.GPT(len(tok), 16, 4, 2, 32).eval()
    return net, tok, texts


def test_save_and_load_give_the_same_model(small, tmp_path):
    net, tok, texts = small
    shipped.save_gpt(net, tok, tmp_path, note={"a": 1})
    meta = json.loads((tmp_path / "model.json").read_text(encoding="utf-8"))
    assert meta["note"] == {"a": 1} and meta["config"]["num_blks"] == 2
    # head.weight is the embedding's matrix: stored once
    assert "head.weight" not in [t["name"] for t in meta["tensors"]]
    assert (tmp_path / "weights.bin").stat().st_size == 4 * meta["num_floats"]
    net2, tok2, _ = shipped.load_gpt(tmp_path)
    assert tok2.merges == tok.merges and tok2.alphabet == tok.alphabet
    assert net2.head.weight is net2.embedding.weight
    ids = torch.tensor([tok.encode(texts[0])])
    with torch.no_grad():
        assert torch.equal(net(ids), net2(ids))


def test_save_and_load_reject_bad_arguments(small, tmp_path):
    net, tok, _ = small
    with pytest.raises(TypeError, match="net must be a d2lite GPT"):
        shipped.save_gpt(torch.nn.Linear(2, 2), tok, tmp_path)
    with pytest.raises(TypeError, match="tok must be a BPETokenizer"):
        shipped.save_gpt(net, "tok", tmp_path)
    with pytest.raises(ValueError, match="extra must not set 'config'"):
        shipped.save_gpt(net, tok, tmp_path, config=1)
    with pytest.raises(ValueError, match="tok has"):
        shipped.save_gpt(d2l.GPT(len(tok) + 1, 16, 4, 1, 8), tok, tmp_path)
    with pytest.raises(ValueError, match="model.json and weights.bin"):
        shipped.load_gpt(tmp_path / "nothing")
    with pytest.raises(TypeError, match="directory must be a path"):
        shipped.load_gpt(3)
    shipped.save_gpt(net, tok, tmp_path)
    data = (tmp_path / "weights.bin").read_bytes()
    (tmp_path / "weights.bin").write_bytes(data[:-4])
    with pytest.raises(ValueError, match="floats, model.json says"):
        shipped.load_gpt(tmp_path)


def test_bits_per_char_is_the_chapters_measure(small):
    net, tok, texts = small
    stream = torch.tensor([i for s in texts for i in tok.encode(s + "\n")])
    n = (len(stream) - 1) // 8 * 8
    with torch.no_grad():
        logits = net(stream[:n].reshape(-1, 8))
        nats = torch.nn.functional.cross_entropy(
            logits.flatten(0, 1), stream[1 : n + 1], reduction="sum"
        ).item()
    expect = nats / math.log(2) / len(tok.decode(stream[1 : n + 1]))
    assert shipped.bits_per_char(net, tok, texts, 8) == pytest.approx(expect, rel=1e-6)
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="num_steps must be a positive int"):
            shipped.bits_per_char(net, tok, texts, bad)
    with pytest.raises(TypeError, match="texts must be a list of str"):
        shipped.bits_per_char(net, tok, "text", 8)
    with pytest.raises(ValueError, match="too few for one window"):
        shipped.bits_per_char(net, tok, ["a"], 8)


def test_the_trace_is_greedy_and_counts_cache_rows(small):
    net, tok, _ = small
    rows = shipped.generation_trace(net, tok, "트랜스포머는", 5)
    start = len(tok.encode("트랜스포머는"))
    greedy = net.generate(torch.tensor(tok.encode("트랜스포머는")), 5, top_k=1)
    assert [r["id"] for r in rows] == greedy[start:].tolist()
    for k, r in enumerate(rows):
        assert r["context"] == start + k and r["rows_cached"] == 1
        assert r["rows_uncached"] == start + k + 1
        probs = [p for _, p in r["candidates"]]
        assert probs == sorted(probs, reverse=True) and r["candidates"][0][0] == r["token"]
    with pytest.raises(ValueError, match="exceed max_len"):
        shipped.generation_trace(net, tok, "트랜스포머는", 40)
    with pytest.raises(ValueError, match="prompt must be a non-empty str"):
        shipped.generation_trace(net, tok, "", 3)


def test_the_playground_html_holds_the_widget_and_the_print_trace():
    html = d2l.playground("트랜스포머는", steps=4)._repr_html_()
    assert html.count('class="gpt-playground"') == 1 and 'class="gpt-trace"' in html
    for name in ("gpt.js", "playground.js", "playground.css"):
        assert f"../_static/gpt/{name}" in html
    assert html.count("<tbody><tr>") == 1 and html.count("<tr><td>") == 4
    assert 'class="lang-ko"' in html and 'class="lang-en"' in html
    with pytest.raises(ValueError, match="static_base must be a str ending in '/'"):
        shipped.GPTPlayground(static_base="x")


def test_the_shipped_model_loads_from_the_package():
    net, tok, meta = d2l.load_gpt()
    assert len(tok) == net.vocab_size and meta["val_bpc"] < meta["book_model"]["val_bpc"]
    assert sum(p.numel() for p in net.parameters()) == meta["training"]["num_params"]


def test_the_playground_page_states_the_shipped_model():
    """book/playground.md describes the model it runs in numbers: its configuration and
    parameter count, its training time and the size of weights.bin are the shipped files'."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    page = (root / "book" / "playground.md").read_text(encoding="utf-8")
    net, tok, meta = shipped.load_gpt()
    cfg, run = meta["config"], meta["training"]
    params = sum(p.numel() for p in net.parameters())  # the tied matrix counted once
    assert params == meta["num_floats"] == run["num_params"]
    minutes = round(run["seconds"] / 60)
    mb = (root / "_static" / "gpt" / "weights.bin").stat().st_size / 1e6
    n, h, b, c = cfg["num_hiddens"], cfg["num_heads"], cfg["num_blks"], cfg["max_len"]
    assert run["threads"] == 1 and tok.unit == "jamo" and len(tok) == 1024
    for phrase in (
        f"(은닉 {n}, 헤드 {h}, 블록 {b}, 문맥 {c}토큰, 파라미터 {params:,}개)",
        f"(한 스레드로 약 {minutes}분)",
        f"(float32 가중치 {mb:.1f} MB)",
        f"({n} hidden units, {h} heads, {b} blocks, a context of {c} tokens, "
        f"{params:,} parameters)",
        f"(about {minutes} minutes on one thread)",
        f"(float32 weights, {mb:.1f} MB)",
        "BPE over jamo with a vocabulary of 1024",
        "자모 단위 BPE(어휘 1024)",
    ):
        assert phrase in page, phrase
