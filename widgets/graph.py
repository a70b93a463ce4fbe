"""The real autograd graph behind an output: walk ``grad_fn.next_functions``, lay it out in
layers, draw it with matplotlib."""

from dataclasses import dataclass, field

import torch
from matplotlib.patches import Patch

from .figures import BUILTIN, CUSTOM, CURRENT, DONE, INK, LEAF, Frames, new_figure
from .markup import format_shape


@dataclass(frozen=True)
class GraphNode:
    """One backward node: ``kind`` is "custom" (your Function), "builtin" or "leaf"."""

    index: int
    name: str   # the node's class name, e.g. "MulBackward0", "MySigmoidBackward"
    label: str  # what the drawing shows
    kind: str


@dataclass
class AutogradGraph:
    """Nodes in discovery order from the root; an edge (parent, child, slot) says that
    ``parent.next_functions[slot]`` is ``child``: the gradient flows parent -> child."""

    nodes: list[GraphNode]
    edges: list[tuple[int, int, int]]
    grad_fns: list = field(repr=False)  # the torch node objects, aligned with ``nodes``

    def children(self, index: int) -> list[int]:
        return [child for parent, child, _ in self.edges if parent == index]

    def parents(self, index: int) -> list[int]:
        return [parent for parent, child, _ in self.edges if child == index]


def is_custom_node(grad_fn) -> bool:
    """A node a torch.autograd.Function created: ``<Name>Backward`` carrying ``_forward_cls``."""
    return type(grad_fn).__name__.endswith("Backward") and hasattr(grad_fn, "_forward_cls")


def _leaf_name(variable: torch.Tensor, names: dict) -> str:
    for name, tensor in names.items():
        if tensor is variable:
            return name
    return "leaf"


def node_kind_and_label(grad_fn, names: dict) -> tuple[str, str]:
    """How to draw a node: custom Functions by class, leaves by name and shape."""
    name = type(grad_fn).__name__
    if name == "AccumulateGrad":
        variable = grad_fn.variable
        return "leaf", f"{_leaf_name(variable, names)}.grad\n{format_shape(variable.shape)}"
    if is_custom_node(grad_fn):
        return "custom", f"{grad_fn._forward_cls.__name__}\n.backward"
    return "builtin", name


def extract_graph(output: torch.Tensor, names: dict | None = None) -> AutogradGraph:
    """Walk ``output.grad_fn`` and its ``next_functions`` breadth-first, each node once.

    ``names`` maps a label to a leaf tensor (``{"x": x}``) so leaves show by name.
    """
    if not isinstance(output, torch.Tensor):
        raise TypeError(f"expected the tensor a computation returned, got {type(output).__name__}")
    if output.grad_fn is None:
        reason = ("it is a leaf: build an expression from it" if output.requires_grad
                  else "no input requires grad, so autograd recorded nothing")
        raise ValueError(f"this output has no grad_fn: {reason}")
    names = names or {}
    grad_fns, edges, queue = [output.grad_fn], [], [output.grad_fn]
    while queue:
        parent = queue.pop(0)
        parent_index = next(i for i, fn in enumerate(grad_fns) if fn is parent)
        for slot, (child, _) in enumerate(parent.next_functions):
            if child is None:
                continue  # an input that needs no gradient
            known = next((i for i, fn in enumerate(grad_fns) if fn is child), None)
            if known is None:
                known = len(grad_fns)
                grad_fns.append(child)
                queue.append(child)
            edges.append((parent_index, known, slot))
    nodes = []
    for i, fn in enumerate(grad_fns):
        kind, label = node_kind_and_label(fn, names)
        nodes.append(GraphNode(i, type(fn).__name__, label, kind))
    return AutogradGraph(nodes, edges, grad_fns)


def layers(graph: AutogradGraph) -> list[list[int]]:
    """Nodes grouped by their longest distance from the root, so every edge points down."""
    depth = {0: 0}
    order = _topological_order(graph)
    for index in order:
        for child in graph.children(index):
            depth[child] = max(depth.get(child, 0), depth[index] + 1)
    grouped: list[list[int]] = [[] for _ in range(max(depth.values()) + 1)]
    for index in order:
        grouped[depth[index]].append(index)
    return grouped


def _topological_order(graph: AutogradGraph) -> list[int]:
    indegree = {node.index: 0 for node in graph.nodes}
    for _, child, _ in graph.edges:
        indegree[child] += 1
    ready, order = [0], []
    while ready:
        index = ready.pop(0)
        order.append(index)
        for child in dict.fromkeys(graph.children(index)):
            indegree[child] -= graph.children(index).count(child)
            if indegree[child] == 0:
                ready.append(child)
    return order


