"""Does graph extraction find the real autograd graph, and does the layout keep it readable?"""

import pytest
import torch

from widgets.figures import CURRENT
from widgets.graph import draw_graph, extract_graph, highlight_step, is_custom_node, layered_layout


@pytest.fixture
def expression(ref):
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    output = (ref.MySigmoid.apply(x * w) * x).sum()
    return output, {"x": x, "w": w}


def test_does_it_find_every_node_once(expression):
    output, names = expression
    graph = extract_graph(output, names)
    assert [n.name for n in graph.nodes] == ["SumBackward0", "MulBackward0", "MySigmoidBackward",
                                             "AccumulateGrad", "MulBackward0", "AccumulateGrad"]
    assert [n.kind for n in graph.nodes] == ["builtin", "builtin", "custom", "leaf", "builtin",
                                             "leaf"]
    # x feeds two products: one AccumulateGrad node, two edges into it
    x_node = next(n.index for n in graph.nodes if n.label.startswith("x.grad"))
    assert len(graph.parents(x_node)) == 2


def test_do_edges_follow_next_functions(expression):
    output, names = expression
    graph = extract_graph(output, names)
    for parent, child, slot in graph.edges:
        assert graph.grad_fns[parent].next_functions[slot][0] is graph.grad_fns[child]


def test_does_it_spot_custom_nodes_and_label_leaves(expression, ref):
    output, names = expression
    graph = extract_graph(output, names)
    custom = [fn for fn in graph.grad_fns if is_custom_node(fn)]
    assert len(custom) == 1 and custom[0]._forward_cls is ref.MySigmoid
    labels = {n.label for n in graph.nodes}
    assert {"x.grad\n(3,)", "w.grad\n(3,)", "MySigmoid\n.backward"} <= labels


def test_does_it_skip_inputs_that_need_no_gradient(ref):
    x = torch.randn(3, requires_grad=True)
    graph = extract_graph(ref.MySigmoid.apply(x) * torch.randn(3))
    assert len(graph.nodes) == 3  # MulBackward0 -> MySigmoidBackward -> AccumulateGrad


def test_does_it_explain_an_output_without_grad_fn():
    with pytest.raises(ValueError, match="no input requires grad"):
        extract_graph(torch.randn(3) * 2)
    with pytest.raises(ValueError, match="leaf"):
        extract_graph(torch.randn(3, requires_grad=True))


def test_does_the_layout_put_parents_above_children(expression):
    output, names = expression
    graph = extract_graph(output, names)
    positions = layered_layout(graph)
    assert positions[0][1] == 0.0
    for parent, child, _ in graph.edges:
        assert positions[child][1] < positions[parent][1]
    rows = {}
    for x, y in positions.values():
        rows.setdefault(y, []).append(x)
    for xs in rows.values():
        xs.sort()
        assert all(b - a >= 1 - 1e-9 for a, b in zip(xs, xs[1:]))


def test_does_the_drawing_highlight_the_current_node(expression):
    output, names = expression
    graph = extract_graph(output, names)
    drawing = draw_graph(graph)
    assert set(drawing.boxes) == {n.index for n in graph.nodes}
    highlight_step(drawing, graph, 2, {0, 1})
    patch = drawing.boxes[2].get_bbox_patch()
    assert patch.get_linewidth() == 3.0
    assert tuple(patch.get_edgecolor()[:3]) == pytest.approx(
        tuple(int(CURRENT[i:i + 2], 16) / 255 for i in (1, 3, 5)))
    assert drawing.frames.png().startswith(b"\x89PNG")
