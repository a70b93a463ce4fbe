"""Does the Jacobian view read the learner's own backward, and make a forgotten broadcast sum, a
lost repeated row and a missing projection term visible?"""

import pytest
import torch
import torch.nn.functional as F

from tools.catalogue import mistake
from tools.solutions import solution
from widgets.jacobian import (index_labels, jacobian_figure, jacobian_pairs, jacobian_view,
                              summary)

pytestmark = pytest.mark.lesson09


def mul(a, b):
    return a * b


def select(x, index):
    return torch.index_select(x, 0, index)


def normalize(x, eps):
    return F.normalize(x, dim=-1, eps=eps)


A, B = torch.randn(3, 1, dtype=torch.float64), torch.randn(4, dtype=torch.float64)
ROWS, REPEATED = torch.randn(5, 2, dtype=torch.float64), torch.tensor([3, 0, 3, 3])


def test_is_a_correct_backward_the_reference_jacobian():
    pairs = jacobian_pairs(solution("BroadcastMul"), mul, A, B)
    assert [p.name for p in pairs] == ["a", "b"]
    for pair in pairs:
        assert pair.same_shape and not pair.mismatch.any()
        assert "matches autograd's" in summary(pair)
    assert pairs[0].reference.shape == (12, 3)  # dy_o / da_i: 12 outputs, 3 entries of a


def test_does_a_forgotten_broadcast_sum_show_as_extra_columns():
    wrong = mistake("BroadcastMul", "forgot to sum the broadcast dims").load()
    pair = jacobian_pairs(wrong, mul, A, B)[0]
    assert pair.returned_shape == (3, 4) and pair.learner.shape == (12, 12)
    assert "forgotten broadcast sum" in summary(pair, wrong)


def test_does_a_sum_without_keepdim_say_so():
    wrong = mistake("BroadcastMul", "sum without keepdim").load()
    pair = jacobian_pairs(wrong, mul, A, B)[0]
    assert pair.returned_shape == (3,)
    assert "keepdim" in summary(pair, wrong)


def test_are_lost_repeated_rows_outlined():
    wrong = mistake("IndexSelect", "grad[index] = grad_output").load()
    pair, = jacobian_pairs(wrong, select, ROWS, REPEATED)
    columns = pair.mismatch.nonzero()[:, 1].unique().tolist()
    assert columns == [6, 7]  # x[3, 0] and x[3, 1], the repeated row
    assert "differ" in summary(pair, wrong)


def test_does_a_missing_projection_term_differ_everywhere_in_its_row_block():
    wrong = mistake("Normalize", "missing projection term").load()
    x = torch.randn(2, 3, dtype=torch.float64)
    pair, = jacobian_pairs(wrong.apply, normalize, x, 1e-12)  # .apply works as well
    assert pair.mismatch[:3, :3].all() and not pair.mismatch[:3, 3:].any()


