"""Attention speed and memory: d2lite's two paths beside PyTorch's kernels, in one run.

``python -m tools.bench_attention`` (and ``make bench``) writes ``benchmarks/attention.md`` and
``benchmarks/attention.json``. Every timing is one forward and backward pass in float32 on one
thread (``torch.set_num_threads(1)``), the best of several repetitions taken in turn, so that
all variants of a row share the machine's state; the ratios divide by PyTorch's time in the
same row. Peak memory is measured, not computed: each variant runs once in a fresh process and
reports how far its resident memory rose above what the inputs took.

Rows of ``DotProductAttention`` use batch 32 up to n = 1024 and keep batch * n^2 at
32 * 1024^2 above it, so that n = 4096 fits in memory. This measures; it is not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

from tools.core import BENCHMARKS, ROOT, run_module

SIZES = (64, 128, 256, 512, 1024, 2048, 4096)
D, WORK = 64, 32 * 1024**2  # head dimension; batch * n^2 in every row
MHA_SIZES = (64, 256, 1024)


def batch_for(n: int) -> int:
    """32 up to n = 1024; above it, batch * n^2 stays 32 * 1024^2 so that n = 4096 fits."""
    return max(1, min(32, WORK // n**2))
MHA_BATCH, MHA_HIDDENS, MHA_HEADS = 32, 256, 8

# A variant: (name, builder). A builder takes n and returns a function doing forward + backward.
def dot_inputs(n, seed=0):
    import torch

    g = torch.Generator().manual_seed(seed)
    batch = max(1, min(32, WORK // n**2))
    q, k, v = (torch.randn(batch, n, D, generator=g) for _ in range(3))
    lens = torch.randint(n // 2, n + 1, (batch,), generator=g)
    return q, k, v, lens


def dot_variant(name, n):
    import torch
    import torch.nn.functional as F

    import d2lite as d2l

    q, k, v, lens = dot_inputs(n)
    q, k, v = (x.requires_grad_() for x in (q, k, v))
    keep = torch.arange(n) < lens[:, None]  # (batch, n)
    attention = d2l.DotProductAttention()
    if name == "taught":
        return lambda: attention(q, k, v, lens).sum().backward()
    if name == "fast":
        return lambda: attention(q, k, v, lens, need_weights=False).sum().backward()
    if name == "torch_3d":
        mask = keep[:, None, :]
        return lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask).sum().backward()
    if name == "torch_4d":
        q4, k4, v4 = (x.detach()[:, None].requires_grad_() for x in (q, k, v))
        mask = keep[:, None, None, :]
        return lambda: F.scaled_dot_product_attention(q4, k4, v4, attn_mask=mask).sum().backward()
    raise ValueError(name)


def mha_variant(name, n):
    import torch
    from torch import nn

    import d2lite as d2l

    g = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    x = torch.randn(MHA_BATCH, n, MHA_HIDDENS, generator=g).requires_grad_()
    lens = torch.randint(n // 2, n + 1, (MHA_BATCH,), generator=g)
    h = MHA_HIDDENS
    if name in ("taught", "fast"):
        mha = d2l.MultiHeadAttention(h, MHA_HEADS, 0.0, False, h, h, h)
        need = name == "taught"
        return lambda: mha(x, x, x, lens, need_weights=need).sum().backward()
    mha = nn.MultiheadAttention(h, MHA_HEADS, bias=False, batch_first=True)
    pad = torch.arange(n) >= lens[:, None]
    need = name == "torch_weights"
    return lambda: mha(x, x, x, key_padding_mask=pad, need_weights=need)[0].sum().backward()


def memory_main(kind: str, name: str, n: int) -> None:
    """In a fresh process (``python -m tools.bench_attention --memory KIND NAME N``): print how far
    resident memory rose (MiB) during one forward + backward of a variant."""
    import torch

    torch.set_num_threads(1)
    step = (dot_variant if kind == "dot" else mha_variant)(name, n)

    def status_kib(field):  # VmRSS: resident now; VmHWM: the peak since this process started
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))

    before = status_kib("VmRSS")
    step()
    print((status_kib("VmHWM") - before) / 1024)


DOT_VARIANTS = ("taught", "fast", "torch_3d", "torch_4d")
MHA_VARIANTS = ("taught", "fast", "torch", "torch_weights")


def peak_mib(kind: str, name: str, n: int) -> float:
    """The rise of resident memory (MiB) during one forward + backward, in a fresh process."""
    proc = run_module("bench_attention", ["--memory", kind, name, n])
    if proc.returncode != 0:
        raise RuntimeError(f"{kind} {name} n={n} failed:\n{proc.stderr[-2000:]}")
    return float(proc.stdout.strip().splitlines()[-1])


def time_row(builders: dict, repeats: int) -> dict:
    """Best-of-`repeats` seconds per variant, the variants taken in turn in every round."""
    for step in builders.values():
        step()  # warm-up
    best = {name: float("inf") for name in builders}
    for _ in range(repeats):
        for name, step in builders.items():
            start = time.perf_counter()
            step()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def measure(sizes=SIZES, mha_sizes=MHA_SIZES, repeats: int = 3, memory: bool = True) -> dict:
    import torch

    torch.set_num_threads(1)
    dot, mha = [], []
    for n in sizes:
        times = time_row({v: dot_variant(v, n) for v in DOT_VARIANTS}, repeats)
        row = {"n": n, "batch": batch_for(n), "s": times}
        if memory:
            row["mib"] = {v: peak_mib("dot", v, n) for v in DOT_VARIANTS}
        dot.append(row)
        print(f"dot n={n:5d}", {k: round(t, 4) for k, t in times.items()}, flush=True)
    for n in mha_sizes:
        times = time_row({v: mha_variant(v, n) for v in MHA_VARIANTS}, repeats)
        mha.append({"n": n, "s": times})
        print(f"mha n={n:5d}", {k: round(t, 4) for k, t in times.items()}, flush=True)
    return {"torch": torch.__version__, "dot": dot, "mha": mha}


def table(result: dict) -> str:
    lines = [
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} cores,"
        f" torch {result['torch']}, one thread, float32, forward + backward, best of the rounds.",
        "",
        "**`DotProductAttention`** with a padding mask, d = 64, batch 32 (above n = 1024, "
        "batch × n² = 32 × 1024²). "
        "Ratios divide by PyTorch's fused `scaled_dot_product_attention` on the same layout: "
        "the taught path (weights kept) by the kernel on 3-D tensors, the fast path "
        "(`need_weights=False`) by the kernel on 4-D tensors. Memory: the rise of resident "
        "memory during one pass, in a fresh process.",
        "",
        "| n | batch | taught (s) | fused 3-D (s) | **taught / fused** | fast (s) | fused 4-D (s)"
        " | **fast / fused** | taught (MiB) | fast (MiB) | fused 4-D (MiB)"
        " | **fast / fused memory** |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in result["dot"]:
        s, m = r["s"], r.get("mib", {})
        mem = (f"{m['taught']:.0f} | {m['fast']:.0f} | {m['torch_4d']:.0f} | "
               f"{m['fast'] / max(m['torch_4d'], 1):.2f}×") if m else "| | |"  # fmt: skip
        lines.append(
            f"| {r['n']} | {r['batch']} | {s['taught']:.3f} | {s['torch_3d']:.3f} | "
            f"{s['taught'] / s['torch_3d']:.2f}× | {s['fast']:.3f} | {s['torch_4d']:.3f} | "
            f"{s['fast'] / s['torch_4d']:.2f}× | {mem} |"
        )
    lines += [
        "",
        f"**`MultiHeadAttention`** ({MHA_HIDDENS} hidden units, {MHA_HEADS} heads, batch "
        f"{MHA_BATCH}, self-attention with a padding mask) against `nn.MultiheadAttention` "
        "with `need_weights=False`; its default `need_weights=True` (head-averaged weights) "
        "for comparison.",
        "",
        "| n | ours, taught (s) | ours, fast (s) | torch (s) | torch, weights (s) |"
        " **taught / torch, weights** | **fast / torch** |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in result["mha"]:
        s = r["s"]
        lines.append(
            f"| {r['n']} | {s['taught']:.4f} | {s['fast']:.4f} | {s['torch']:.4f} | "
            f"{s['torch_weights']:.4f} | {s['taught'] / s['torch_weights']:.2f}× | "
            f"{s['fast'] / s['torch']:.2f}× |"
        )
    return "\n".join(lines) + "\n"


README_START = "<!-- benchmarks/attention.md: begin -->"
README_END = "<!-- benchmarks/attention.md: end -->"


def _between_markers(readme: str, begin: str = README_START, end: str = README_END
                     ) -> tuple[int, int]:  # fmt: skip
    """Where a table quoted in the README starts and ends (inside its markers)."""
    return readme.index(begin) + len(begin), readme.index(end)


def readme_block(readme: str) -> str:
    """The text between the README's markers (the quoted attention table)."""
    start, end = _between_markers(readme)
    return readme[start:end].strip("\n")


def update_readme(text: str, path: Path = ROOT / "README.md", begin: str = README_START,
                  end: str = README_END) -> None:  # fmt: skip
    """Quote a new table in the README between its markers (the attention table's by default;
    tools.bench_lm passes its own)."""
    readme = path.read_text(encoding="utf-8")
    start, stop = _between_markers(readme, begin, end)
    path.write_text(f"{readme[:start]}\n{text.strip()}\n{readme[stop:]}", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(BENCHMARKS / "attention"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-memory", action="store_true", help="skip the memory processes")
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    parser.add_argument("--memory", nargs=3, metavar=("KIND", "NAME", "N"),
                        help="measure one variant's memory in this process (peak_mib's worker)")
    args = parser.parse_args(argv)
    if args.memory:
        kind, name, n = args.memory
        memory_main(kind, name, int(n))
        return 0
    result = measure(args.sizes, repeats=args.repeats, memory=not args.no_memory)
    text = table(result)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".md").write_text(text, encoding="utf-8")
    out.with_suffix(".json").write_text(json.dumps(result, indent=1))
    if out == BENCHMARKS / "attention":
        update_readme(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