def layered_layout(graph: AutogradGraph, sweeps: int = 3) -> dict[int, tuple[float, float]]:
    """(x, y) per node: row ``-depth`` per layer, each node near the mean x of its parents,
    nodes in a row at least 1 apart."""
    rows = layers(graph)
    x = {index: k - (len(row) - 1) / 2 for row in rows for k, index in enumerate(row)}
    for _ in range(sweeps):
        for row in reversed(rows[:-1]):
            _place(row, x, {i: _mean([x[c] for c in graph.children(i)]) if graph.children(i)
                            else x[i] for i in row})
        for row in rows[1:]:
            _place(row, x, {i: _mean([x[p] for p in graph.parents(i)]) for i in row})
    return {index: (x[index], -float(depth)) for depth, row in enumerate(rows) for index in row}


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _place(row: list[int], x: dict, desired: dict) -> None:
    """Order ``row`` by desired x, then move nodes apart to a gap of 1, keeping the mean."""
    row.sort(key=lambda i: desired[i])
    placed: list[float] = []
    for index in row:
        placed.append(desired[index] if not placed else max(desired[index], placed[-1] + 1))
    shift = _mean([desired[i] for i in row]) - _mean(placed)
    for index, value in zip(row, placed):
        x[index] = value + shift


STYLE = {"custom": (CUSTOM, "your Function"),
         "builtin": (BUILTIN, "PyTorch op"),
         "leaf": (LEAF, "leaf: AccumulateGrad")}
ARROW = "#888888"


@dataclass
class GraphDrawing:
    """A drawn graph whose nodes and edges can be restyled per step."""

    frames: Frames
    boxes: dict  # node index -> Text artist (its bbox patch is the box)
    arrows: dict  # (parent, child, slot) -> Annotation


def draw_graph(graph: AutogradGraph) -> GraphDrawing:
    """Draw the graph top (the output) to bottom (the leaves), custom nodes highlighted."""
    positions = layered_layout(graph)
    xs = [x for x, _ in positions.values()]
    depth = 1 - min(y for _, y in positions.values())
    width = min(max(3.6, 1.45 * (max(xs) - min(xs) + 1) + 0.4), 8.0)
    figure = new_figure(width, 0.55 + 0.62 * depth)
    bottom = 0.4 / figure.get_figheight()
    axes = figure.add_axes((0.0, bottom, 1.0, 1.0 - bottom))
    axes.set_axis_off()
    axes.set_xlim(min(xs) - 0.62, max(xs) + 0.62)
    axes.set_ylim(-depth + 0.5, 0.5)
    boxes = {}
    for node in graph.nodes:
        color = STYLE[node.kind][0]
        boxes[node.index] = axes.text(
            *positions[node.index], node.label, ha="center", va="center", fontsize=7.5,
            color=INK, fontweight="bold" if node.kind == "custom" else "normal", zorder=3,
            bbox=dict(boxstyle="round,pad=0.35", facecolor=color + "40", edgecolor=color,
                      linewidth=1.5))
    arrows = {}
    for edge in graph.edges:
        parent, child, _ = edge
        arrows[edge] = axes.annotate(
            "", xy=positions[child], xytext=positions[parent], zorder=4,
            arrowprops=dict(arrowstyle="-|>", color=ARROW, linewidth=1.2, shrinkA=1, shrinkB=1,
                            patchA=boxes[parent].get_bbox_patch(),
                            patchB=boxes[child].get_bbox_patch()))
    kinds = [k for k in STYLE if any(node.kind == k for node in graph.nodes)]
    figure.legend(handles=[Patch(facecolor=STYLE[k][0] + "40", edgecolor=STYLE[k][0],
                                 label=STYLE[k][1]) for k in kinds],
                  loc="lower center", ncol=len(kinds), fontsize=7, frameon=False,
                  handlelength=1.2, columnspacing=1.0)
    # boxes before arrows: an arrow is clipped to the boxes as they were last drawn
    return GraphDrawing(Frames(figure, [*boxes.values(), *arrows.values()]), boxes, arrows)


def highlight_step(drawing: GraphDrawing, graph: AutogradGraph, current: int | None,
                   done: set[int]) -> None:
    """Outline the node running now, grey out finished ones, colour the gradients it sends."""
    for index, text in drawing.boxes.items():
        node = graph.nodes[index]
        color = STYLE[node.kind][0]
        patch = text.get_bbox_patch()
        if index == current:
            patch.set(edgecolor=CURRENT, linewidth=3.0, facecolor=color + "80")
            text.set_alpha(1.0)
        elif index in done:
            patch.set(edgecolor=DONE, linewidth=1.0, facecolor="#eeeeee")
            text.set_alpha(0.6)
        else:
            patch.set(edgecolor=color, linewidth=1.5, facecolor=color + "40")
            text.set_alpha(1.0)
    for (parent, child, slot), arrow in drawing.arrows.items():
        active = parent == current
        arrow.arrow_patch.set(color=CURRENT if active else ARROW,
                              linewidth=2.2 if active else 1.2)