def test_does_the_view_switch_inputs_and_report_errors():
    view = jacobian_view(solution("BroadcastMul"), mul, A, B)
    before = view.panes["plot"].value
    view.controls["input"].value = "b"
    assert view.panes["plot"].value != before
    assert "matches" in view.panes["readout"].value

    class Stub(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            raise NotImplementedError

    assert "not implemented yet" in jacobian_view(Stub, mul, A, B).panes["readout"].value


def test_are_index_labels_readable_and_figures_drawn():
    assert index_labels("x", (2, 2)) == ["x[0,0]", "x[0,1]", "x[1,0]", "x[1,1]"]
    assert index_labels("s", ()) == ["s"]
    pair, = jacobian_pairs(solution("Cumsum"), torch.cumsum, torch.randn(4), 0)
    assert torch.equal(pair.reference, torch.tril(torch.ones(4, 4, dtype=torch.float64)))
    assert jacobian_figure(pair).axes


def test_is_a_nan_gradient_visible_and_named():
    """A backward that divides by zero: does the summary count the nan entries, and is nan
    drawn in its own colour (matplotlib leaves it blank otherwise)?"""
    from matplotlib.colors import to_hex

    from widgets.gradcheck_explorer import NAN_COLOUR

    class DividesByZero(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.prod(x, 0)

        @staticmethod
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            return grad_output * torch.prod(x, 0) / x

    pair, = jacobian_pairs(DividesByZero, lambda x: torch.prod(x, 0),
                           torch.tensor([2.0, 0.0, 3.0]))
    assert "1 of 3 entries" in summary(pair) and "nan" in summary(pair)
    image = jacobian_figure(pair).axes[0].images[0]
    assert to_hex(image.get_cmap().get_bad()) == NAN_COLOUR.lower()


def test_does_a_match_under_a_failed_self_check_get_no_tick(tmp_path, monkeypatch):
    """BroadcastMul that ignores needs_input_grad matches autograd entry for entry, yet its
    self-check failed: does the readout say so and point elsewhere, instead of ticking?"""
    from autograder import progress
    from widgets.jacobian import last_failure, readout

    monkeypatch.chdir(tmp_path)
    wrong = mistake("BroadcastMul", "ignores needs_input_grad").load()
    pair = jacobian_pairs(wrong, mul, A, B)[0]
    assert readout(pair, wrong, None)[0] == "ok"
    progress.record("BroadcastMul", "09_patterns", progress.FAILED, "returned a gradient for b")
    kind, text = readout(pair, wrong, last_failure("BroadcastMul"))
    assert kind == "note" and "returned a gradient for b" in text and "does not check" in text
    assert "✓" not in jacobian_view(wrong, mul, A, B).panes["readout"].value


def test_a_failure_ending_on_a_question_is_followed_by_no_full_stop(tmp_path, monkeypatch):
    """Learner trial 81 (issue 68): a hint ending on a question mark read "...needs no
    gradient?. The failure is in something...": is it "?" alone, and a plain hint given its
    full stop?"""
    from autograder import progress
    from widgets.jacobian import last_failure, readout

    monkeypatch.chdir(tmp_path)
    wrong = mistake("BroadcastMul", "ignores needs_input_grad").load()
    pair = jacobian_pairs(wrong, mul, A, B)[0]
    progress.record("BroadcastMul", "09_patterns", progress.FAILED,
                    "which value stands for an input that needs no gradient?")
    text = readout(pair, wrong, last_failure("BroadcastMul"))[1]
    assert "?." not in text and "needs no gradient? The failure" in text
    progress.record("BroadcastMul", "09_patterns", progress.FAILED, "returned a gradient for b")
    assert "for b. The failure" in readout(pair, wrong, last_failure("BroadcastMul"))[1]


def test_a_demo_on_an_unwritten_stub_names_the_stub_not_the_demo():
    """Does a demo subclass of the learner's unwritten Function say which method is still the
    stub (issue 48: "NormalizeWithoutProjection is not implemented yet" named the demo)?"""
    from widgets.functions import error_summary

    class Normalize(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, eps):
            raise NotImplementedError()

    class NormalizeWithoutProjection(Normalize):
        @staticmethod
        def backward(ctx, grad_output):
            return grad_output, None

    try:
        NormalizeWithoutProjection.apply(torch.ones(2, requires_grad=True), 0.5)
    except NotImplementedError as error:
        said = error_summary(NormalizeWithoutProjection, error)
    assert said.startswith("Normalize.forward is not implemented yet")
    assert "NormalizeWithoutProjection" not in said


def test_a_function_the_lesson_defines_is_not_called_yours():
    """Issue 48 (learner 57): lesson 09's view of its own worked example, SumOverDim, was
    titled 'the Jacobian from your backward'. Does the view of a Function the lesson defines
    say whose backward it is (its own, the lesson's), in the heading, the panel and the
    readout, and the view of an exercise still say 'your backward'?"""

    class SumOverDim(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, dim):
            ctx.shape, ctx.dim = x.shape, dim
            return x.sum(dim)

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output.unsqueeze(ctx.dim).expand(ctx.shape), None

    x = torch.randn(2, 3, dtype=torch.float64)
    lesson = jacobian_view(SumOverDim, lambda x, dim: x.sum(dim), x, 1)
    heading = lesson.panes["heading"].value
    assert "your backward" not in heading and "the lesson's, not yours" in heading, heading
    pair, = jacobian_pairs(SumOverDim, lambda x, dim: x.sum(dim), x, 1)
    titles = [ax.get_title() for ax in jacobian_figure(pair, SumOverDim).axes]
    assert not any("your" in title for title in titles), titles
    mine = jacobian_view(solution("BroadcastMul"), mul, A, B)
    assert "from your backward" in mine.panes["heading"].value


def _surrogate_pair(name: str, wrong: str, position: int):
    """The pair the self-check's reference view draws for a catalogued mistake of a
    straight-through exercise (lesson 03), at the exercise's own example inputs."""
    from autograder.exercises import EXERCISES
    from widgets.self_check import surrogate_reference

    exercise = EXERCISES[name]
    inputs = exercise.example()
    function = mistake(name, wrong).load()
    pairs = jacobian_pairs(function, surrogate_reference(exercise, inputs), *inputs)
    return pairs[position], function


def _extents(figure, artists):
    renderer = figure.canvas.get_renderer()
    return [artist.get_window_extent(renderer) for artist in artists]


def test_does_the_caption_index_only_what_has_an_index():
    """Trial 76 (screenshot 48): FakeQuantize's 0-d scale read "d y[o] / d scale[i]". Is an
    index written only for a tensor that has one?"""
    from widgets.jacobian import JacobianPair, caption

    def pair(name, input_shape, output_shape):
        zeros = torch.zeros(1, 1, dtype=torch.float64)
        return JacobianPair(name, input_shape, output_shape, zeros, zeros, input_shape)

    assert caption(pair("scale", (), (6,))) == "d y[o] / d scale: rows o"
    assert caption(pair("x", (2, 3), (6,))) == "d y[o] / d x[i]: rows o, columns i"
    assert caption(pair("x", (4,), ())) == "d y / d x[i]: columns i"
    assert caption(pair("s", (), ())) == "d y / d s"


@pytest.mark.lesson03
def test_do_the_panel_titles_of_a_one_column_jacobian_fit():
    """Trial 76 (screenshot 48): for FakeQuantize's scale, one column per panel, the titles
    ran into each other ("keQuantize: from your backwautograd (reference)"). Drawn with Agg,
    does each title lie inside the figure, clear of the other and of the caption above?"""
    pair, function = _surrogate_pair("FakeQuantize", "clipped elements give scale nothing", 1)
    assert pair.name == "scale" and pair.input_shape == ()
    figure = jacobian_figure(pair, function)
    figure.canvas.draw()
    left, right = _extents(figure, [ax.title for ax in figure.axes])
    caption, = _extents(figure, [figure._suptitle])
    assert not left.overlaps(right) and left.x1 < right.x0, (left, right)
    for box in (left, right, caption):
        assert figure.bbox.x0 <= box.x0 and box.x1 <= figure.bbox.x1, box
    assert caption.y0 > max(left.y1, right.y1)
    assert "FakeQuantize" in figure.axes[0].get_title()
    assert figure._suptitle.get_text() == "d y[o] / d scale: rows o"


def _values(ax):
    return [text for text in ax.texts if text.get_text()]


@pytest.mark.lesson03
def test_are_the_values_in_a_large_heatmap_legible():
    """Trial 76 (screenshot 55): StraightThroughSoftmax's 8 x 8 reference Jacobian wrote
    "-0.00086-2.2e-05" into neighbouring cells. Does every value written lie inside its own
    cell, in a font no smaller than MIN_VALUE_FONT, and does a matrix too large for values
    get colours alone?"""
    from widgets.jacobian import MAX_VALUES, MIN_VALUE_FONT

    pair, function = _surrogate_pair("StraightThroughSoftmax", "identity backward", 0)
    assert pair.reference.shape == (8, 8)
    figure = jacobian_figure(pair, function)
    figure.canvas.draw()
    for ax, matrix in zip(figure.axes, (pair.learner, pair.reference)):
        texts = _values(ax)
        assert len(texts) == int((matrix != 0).sum())
        assert all(text.get_fontsize() >= MIN_VALUE_FONT for text in texts)
        box = ax.get_window_extent(figure.canvas.get_renderer())
        cell = box.width / matrix.shape[1]
        for text, extent in zip(texts, _extents(figure, texts)):
            start = box.x0 + round(text.get_position()[0]) * cell
            assert start <= extent.x0 and extent.x1 <= start + cell, text.get_text()
    logits = torch.randn(3, 5, dtype=torch.float64)
    large, = jacobian_pairs(function, lambda z, tau: torch.softmax(z / tau, -1), logits, 0.5)
    assert large.reference.numel() > MAX_VALUES
    assert not any(_values(ax) for ax in jacobian_figure(large, function).axes)


def _luminance(colour) -> float:
    """WCAG 2's relative luminance of an RGB(A) colour."""
    from matplotlib.colors import to_rgb

    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in to_rgb(colour)]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a, b) -> float:
    """WCAG 2's contrast ratio of two colours, 1 (the same) to 21 (black on white)."""
    light, dark = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def _strokes(outline) -> list:
    """The colours an outline is drawn in: its edge, and the halo of each stroke effect."""
    return [outline.get_edgecolor(), *[effect._gc["foreground"] for effect in
                                       outline.get_path_effects() if "foreground" in effect._gc]]


