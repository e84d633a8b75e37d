"""Chapter 7's diagrams: how far a signal travels in a CNN, an RNN and self-attention, and the
sinusoidal positional encoding as pairs of coordinates rotating with the position.

:func:`draw_path_lengths` builds the three layers' connection graphs over the same n tokens and
finds, by search on those graphs, the shortest path from the first input to the last output
(the longest such path: the maximum path length) and the longest chain of dependent steps (the
sequential operations); it prints those counts, not formulas. :func:`draw_rotating_pairs` reads
the table ``P`` of a ``PositionalEncoding`` and draws, for a few column pairs, the point
(sin, cos) of every position on the unit circle.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Sequence

import torch
from matplotlib import patches
from torch import nn

from ..positional import PositionalEncoding
from .core import Diagram, drawer

__all__ = ["connection_graph", "draw_path_lengths", "draw_rotating_pairs", "path_counts"]


def _positive(v, name: str, low: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < low:
        raise ValueError(f"{name} must be an int >= {low}, got {v!r}")
    return v


def connection_graph(kind: str, n: int, k: int = 3) -> tuple[list[list[tuple[int, int]]],
                                                             list[tuple]]:  # fmt: skip
    """The nodes (one row of (row, position) per layer, inputs first) and the edges
    ((row, i) -> (row', j)) of one layer type over ``n`` tokens.

    ``kind`` "rnn": inputs x_i feed states h_i, and h_{i-1} feeds h_i. "cnn": causal
    convolutions with contiguous kernels of size ``k`` (position i of a layer sees positions
    i-k+1..i of the layer below), stacked until the last output sees the first input.
    "attention": every input feeds every output in one layer.
    """
    _positive(n, "n", 2)
    if kind == "rnn":
        rows = 2
        edges = [((0, i), (1, i)) for i in range(n)] + [((1, i - 1), (1, i)) for i in range(1, n)]
    elif kind == "cnn":
        _positive(k, "k", 2)
        rows = 1
        edges = []
        while True:  # add a layer until the last output depends on the first input
            edges += [((rows - 1, j), (rows, i)) for i in range(n)
                      for j in range(max(i - k + 1, 0), i + 1)]  # fmt: skip
            rows += 1
            if _shortest(edges, (0, 0), (rows - 1, n - 1)) is not None:
                break
    elif kind == "attention":
        rows = 2
        edges = [((0, j), (1, i)) for i in range(n) for j in range(n)]
    else:
        raise ValueError(f"kind must be 'rnn', 'cnn' or 'attention', got {kind!r}")
    nodes = [[(r, i) for i in range(n)] for r in range(rows)]
    return nodes, edges


def _shortest(edges, source, target) -> list | None:
    """The shortest path (a list of nodes) from source to target, by breadth-first search."""
    out: dict = {}
    for a, b in edges:
        out.setdefault(a, []).append(b)
    prev = {source: None}
    queue = deque([source])
    while queue:
        node = queue.popleft()
        if node == target:
            path = [node]
            while prev[path[-1]] is not None:
                path.append(prev[path[-1]])
            return path[::-1]
        for nxt in out.get(node, []):
            if nxt not in prev:
                prev[nxt] = node
                queue.append(nxt)
    return None


def _depth(nodes, edges) -> int:
    """The longest chain of edges in the (acyclic) graph: the steps that must run in turn."""
    into: dict = {}
    for a, b in edges:
        into.setdefault(b, []).append(a)
    depth: dict = {}

    def d(node):
        if node not in depth:  # rows and positions only grow along edges: no deep recursion
            depth[node] = max((d(a) + 1 for a in into.get(node, [])), default=0)
        return depth[node]

    order = sorted((node for row in nodes for node in row), key=lambda v: (v[0], v[1]))
    return max(d(node) for node in order)


def path_counts(kind: str, n: int, k: int = 3) -> dict[str, int]:
    """"path": edges on the shortest path from the first input to the last output (the
    maximum path length), "sequential": the longest chain of steps that wait for each other,
    "layers": the layers stacked (rows minus the input row), counted on
    :func:`connection_graph`."""
    nodes, edges = connection_graph(kind, n, k)
    path = _shortest(edges, nodes[0][0], nodes[-1][-1])
    return {"path": len(path) - 1, "sequential": _depth(nodes, edges), "layers": len(nodes) - 1}


def draw_path_lengths(
    n: int = 8,
    k: int = 3,
    *,
    t: Callable[[str, str], str] | None = None,
) -> Diagram:
    """Three panels over the same ``n`` tokens: an RNN, a stack of causal CNN layers with
    kernel size ``k`` (as many as the last output needs to see the first input) and one
    self-attention layer. Every connection is drawn; the shortest path from the first input to
    the last output is highlighted, and under each panel are its length (the maximum path
    length) and the number of sequential steps, both counted on the drawn graph.
    ``counts`` holds them by panel."""
    _positive(n, "n", 2)
    _positive(k, "k", 2)
    if n > 8:
        raise ValueError(f"n must be at most 8 to be drawn, got {n}")
    panels = (("rnn", ("순환 신경망", "RNN"), ("h",)),
              ("cnn", (f"합성곱 신경망 (k = {k})", f"CNN (k = {k})"), None),
              ("attention", ("셀프 어텐션", "self-attention"), ("y",)))  # fmt: skip
    graphs = {kind: connection_graph(kind, n, k) for kind, _, _ in panels}
    rows_max = max(len(nodes) for nodes, _ in graphs.values())
    if rows_max > 6:
        raise ValueError(f"the CNN needs {rows_max - 1} layers for n={n}, k={k}; at most 5 "
                         "can be drawn")  # fmt: skip
    width = 6.6
    panel_w = width / 3
    node = 0.1
    step = min(0.24, (panel_w - 0.45) / n)
    row_gap = 0.42
    body = (rows_max - 1) * row_gap
    height = body + 1.45
    dg = Diagram(width, height, t=t)
    y_bottom = 0.85
    dg.counts = {}
    for p, (kind, title, top_label) in enumerate(panels):
        nodes, edges = graphs[kind]
        rows = len(nodes)
        gap = body / (rows - 1)  # two-row panels spread over the same height
        x0 = p * panel_w + 0.35
        pos = {(r, i): (x0 + i * step + step / 2, y_bottom + r * gap)
               for r in range(rows) for i in range(n)}  # fmt: skip
        path = _shortest(edges, nodes[0][0], nodes[-1][-1])
        on = set(zip(path, path[1:]))
        parts = {}
        for v, (x, y) in pos.items():
            role = "highlight" if v in path else None
            parts[v] = dg.box(x, y, "", kind="op", role=role, w=node, h=node,
                              name=f"{kind}_{v[0]}_{v[1]}")  # fmt: skip
        for a, b in edges:
            if (a, b) in on:
                continue
            same_row = a[0] == b[0]
            dg.arrow(parts[a], parts[b], role="gray", lw=0.8, start="right" if same_row else "top",
                     end="left" if same_row else "bottom", name=f"{kind}_{a}_{b}")  # fmt: skip
        for a, b in on:  # drawn last: on top
            same_row = a[0] == b[0]
            dg.arrow(parts[a], parts[b], role="highlight", lw=2.0,
                     start="right" if same_row else "top", end="left" if same_row else "bottom",
                     name=f"{kind}_path_{a}_{b}")  # fmt: skip
        cx = x0 + n * step / 2
        dg.text(x0 - 0.08, y_bottom, "x", ha="right", name=f"{kind}_x")
        if top_label:
            dg.text(x0 - 0.08, y_bottom + body, top_label[0], ha="right", name=f"{kind}_top")
        dg.text(cx, height - 0.06, title, va="top", size=10.5, weight="bold",
                name=f"{kind}_title")  # fmt: skip
        counts = path_counts(kind, n, k)
        if counts["path"] != len(path) - 1:
            raise ValueError(f"{kind}: the drawn path has {len(path) - 1} edges, counted "
                             f"{counts['path']}")  # fmt: skip
        dg.counts[kind] = counts
        length = counts["path"]
        dg.text(cx, y_bottom - 0.2, (f"경로 길이 {length}", f"path length {length}"), va="top",
                role="highlight", name=f"{kind}_path")  # fmt: skip
        dg.text(cx, y_bottom - 0.47, (f"순차 단계 {counts['sequential']}",
                                      f"sequential steps {counts['sequential']}"),
                va="top", name=f"{kind}_sequential")  # fmt: skip
    return dg.finish()


@drawer(PositionalEncoding)
def draw_rotating_pairs(
    encoding: nn.Module,
    pairs: Sequence[int] = (0, 2, 4),
    *,
    positions: int = 8,
    t: Callable[[str, str], str] | None = None,
) -> Diagram:
    """Sinusoidal positional encoding as rotating pairs: for each column pair j in ``pairs``,
    the point (p_{i,2j}, p_{i,2j+1}) = (sin(i w_j), cos(i w_j)) of positions i = 0 ..
    ``positions`` - 1 on the unit circle, read from the encoding's table ``P``. One position
    further turns every pair by its own angle w_j (printed, measured from the table as the
    angle between positions 0 and 1), fast for the first pairs, slowly for later ones.
    ``omegas`` holds the angles; ``points`` the (sin, cos) drawn, one (positions, 2) array per
    pair.
    """
    P = getattr(encoding, "P", None)
    if not isinstance(P, torch.Tensor) or P.dim() != 3 or P.shape[0] != 1:
        raise TypeError(f"encoding must have a table P of shape (1, max_len, d), got "
                        f"{type(encoding).__name__}")  # fmt: skip
    _, max_len, d = P.shape
    _positive(positions, "positions", 2)
    if positions > min(max_len, 12):
        raise ValueError(f"positions must be at most {min(max_len, 12)}, got {positions}")
    pairs = list(pairs)
    if not 1 <= len(pairs) <= 3 or any(isinstance(j, bool) or not isinstance(j, int)
                                       or not 0 <= j < d // 2 for j in pairs):  # fmt: skip
        raise ValueError(f"pairs must be 1 to 3 column pairs in [0, {d // 2}), got {pairs!r}")
    table = P[0, :positions].detach().double()
    width = 6.6
    panel_w = width / len(pairs)
    radius = min(0.78, panel_w / 2 - 0.45)
    height = 2 * radius + 1.3
    dg = Diagram(width, height, t=t)
    dg.omegas, dg.points = [], []
    cy = 0.62 + radius
    for p, j in enumerate(pairs):
        pts = table[:, 2 * j:2 * j + 2]  # (positions, 2): sin, cos
        omega = math.atan2(pts[1, 0].item(), pts[1, 1].item())
        dg.omegas.append(omega)
        dg.points.append(pts.numpy())
        cx = (p + 0.5) * panel_w
        gray = dg.palette.gray
        circle = patches.Circle((cx, cy), radius, fc="none", ec=gray.edge, lw=1.0, zorder=1)
        dg.ax.add_patch(circle)
        for (xa, ya), (xb, yb) in (((cx - radius - 0.08, cy), (cx + radius + 0.08, cy)),
                                   ((cx, cy - radius - 0.08), (cx, cy + radius + 0.08))):
            dg.ax.plot([xa, xb], [ya, yb], color=gray.edge, lw=0.7, zorder=1)
        xy = [(cx + radius * s, cy + radius * c) for s, c in pts.tolist()]
        hl, q = dg.palette.highlight, dg.palette.query
        # the angle one position turns: radii to positions 0 and 1 and the arc between them
        for x, y in xy[:2]:
            dg.ax.plot([cx, x], [cy, y], color=hl.edge, lw=1.2, zorder=2)
        start = [math.degrees(math.atan2(y - cy, x - cx)) for x, y in xy[:2]]
        dg.ax.add_patch(patches.Arc((cx, cy), radius, radius, theta1=start[1], theta2=start[0],
                                    color=hl.edge, lw=1.6, zorder=2))  # fmt: skip
        for i, (x, y) in enumerate(xy):
            color = hl.edge if i == 0 else q.edge
            dg.ax.add_patch(patches.Circle((x, y), 0.05, fc=color, ec=color, zorder=3))
        # number positions 0, 1, the last one, then those in between that do not crowd a number
        labeled: list = []
        for i in [0, 1, len(xy) - 1, *range(2, len(xy) - 1)]:
            x, y = xy[i]
            if all(math.dist(xy[m], (x, y)) > 0.2 for m in labeled):
                ux, uy = (x - cx) / radius, (y - cy) / radius
                dg.text(x + 0.17 * ux, y + 0.17 * uy, str(i), size=9.5, name=f"pair{j}_pos{i}")
                labeled.append(i)
        dg.text(cx, height - 0.06, (f"열 {2 * j}, {2 * j + 1}", f"columns {2 * j}, {2 * j + 1}"),
                va="top", size=10.5, weight="bold", name=f"pair{j}_title")  # fmt: skip
        dg.text(cx, 0.2, (f"한 칸에 {omega:.2f} rad", f"{omega:.2f} rad per position"),
                va="center", name=f"pair{j}_omega")  # fmt: skip
    return dg.finish()
