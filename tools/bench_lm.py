"""Benchmark: training throughput of d2l.GPT beside the same model built from PyTorch's layers.

``python -m tools.bench_lm`` (also run by ``make bench``) trains, for a few steps each, chapter
10's ``d2l.GPT`` (on the fast path, ``d2l.fast_attention``) and a decoder-only model of the same
size made of ``nn.TransformerEncoderLayer(norm_first=True)`` with a causal mask, and writes
``benchmarks/lm.md`` (tokens per second, side by side) and the README block between its markers.
It measures; it is not a test and never fails on time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from tools import bench_attention
from tools.core import BENCHMARKS, ROOT, device_name

README_START = "<!-- benchmarks/lm.md: begin -->"
README_END = "<!-- benchmarks/lm.md: end -->"
CONFIG = {"vocab_size": 1024, "num_hiddens": 128, "num_heads": 4, "num_blks": 4,
          "max_len": 128, "batch_size": 16}  # fmt: skip


def torch_gpt(vocab_size: int, num_hiddens: int, num_heads: int, num_blks: int, max_len: int):
    """The same decoder-only model from nn.TransformerEncoderLayer (pre-norm, ReLU, biases)."""
    import torch
    from torch import nn

    class TorchGPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embedding = nn.Embedding(vocab_size, num_hiddens)
            self.pos_embedding = nn.Embedding(max_len, num_hiddens)
            layer = nn.TransformerEncoderLayer(num_hiddens, num_heads, 4 * num_hiddens,
                                               dropout=0.0, batch_first=True, norm_first=True)
            self.blks = nn.TransformerEncoder(layer, num_blks, enable_nested_tensor=False)
            self.ln = nn.LayerNorm(num_hiddens)
            self.head = nn.Linear(num_hiddens, vocab_size, bias=False)
            self.head.weight = self.embedding.weight

        def forward(self, tokens):
            steps = tokens.shape[1]
            positions = torch.arange(steps, device=tokens.device)
            X = self.embedding(tokens) + self.pos_embedding(positions)
            mask = nn.Transformer.generate_square_subsequent_mask(steps, device=tokens.device)
            return self.head(self.ln(self.blks(X, mask=mask, is_causal=True)))

    return TorchGPT()


def tokens_per_second(net, device, batch_size: int, steps: int, vocab_size: int,
                      updates: int = 10, repeats: int = 3) -> float:  # fmt: skip
    """Median over repeats of training tokens per second (forward, backward, AdamW step)."""
    import torch
    import torch.nn.functional as F

    import d2lite as d2l

    net.to(device).train()
    optimizer = torch.optim.AdamW(net.parameters(), lr=1e-3)
    batch = torch.randint(0, vocab_size, (batch_size, steps + 1), generator=d2l.generator(0))
    batch = batch.to(device)

    def update() -> None:
        logits = net(batch[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    rates = []
    for _ in range(repeats):
        update()  # warm-up
        sync()
        start = time.perf_counter()
        for _ in range(updates):
            update()
        sync()
        rates.append(updates * batch_size * steps / (time.perf_counter() - start))
    return statistics.median(rates)


def measure(config: dict = CONFIG) -> dict:
    import d2lite as d2l

    device = d2l.try_gpu()
    sizes = {k: config[k] for k in ("vocab_size", "num_hiddens", "num_heads", "num_blks")}
    d2l.set_seed(0)
    ours = d2l.GPT(**sizes, max_len=config["max_len"])
    d2l.set_seed(0)
    theirs = torch_gpt(**sizes, max_len=config["max_len"])
    args = (device, config["batch_size"], config["max_len"], config["vocab_size"])
    with d2l.fast_attention(ours):
        ours_rate = tokens_per_second(ours, *args)
    theirs_rate = tokens_per_second(theirs, *args)
    count = lambda net: sum(p.numel() for p in net.parameters())  # noqa: E731
    return {"device": device_name(), "ours": ours_rate, "torch": theirs_rate,
            "ours_params": count(ours), "torch_params": count(theirs), **config}  # fmt: skip


def table(result: dict) -> str:
    ratio = result["ours"] / result["torch"]
    return "\n".join([
        f"Training throughput, vocabulary {result['vocab_size']}, {result['num_blks']} blocks of "
        f"width {result['num_hiddens']} with {result['num_heads']} heads, batch "
        f"{result['batch_size']} x {result['max_len']} tokens, on {result['device']} "
        f"(measured {time.strftime('%Y-%m-%d')}).",
        "",
        "| model | parameters | tokens / s | relative |",
        "| --- | ---: | ---: | ---: |",
        f"| `d2l.GPT` (fast path) | {result['ours_params']:,} | {result['ours']:,.0f} | "
        f"{ratio:.2f}x |",
        f"| `nn.TransformerEncoderLayer` + causal mask | {result['torch_params']:,} | "
        f"{result['torch']:,.0f} | 1.00x |",
    ]) + "\n"  # fmt: skip


def update_readme(text: str, path: Path = ROOT / "README.md") -> None:
    """Quote the table in the README between its markers, if the README has them."""
    readme = path.read_text(encoding="utf-8")
    if README_START in readme and README_END in readme:
        bench_attention.update_readme(text, path, README_START, README_END)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(BENCHMARKS / "lm.md"))
    args = parser.parse_args(argv)
    text = table(measure())
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    update_readme(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