@pytest.mark.lesson03
def test_does_every_outline_stand_out_on_every_colour_a_cell_takes():
    """Issue 68: a learner found the outline in FakeQuantize's view invisible: near black on the
    reference's dark blue cell (d y[2] / d scale = -4). Does each outline the view draws (and
    the gradient explorer's mark) have a stroke, its line or its halo, at a contrast of at
    least 3:1 (WCAG's for graphics) with every colour of the heatmap, nan's yellow and the
    page's white included?"""
    import numpy
    from matplotlib.colors import to_hex

    from widgets.gradcheck_explorer import JacobianFigure, heatmap_colours

    pair, function = _surrogate_pair("FakeQuantize", "clipped elements give scale nothing", 1)
    outlines = [patch for ax in jacobian_figure(pair, function).axes for patch in ax.patches
                if not patch.get_fill()]
    assert len(outlines) == 2 * int(pair.mismatch.sum())  # each differing cell, in both panels
    outlines += JacobianFigure().marks
    colours = heatmap_colours()
    backgrounds = [*colours(numpy.linspace(0, 1, 257)), colours.get_bad(), "white"]
    for outline in outlines:
        for background in backgrounds:
            best = max(contrast(stroke, background) for stroke in _strokes(outline))
            assert best >= 3, f"an outline in {_strokes(outline)} on {to_hex(background)}"
