"""The book's GPT in the browser (_static/gpt): the JavaScript engine against PyTorch, and the
playground widget, in headless Chromium through Playwright.

The engine's tests need no website build: a folder holding the files of ``_static/gpt`` and
small harness pages is served on 127.0.0.1, and every request that leaves 127.0.0.1 is aborted
(the page must work offline), so `make test` runs them beside the website build
(conftest.py's SITE_FREE). tests/test_site_playground.py opens the built site's playground.

Run them with ``python -m pytest -m book tests/test_playground.py`` (about
a minute: no site build).
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import sys

import pytest
import torch

import d2lite as d2l
from d2lite.shipped import bits_per_char, load_gpt
from tools.core import ROOT
from tools.website import serve

STATIC = ROOT / "_static" / "gpt"
pytestmark = pytest.mark.book

PROMPTS = [
    "트랜스포머는",
    "어텐션은 쿼리와 키의",
    "언어 모델은 다음 토큰을",
    "이 책은 한국어로",
    "셀프 어텐션",
    "똠",
    "뷁뷁 똠얌꿍",
    "The Transformer",
    "attention is all",
    "GPT 모델은 token을",
    "한국어 and English 섞어서",
    "😀 이모지",
    "👍🏽🇰🇷 좋아요",
    "   공백이   많은   글",
    "줄바꿈\n다음 줄",
    "ㄱㄴㄷ 낱자모",
    "수식 $x^2$ 와 숫자 1024",
    "漢字 한자",
    "a",
    "다음",
]
GREEDY_TOKENS = 32


@pytest.fixture(scope="module")
def shipped():
    net, tok, meta = load_gpt(STATIC)
    return net, tok, meta


# What the theme does to a cell's HTML output in dark mode: a light panel with dark text.
THEME_PANEL = (
    "<style>html[data-theme=dark] div.output.text_html{background-color:#ddd;color:#121212;"
    "padding:4px}</style>"
)


def _harness(lang: str, theme: str = "light", head_scripts: bool = False) -> str:
    """A page with one widget. head_scripts: the scripts are also in <head> under other URLs,
    as on the website (Jupyter Book adds every script of _static to every page)."""
    dark = ' data-theme="dark" style="background:#121212;color:#ddd"' if theme == "dark" else ""
    head = '<script src="gpt/gpt.js?v=1"></script><script src="gpt/playground.js?v=1"></script>'
    return (
        f'<!doctype html><html lang="{lang}" data-book-lang="{lang}"{dark}><head>'
        '<meta charset="utf-8"><meta name="viewport" content="width=device-width, '
        'initial-scale=1"><link rel="icon" href="data:,">'
        '<link rel="stylesheet" href="lang-switch.css">'
        '<link rel="stylesheet" href="gpt/playground.css"><title>playground</title>'
        f'{THEME_PANEL if theme == "dark" else ""}{head if head_scripts else ""}</head>'
        '<body style="margin:8px">'
        '<div class="bd-content"><div class="cell_output"><div class="output text_html">'
        '<div class="gpt-playground"></div></div></div></div>'
        '<script src="gpt/gpt.js"></script><script src="gpt/playground.js"></script>'
        "</body></html>"
    )


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gpt")
    shutil.copytree(STATIC, folder / "gpt")
    shutil.copy(ROOT / "_static" / "lang-switch.css", folder / "lang-switch.css")
    (folder / "engine.html").write_text(
        '<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">'
        '<title>engine</title></head><body><script src="gpt/gpt.js"></script></body></html>',
        encoding="utf-8",
    )
    for lang in ("ko", "en"):
        (folder / f"{lang}.html").write_text(_harness(lang), encoding="utf-8")
    (folder / "dark.html").write_text(_harness("ko", "dark"), encoding="utf-8")
    (folder / "twice.html").write_text(_harness("en", head_scripts=True), encoding="utf-8")
    with serve(folder) as url:
        yield url


def _offline_page(context, url: str, width: int = 1280):
    """A page on which nothing leaves 127.0.0.1; console errors are collected."""
    blocked = []

    def route(r):
        if r.request.url.startswith(("http://127.0.0.1", "data:", "blob:")):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.set_viewport_size({"width": width, "height": 900})
    page.errors = []
    page.blocked = blocked
    page.requests = []  # every URL the page asked for
    page.on("request", lambda r: page.requests.append(r.url))
    page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.goto(url, wait_until="load")
    return page


@pytest.fixture(scope="module")
def engine(browser, harness):
    """The engine page with the shipped model loaded as window.M."""
    ctx = browser.new_context()
    page = _offline_page(ctx, f"{harness}/engine.html")
    page.evaluate("async () => { window.M = await D2GPT.load('gpt/'); }")
    yield page
    assert page.errors == [] and page.blocked == []
    ctx.close()


# -- the files ----------------------------------------------------------------------------------


def test_the_shipped_files_are_the_package_data(shipped):
    """_static/gpt (website) and d2lite/gpt_model (package data) hold the same model, with the
    hash of the corpus it read and its tokenizer beside it."""
    for name in ("model.json", "weights.bin"):
        assert (STATIC / name).read_bytes() == (ROOT / "d2lite" / "gpt_model" / name).read_bytes()
    net, tok, meta = shipped
    assert re.fullmatch(r"[0-9a-f]{64}", meta["corpus"]["sha256"])
    assert meta["tokenizer"]["unit"] == "jamo" and len(tok) == net.vocab_size == 1024
    assert (STATIC / "weights.bin").stat().st_size == 4 * meta["num_floats"] < 3_000_000


def test_the_held_out_paragraphs_were_not_trained_on(shipped):
    """The corpus grows as the book does, so today's last 10% of paragraphs is not the split the
    shipped model was trained with: none of them may be among its training paragraphs (their
    fingerprints are in model.json), or the comparison below would flatter it."""
    from d2lite.shipped import paragraph_keys
    from tools import train_lm

    _, _, meta = shipped
    keys = set(meta["corpus"]["train_keys"])
    assert len(keys) == len(meta["corpus"]["train_keys"]) == meta["corpus"]["train_paragraphs"]
    _, _, val_p = train_lm.split()
    seen = [p[:60] for p, key in zip(val_p, paragraph_keys(val_p)) if key in keys]
    assert not seen, f"held-out paragraphs the shipped model was trained on: {seen}"


def test_the_shipped_model_beats_the_book_model(shipped):
    """On today's held-out paragraphs (the corpus grows as the book does), the shipped model's
    bits per character are clearly below those of chapter 10's model, retrained here with the
    chapter's recipe (tools.train_lm's copy of it) on today's corpus."""
    from tools import train_lm

    net, tok, _ = shipped
    paragraphs, train_p, val_p = train_lm.split()
    book_tok = d2l.BPETokenizer.train(train_p, 1024, unit="jamo")
    book = train_lm.train_book_model(book_tok, train_lm.stream(book_tok, train_p))
    book_bpc = bits_per_char(book, book_tok, val_p, 48)
    shipped_bpc = bits_per_char(net, tok, val_p, 48)
    print(f"validation bits per character: book model {book_bpc:.3f}, shipped {shipped_bpc:.3f}")
    assert shipped_bpc < book_bpc - 0.5


