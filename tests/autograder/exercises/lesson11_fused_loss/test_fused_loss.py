"""Lesson 11 (fused losses): grading CrossEntropy and linear_cross_entropy, right and wrong,
and the lesson's claims about PyTorch."""

import pytest
import torch
import torch.nn.functional as F

from autograder.errors import GradingError
from autograder.exercises import EXERCISES
from autograder.exercises.lesson11_fused_loss.fused_loss_memory import check_largest_tensor
from autograder.exercises.lesson11_fused_loss.fused_loss_work import Called, lce_values
from autograder.grading import self_check, verdict
from autograder.probes import CountFlops
from tests.autograder.catalogued import graded_mistake, mistake
from tools.catalogue import lesson11_fused_loss
from tools.catalogue.lesson11_fused_loss.answers import LINEAR

pytestmark = pytest.mark.lesson11

NAMES = ["CrossEntropy", "linear_cross_entropy"]


def test_every_exercise_has_three_unusual_answers_and_an_nbgrader_mistake():
    """Does the catalogue cover each exercise as the course requires?"""
    for name in NAMES:
        assert sum(u.exercise == name for u in lesson11_fused_loss.UNUSUAL) >= 3
        assert any(m.exercise == name and m.nbgrader for m in lesson11_fused_loss.MISTAKES)


def test_stubs_fail_with_not_implemented():
    """Does an untouched stub raise NotImplementedError rather than a grading hint?"""
    class Stub(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *args):
            raise NotImplementedError()

        @staticmethod
        def backward(ctx, *grads):
            raise NotImplementedError()

    def linear_cross_entropy(x, weight, target, chunk_size=1024):
        raise NotImplementedError()

    with pytest.raises(NotImplementedError):
        EXERCISES["CrossEntropy"].run(Stub)
    with pytest.raises(NotImplementedError):
        EXERCISES["linear_cross_entropy"].run(linear_cross_entropy)


