"""Benchmark: the book's GPT in the browser (the playground of ``_static/gpt``).

``python -m tools.bench_playground`` serves ``_static/gpt`` on 127.0.0.1, opens it in headless
Chromium (Debian's ``/usr/bin/chromium`` or ``$D2LITE_CHROMIUM``; nothing leaves 127.0.0.1) and
measures how many tokens per second ``gpt.js`` generates with its KV cache (greedy, after a short
prompt), then writes ``benchmarks/playground.md``: tokens per second, the playground's page
weight (its scripts, stylesheet and model files) and the bits per character of the shipped model
next to chapter 10's model (as ``tools.train_lm`` measured them on the held-out paragraphs).
It measures; it is not a test and never fails on time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

from tools.core import ROOT

STATIC = ROOT / "_static" / "gpt"
FILES = ("gpt.js", "playground.js", "playground.css", "model.json", "weights.bin")
PROMPT = "트랜스포머는"

MEASURE = """async ([prompt, n, repeats]) => {
  const M = await D2GPT.load('gpt/');
  const rates = [];
  for (let r = 0; r < repeats; r++) {
    const s = M.session();
    let o;
    for (const id of M.tokenizer.encode(prompt)) o = s.step(id);
    const t0 = performance.now();
    for (let k = 0; k < n; k++) o = s.step(D2GPT.argmax(o.logits));
    rates.push(n / ((performance.now() - t0) / 1000));
  }
  return {rates, params: M.numParams()};
}"""


def page_weight() -> dict[str, int]:
    """Bytes of each file the playground loads."""
    return {name: (STATIC / name).stat().st_size for name in FILES}


def tokens_per_second(num_tokens: int = 100, repeats: int = 3) -> dict:
    """Greedy generation of num_tokens tokens with the cache in headless Chromium, repeats
    times; returns the rates and the parameter count."""
    from playwright.sync_api import sync_playwright

    from tools.website import serve

    chromium = os.environ.get("D2LITE_CHROMIUM", "/usr/bin/chromium")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        shutil.copytree(STATIC, folder / "gpt")
        (folder / "bench.html").write_text(
            '<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">'
            '<title>bench</title></head><body><script src="gpt/gpt.js"></script></body></html>',
            encoding="utf-8",
        )
        with serve(folder) as url, sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=chromium, headless=True, args=["--no-sandbox", "--disable-gpu"]
            )
            try:
                page = browser.new_page()
                page.route(
                    "**/*",
                    lambda r: (
                        r.continue_() if r.request.url.startswith("http://127.0.0.1") else r.abort()
                    ),
                )
                page.goto(f"{url}/bench.html", wait_until="load")
                return page.evaluate(MEASURE, [PROMPT, num_tokens, repeats])
            finally:
                browser.close()


def table(result: dict, weights: dict[str, int], meta: dict) -> str:
    rates = sorted(result["rates"])
    median = rates[len(rates) // 2]
    total = sum(weights.values())
    cores = os.cpu_count()
    lines = [
        f"The shipped GPT in headless Chromium ({result['params']:,} parameters; greedy "
        f"generation with the KV cache after the prompt {PROMPT!r}, {len(rates)} runs, median), "
        f"{platform.machine()}, {cores} cores (measured {time.strftime('%Y-%m-%d')}).",
        "",
        "| measure | value |",
        "| --- | ---: |",
        f"| tokens / s in the browser | {median:,.0f} |",
        f"| page weight of the playground | {total / 1e6:.2f} MB |",
    ]
    lines += [f"| &nbsp;&nbsp;`{name}` | {size:,} bytes |" for name, size in weights.items()]
    lines += [
        f"| validation bits per character, shipped model | {meta['val_bpc']:.3f} |",
        f"| validation bits per character, chapter 10's model | "
        f"{meta['book_model']['val_bpc']:.3f} |",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "playground.md")
    args = parser.parse_args(argv)
    meta = json.loads((STATIC / "model.json").read_text(encoding="utf-8"))
    text = table(tokens_per_second(args.tokens, args.repeats), page_weight(), meta)
    args.out.write_text(text, encoding="utf-8")
    print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