# -- engine parity --------------------------------------------------------------------------------

RUN_PROMPT = """async ([prompts, n]) => prompts.map((p) => {
  const ids = M.tokenizer.encode(p), s = M.session();
  const logits = []; let o;
  for (const id of ids) { o = s.step(id); logits.push(Array.from(o.logits)); }
  const gen = [];
  for (let k = 0; k < n; k++) {
    const next = D2GPT.argmax(o.logits); gen.push(next);
    o = s.step(next); logits.push(Array.from(o.logits));
  }
  const full = M.forwardFull(ids.concat(gen));
  let gap = 0;
  full.forEach((row, t) => row.forEach((v, i) => {
    gap = Math.max(gap, Math.abs(v - logits[t][i]));
  }));
  return {ids, gen, logits, gap};
})"""


def test_browser_logits_and_greedy_tokens_equal_pytorch(shipped, engine):
    net, tok, _ = shipped
    results = engine.evaluate(RUN_PROMPT, [PROMPTS, GREEDY_TOKENS])
    assert len(results) == 20
    worst = 0.0
    for prompt, r in zip(PROMPTS, results):
        ids = tok.encode(prompt)
        assert r["ids"] == ids, prompt
        with torch.no_grad():
            greedy = net.generate(torch.tensor(ids), GREEDY_TOKENS, top_k=1)
            logits = net(greedy[None, :-1])[0]
        assert r["gen"] == greedy[len(ids) :].tolist(), prompt
        gap = (logits - torch.tensor(r["logits"][:-1])).abs().max().item()
        worst = max(worst, gap)
        assert gap <= 1e-4, (prompt, gap)
        # the cached steps equal the cacheless recomputation in JavaScript
        assert r["gap"] <= 1e-9, (prompt, r["gap"])
    print(f"largest logit gap browser vs PyTorch over {len(PROMPTS)} prompts: {worst:.2e}")