def test_needs_input_grad_says_true_under_no_grad():
    """Is the lesson right that needs_input_grad ignores torch.no_grad(), and that grad mode is
    always off inside forward?"""
    seen = []

    class Probe(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            seen.append((ctx.needs_input_grad, torch.is_grad_enabled()))
            return a.clone()

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output

    a = torch.randn(2, requires_grad=True)
    Probe.apply(a)
    with torch.no_grad():
        Probe.apply(a)
    assert seen == [((True,), False), ((True,), False)]


def test_flop_counter_sees_in_place_products():
    """Does CountFlops count grad_weight.addmm_(...), which FlopCounterMode leaves out?"""
    a, b, c = torch.randn(4, 5), torch.randn(5, 6), torch.zeros(4, 6)
    with CountFlops() as counter:
        c.addmm_(a, b)
    assert counter.total == 2 * 4 * 5 * 6


@pytest.mark.parametrize("product", [
    lambda g, x, w, acc: (w.T.mv(g), acc.addr_(g, x)),
    lambda g, x, w, acc: (w.T @ g, acc.add_(torch.outer(g, x))),
    lambda g, x, w, acc: (torch.einsum("v,vd->d", g, w), acc.add_(torch.einsum("v,d->vd", g, x))),
    lambda g, x, w, acc: (torch.addmv(x, w.T, g), acc.add_(g[:, None] * x)),
], ids=["mv-addr_", "matmul-outer", "einsum", "addmv-broadcast"])
def test_flop_counter_sees_vector_products(product):
    """Does CountFlops count one row's grad_x and grad_W (review 54: mv and addr_ went unseen,
    so a correct answer was blamed for a grad_weight it skipped), and not a scaling?"""
    V, d = 6, 5
    g, x, w, acc = torch.randn(V), torch.randn(d), torch.randn(V, d), torch.zeros(V, d)
    with CountFlops() as counter:
        product(g, x, w, acc)
        w * 3.0, w * torch.tensor(2.0), w / g[:, None]  # scalings and a division: not counted
    assert counter.total == 2 * (2 * V * d)


def test_the_composed_loss_is_over_the_largest_tensor_limit():
    """Would the plain F.cross_entropy(F.linear(...)) fail the memory check it is meant to?"""
    composed = Called(lambda x, weight, target, chunk_size=1024:
                      F.cross_entropy(F.linear(x, weight), target))
    with pytest.raises(GradingError, match="creates a tensor of shape"):
        check_largest_tensor(composed, lce_values(48, 4, 96, 8, "cpu"))


def test_a_function_class_is_refused_with_a_hint():
    """Is passing LinearCrossEntropy instead of linear_cross_entropy named as such?"""
    class LinearCrossEntropy(torch.autograd.Function):
        pass

    with pytest.raises(GradingError, match="must be a function"):
        self_check("linear_cross_entropy", LinearCrossEntropy)


def test_is_the_smoothed_reference_f_cross_entropy_plus_z_loss():
    """Does the battery's reference equal label-smoothed F.cross_entropy plus z_loss times the
    mean of lse ** 2 over the counted rows (checked against a per-row loop)?"""
    from autograder.exercises.lesson11_fused_loss.smoothed_loss import smoothed_cross_entropy
    generator = torch.Generator().manual_seed(0)
    logits = torch.randn(5, 4, dtype=torch.float64, generator=generator)
    target = torch.tensor([1, 2, 2, 0, 3])
    got = smoothed_cross_entropy(logits, target, 2, 0.2, 0.05)
    rows = [i for i in range(5) if target[i] != 2]
    log_p = torch.log_softmax(logits, -1)
    lse = torch.logsumexp(logits, -1)
    per_row = [-(0.8 * log_p[i, target[i]] + 0.2 * log_p[i].mean()) + 0.05 * lse[i] ** 2
               for i in rows]
    assert torch.allclose(got, torch.stack(per_row).mean())


def test_does_the_transfer_exercise_have_its_catalogue():
    """Three unusual answers and a mistake submitted through nbgrader for SmoothedCrossEntropy?"""
    from tools.catalogue.lesson11_fused_loss.smoothed_cross_entropy import MISTAKES, UNUSUAL

    assert len(UNUSUAL) >= 3
    assert any(m.nbgrader for m in MISTAKES)


def test_the_accumulation_case_fails_a_float16_accumulator_and_passes_a_float32_one():
    """Does linear_cross_entropy's accumulation case separate the two accumulators, with the
    tolerance between them (the float16 one measurably fails against float64)?"""
    from autograder.domain import Operator
    from autograder.comparison import compare, fresh_leaves
    from tools.catalogue import edit, load

    domain = EXERCISES["linear_cross_entropy"].domain
    part = domain.accumulation
    wide = "        wide = torch.promote_types(x.dtype, torch.float32)"
    right = load("linear_cross_entropy", LINEAR)
    narrow = load("linear_cross_entropy", edit(LINEAR, (wide, "        wide = x.dtype")))
    compare(domain, Operator(right), fresh_leaves(part.values("cpu", part.dtype)), part.tolerance)
    with pytest.raises(GradingError, match="output is wrong"):
        compare(domain, Operator(narrow), fresh_leaves(part.values("cpu", part.dtype)), part.tolerance)


@pytest.mark.parametrize("exercise, name, expected", [
    ("CrossEntropy", "softmax without the max shift", "CrossEntropy/overflows-at-large-logits"),
    ("CrossEntropy", "dividing by N instead of the counted rows",
     "CrossEntropy/divides-by-all-rows"),
    ("CrossEntropy", "ignored rows keep their gradient", "CrossEntropy/ignored-rows-get-gradient"),
    ("CrossEntropy", "saves the probabilities", "CrossEntropy/saves-probabilities"),
    ("CrossEntropy", "a gradient for the target", "CrossEntropy/gradient-for-target"),
    ("CrossEntropy", "backward ignores grad_output", "CrossEntropy/ignores-grad-output"),
    ("CrossEntropy", "the softmax term alone, no one-hot", "CrossEntropy/softmax-term-only"),
    ("SmoothedCrossEntropy", "smoothing term left out of the gradient",
     "SmoothedCrossEntropy/misses-smoothing-term"),
    ("SmoothedCrossEntropy", "backward ignores label_smoothing",
     "SmoothedCrossEntropy/gradient-ignores-smoothing"),
    ("SmoothedCrossEntropy", "(1 - smoothing)(P - Y) without the smoothing term's gradient",
     "SmoothedCrossEntropy/misses-mean-log-p-term"),
    ("SmoothedCrossEntropy", "z-loss left out of the gradient",
     "SmoothedCrossEntropy/misses-z-loss-term"),
    ("SmoothedCrossEntropy", "z-loss gradient without the factor 2",
     "SmoothedCrossEntropy/z-loss-gradient-halved"),
    ("SmoothedCrossEntropy", "dividing by N instead of the counted rows",
     "SmoothedCrossEntropy/divides-by-all-rows"),
    ("SmoothedCrossEntropy", "z-loss of raw exp sums",
     "SmoothedCrossEntropy/overflows-at-large-logits"),
    ("SmoothedCrossEntropy", "saves the probabilities", "SmoothedCrossEntropy/saves-probabilities"),
    ("SmoothedCrossEntropy", "ignored targets made valid with clamp(min=0)",
     "SmoothedCrossEntropy/ignored-target-not-a-class"),
    ("SmoothedCrossEntropy", "smoothing spread over the C - 1 other classes",
     "SmoothedCrossEntropy/smoothing-over-other-classes"),
    ("SmoothedCrossEntropy", "smoothing over the C - 1 other classes in the gradient only",
     "SmoothedCrossEntropy/gradient-smoothing-over-other-classes"),
    ("SmoothedCrossEntropy", "z-loss differentiated as z_loss * lse",
     "SmoothedCrossEntropy/z-loss-differentiated-as-lse"),
    ("SmoothedCrossEntropy", "z-loss of lse, not lse ** 2, in forward and backward",
     "SmoothedCrossEntropy/z-loss-not-squared"),
    ("SmoothedCrossEntropy", "z-loss averaged over every row",
     "SmoothedCrossEntropy/z-loss-over-every-row"),
    ("SmoothedCrossEntropy", "ignored rows left in the gradient",
     "SmoothedCrossEntropy/ignored-rows-get-gradient"),
    ("SmoothedCrossEntropy", "smoothing subtracted on ignored rows too",
     "SmoothedCrossEntropy/ignored-rows-get-gradient"),
    ("linear_cross_entropy", "saved gradients scaled in place",
     "linear_cross_entropy/scales-saved-in-place"),
    ("linear_cross_entropy", "backward ignores grad_output",
     "linear_cross_entropy/ignores-grad-output"),
    ("linear_cross_entropy", "the mean of each chunk's mean",
     "linear_cross_entropy/averages-chunk-means"),
    ("linear_cross_entropy", "each chunk's G divided by its own rows, not N",
     "linear_cross_entropy/divides-chunk-by-its-rows"),
    ("linear_cross_entropy", "the loop stops before a short last chunk",
     "linear_cross_entropy/misses-short-chunk"),
    ("linear_cross_entropy", "detaching wrapper, forward ignores needs_input_grad",
     "linear_cross_entropy/ignores-needs-input-grad"),
    ("linear_cross_entropy", "no grad-mode check", "linear_cross_entropy/no-grad-mode-check"),
    ("linear_cross_entropy", "the saved gradients themselves returned when grad_output == 1",
     "linear_cross_entropy/returns-saved-tensor"),
])
def test_a_proven_mistake_is_graded_with_its_id(exercise, name, expected):
    """Does each mistake a probe proves (the count of rows, ignored rows, grad_output, saved
    tensors, the chunk loop) carry a stable id, so that a class's failures group by it?"""
    assert graded_mistake(exercise, name) == expected


@pytest.mark.parametrize("name, names, gives_away", [
    ("saved gradients scaled in place", "scaled its saved gradients in place",
     "return grad_output * grad_x"),
    ("no grad-mode check", "but not under no_grad", "is_grad_enabled() in linear_cross_entropy"),
    ("each chunk's G divided by its own rows, not N", "N / rows times too large", "divide by N"),
])
def test_a_named_slip_is_said_and_the_fix_asked_for(name, names, gives_away):
    """Does the failure's first line name the slip and end in a question, without the line of
    code that fixes it (nor, for grad mode, the answer to the grad_mode_design question)?"""
    message = verdict("linear_cross_entropy", mistake("linear_cross_entropy", name))[1]
    first = message.splitlines()[0]
    assert names in first and "?" in first
    assert gives_away not in message