def _random_strings(num: int, seed: int = 46) -> list[str]:
    """Random mixes of Hangul syllables, jamo, ASCII, emoji, punctuation and whitespace."""
    rng = random.Random(seed)
    corpus_bits = "트랜스포머는 어텐션 모델은 합니다 입니다 토큰 똠 뷁 the attention is "
    pools = [
        lambda: chr(rng.randint(0xAC00, 0xD7A3)),  # any syllable
        lambda: rng.choice(corpus_bits),  # frequent syllables, merged by BPE
        lambda: chr(rng.randint(0x1100, 0x11FF)),  # conjoining jamo
        lambda: chr(rng.randint(0x3131, 0x318E)),  # compatibility jamo
        lambda: chr(rng.randint(0x20, 0x7E)),  # ASCII
        lambda: rng.choice(["😀", "🎉", "👍🏽", "🇰🇷", "❤️‍🔥", "🧑‍💻"]),
        lambda: rng.choice(".,!?;:()[]{}…“”‘’·—-~@#%&*/\\|'\""),
        lambda: rng.choice(
            [
                " ",
                "  ",
                "\t",
                "\n",
                "\r\n",
                "\u3000",
                "\xa0",
                "\x1c",
                "\x85",
                "\ufeff",
                "\u2028",
                "\u200b",
                "\u180e",
                "\x0b",
                "\x0c",
            ]
        ),
        lambda: chr(rng.randint(0x4E00, 0x9FFF)),  # CJK
        lambda: chr(rng.choice([rng.randint(0x80, 0xD7FF), rng.randint(0xE000, 0x2FFFF)])),
    ]
    return ["".join(rng.choice(pools)() for _ in range(rng.randint(1, 40))) for _ in range(num)]


def test_browser_tokenization_equals_python_on_1000_strings(shipped, engine):
    _, tok, _ = shipped
    strings = _random_strings(1000)
    assert len(set(strings)) > 990  # hardly a repeat
    got = engine.evaluate(
        "(ss) => ss.map((s) => { const ids = M.tokenizer.encode(s);"
        " return [ids, M.tokenizer.decode(ids), ids.map((i) => M.tokenizer.piece(i))]; })",
        strings,
    )
    for s, (ids, text, pieces) in zip(strings, got):
        assert ids == tok.encode(s), repr(s)
        assert text == s, repr(s)
        assert pieces == tok.pieces(s), repr(s)


def test_browser_splits_at_the_same_whitespace_as_python(engine):
    """The pre-tokenizer's \\s is Python's, whose set differs from JavaScript's: every code
    point that splits "a?b" in two in Python does so in the browser, and no other."""
    from d2lite.lm import _CHUNK

    py = [c for c in range(0x110000)
          if not 0xD800 <= c <= 0xDFFF and len(_CHUNK.findall(f"a{chr(c)}b")) != 1]  # fmt: skip
    js = engine.evaluate(
        "() => { const out = []; for (let c = 0; c < 0x110000; c++) {"
        " if (c >= 0xd800 && c <= 0xdfff) continue;"
        " if (D2GPT.chunks('a' + String.fromCodePoint(c) + 'b').length !== 1) out.push(c); }"
        " return out; }"
    )
    assert len(py) > 20 and js == py


def test_fixed_seed_sampling_is_reproducible_in_the_browser(engine):
    script = """([seed, opts]) => {
      const s = M.session(), rng = D2GPT.mulberry32(seed), out = [];
      let o; for (const id of M.tokenizer.encode("트랜스포머는")) o = s.step(id);
      for (let k = 0; k < 24; k++) {
        const r = D2GPT.sample(o.logits, opts, rng);
        if (!r.candidates[r.rank].kept) throw new Error("drew a removed token");
        if (opts.topK && r.numKept > opts.topK) throw new Error("top-k kept too many");
        out.push(r.id); o = s.step(r.id);
      }
      return out; }"""
    opts = {"temperature": 1.0, "topK": 40, "topP": 0.95}
    a = engine.evaluate(script, [7, opts])
    b = engine.evaluate(script, [7, opts])
    c = engine.evaluate(script, [8, opts])
    assert a == b and a != c
    greedy = engine.evaluate(script, [7, {"topK": 1}])
    assert greedy == engine.evaluate(script, [123, {"temperature": 0.5, "topP": 1e-9}])


def test_sampling_rule_matches_python(engine):
    """Which candidates temperature, top-k and top-p keep: the same set as sample_next_token's
    rule (computed here in PyTorch on the same logits, ties by id)."""
    g = torch.Generator().manual_seed(3)
    logits = torch.randn(200, generator=g) * 3
    logits[5] = logits[6] = logits.max() + 1  # a tie
    for opts in ({"temperature": 0.7, "topK": 20}, {"temperature": 1.3, "topP": 0.8},
                 {"temperature": 1.0, "topK": 50, "topP": 0.5}):  # fmt: skip
        r = engine.evaluate("([z, o]) => D2GPT.sample(z, o, null)", [logits.tolist(), opts])
        scores = logits / opts["temperature"]
        scores, order = torch.sort(scores, descending=True, stable=True)
        keep = torch.ones_like(scores, dtype=torch.bool)
        if "topK" in opts:
            keep[opts["topK"] :] = False
        probs = torch.softmax(scores.masked_fill(~keep, -torch.inf), -1)
        if "topP" in opts:
            keep &= (probs.cumsum(-1) - probs) < opts["topP"]
        assert [c["id"] for c in r["candidates"]] == order.tolist()
        assert [c["kept"] for c in r["candidates"]] == keep.tolist()
        assert r["id"] == 5  # no rng: the first candidate, the smaller id of the tie


# -- the playground widget ----------------------------------------------------------------------


def _open(context, url, width=1280):
    page = _offline_page(context, url, width)
    page.wait_for_selector(".gpt-playground[data-ready]")
    return page


def _check_widget(page, lang: str, width: int):
    root = page.locator(".gpt-playground")
    # one widget, built once, with one copy of the model
    assert root.locator(".gp-tokens").count() == root.count()
    assert sum(u.split("?")[0].endswith("/model.json") for u in page.requests) == 1
    prompt_tokens = root.locator(".gp-token").count()
    assert prompt_tokens > 0
    root.locator("button.gp-step").click()
    page.wait_for_selector('.gpt-playground[data-steps="1"]')
    assert root.locator(".gp-token.gp-new").count() == 1
    assert root.locator("table.gp-cache tbody tr").count() == prompt_tokens + 1
    assert root.locator(".gp-bar-row.gp-drawn").count() == 1
    counter = root.locator(".gp-counter").inner_text()
    numbers = [int(x) for x in re.findall(r"\d+", counter)]
    assert numbers == [1, prompt_tokens + 1, prompt_tokens + 1], counter
    weights = [
        float(x)
        for x in root.locator(".gp-attn-cell").evaluate_all("cs => cs.map(c => c.dataset.weight)")
    ]
    assert len(weights) == prompt_tokens and abs(sum(weights) - 1) < 1e-3
    root.locator("select").nth(1).select_option("1")
    page.fill(".gpt-playground input[type=number] >> nth=1", "3")  # top-k 3
    root.locator("button.gp-step").click()
    page.wait_for_selector('.gpt-playground[data-steps="2"]')
    removed = root.locator(".gp-bar-row.gp-removed")
    assert removed.count() >= 3 and root.locator(".gp-removed.gp-drawn").count() == 0
    assert int(removed.first.get_attribute("data-rank")) == 4  # the first after the top 3
    page.fill(".gpt-playground input[type=number] >> nth=4", "5")
    root.locator("button.gp-generate").click()
    page.wait_for_selector('.gpt-playground[data-steps="7"]')
    assert root.locator("table.gp-cache tbody tr").count() == prompt_tokens + 7
    labels = root.locator("button").all_inner_texts()
    expect = ["생성", "한 단계", "처음으로"] if lang == "ko" else ["Generate", "Step", "Reset"]
    assert labels == expect
    for sel in ("textarea", "input", "select"):  # every control has a visible label
        for i in range(root.locator(sel).count()):
            cid = root.locator(sel).nth(i).get_attribute("id")
            assert root.locator(f'label[for="{cid}"]').inner_text().strip()
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= width, f"sideways scroll: {wide} px wide at {width}"
    root.locator("button.gp-reset").click()
    assert root.locator(".gp-token.gp-new").count() == 0
    assert page.errors == [] and page.blocked == []


def test_a_second_copy_of_the_scripts_builds_nothing(browser, harness):
    """As on the website, where the head and the notebook output both name the scripts."""
    ctx = browser.new_context()
    try:
        page = _open(ctx, f"{harness}/twice.html", 390)
        scripts = [u for u in page.requests if "/gpt/playground.js" in u]
        assert len(scripts) == 2, scripts
        _check_widget(page, "en", 390)
    finally:
        ctx.close()


@pytest.mark.parametrize("lang,width", [("ko", 1280), ("en", 1280), ("ko", 390), ("en", 390)])
def test_playground_widget_works_offline(browser, harness, lang, width):
    ctx = browser.new_context()
    try:
        page = _open(ctx, f"{harness}/{lang}.html", width)
        _check_widget(page, lang, width)
    finally:
        ctx.close()


def test_playground_keyboard_and_same_seed(browser, harness):
    """Tab reaches the Step button and Enter presses it; the same seed draws the same text."""
    ctx = browser.new_context()
    try:
        page = _open(ctx, f"{harness}/en.html")
        page.focus(".gpt-playground button.gp-step")
        page.keyboard.press("Enter")
        page.wait_for_selector('.gpt-playground[data-steps="1"]')
        texts = []
        for _ in range(2):
            page.click(".gpt-playground button.gp-reset")
            page.focus(".gpt-playground button.gp-step")
            for k in range(8):
                page.keyboard.press("Enter")
                page.wait_for_selector(f'.gpt-playground[data-steps="{k + 1}"]')
            texts.append(page.locator(".gp-token.gp-new").all_inner_texts())
        assert len(texts[0]) == 8 and texts[0] == texts[1]
        assert page.errors == []
    finally:
        ctx.close()


def test_playground_is_readable_in_dark_mode(browser, harness):
    ctx = browser.new_context()
    try:
        page = _open(ctx, f"{harness}/dark.html", 390)
        page.click(".gpt-playground button.gp-step")
        page.wait_for_selector('.gpt-playground[data-steps="1"]')
        colors = page.evaluate(
            "() => ['.gp-status', '.gp-piece', 'label', 'button', '.gp-cache td']"
            ".map(s => getComputedStyle(document.querySelector('.gpt-playground ' + s)).color)"
        )
        for c in colors:  # light text on the dark page, never the light theme's dark text
            r, g, b = (int(x) for x in re.findall(r"\d+", c)[:3])
            assert min(r, g, b) > 150, colors
    finally:
        ctx.close()


def test_the_benchmark_measures_and_writes_its_table(tmp_path):
    from tools import bench_playground

    out = tmp_path / "playground.md"
    # a process of its own: this one already drives a browser through Playwright's sync API
    cmd = [sys.executable, "-m", "tools.bench_playground", "--tokens", "5", "--repeats", "1"]
    run = subprocess.run([*cmd, "--out", str(out)], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    text = out.read_text(encoding="utf-8")
    rate = re.search(r"\| tokens / s in the browser \| ([\d,]+) \|", text)
    assert rate and int(rate.group(1).replace(",", "")) > 0
    weight = sum((STATIC / f).stat().st_size for f in bench_playground.FILES)
    assert f"| page weight of the playground | {weight / 1e6:.2f} MB |" in text
    assert "chapter 10's model" in text
