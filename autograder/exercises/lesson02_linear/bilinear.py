"""Lesson 02's transfer exercise: Bilinear, F.bilinear with a three-index weight."""

import contextlib
import itertools
import linecache
import math
import re

import torch
import torch.nn.functional as F

from ...checks import (Spec, case, check_backward_by_hand, check_gradcheck, check_is_function,
                      check_no_ctx_tensors, check_values_and_gradients, make_inputs,
                      reference_gradients, run_forward)
from ...contract import check_each_input_alone, covers
from ...domain import Domain, sampled
from .global_state import (check_fresh_call_state, check_same_shape_calls,
                           check_weight_stepped, state_before_values)
from ...errors import GradingError
from ...exercise import Exercise, sample
from ...comparison import fresh_leaves
from ...function_contract import rule_reference
from ...linear_memory import FACTOR, SLACK, backward_peak
from ...narrowed import shapes_of
from ...probes import record_returned_gradients
from ..shared.backward_reads import unsaved_input_named
from ..shared.call_state import (check_call_places, check_class_untouched,
                                 check_input_version_tracking, check_one_ctx_per_call)
from ..shared.grad_output import check_noncontiguous_grad_output, name_ignored_grad_output
from .bilinear_rows import two_d_only_named
from .backward_work import check_frozen_bias_not_summed, check_no_work_for_frozen
from .layouts import check_layouts
from .many_rows import check_many_rows
from .leading_dims import raise_none_for_empty
from .size_one import squeeze_named
from .unneeded_gradient import NEEDS, check_computes_only_what_is_needed
from .contracts import BILINEAR_LAYOUT_CLAUSE, BILINEAR_RULES

LATER_IN_LESSON = True

BILINEAR = Spec("Bilinear", ("x1", "x2", "weight", "bias"),
                lambda x1, x2, weight, bias=None: F.bilinear(x1, x2, weight, bias))
# the same values with the bias added after the products

OUT = 4
# a first leading dimension of size 1 last: a batch of one, where a forward that squeezes dim 0
# (to undo atleast_2d for 1-D inputs) drops a dimension F.bilinear keeps
LEADING_SHAPES = [(5,), (2, 3), (), (1,), (1, 5)]
# empty batches, the 0 first, in the middle and last: F.bilinear gives a (*leading, out) output
# and zero gradients
EMPTY_SHAPES = ((0,), (2, 0), (3, 0, 2))
# n1 != n2 first, so that x1 and x2 mixed up cannot even have the right shapes; then n1 == n2,
# where a weight read as (out, n2, n1) runs and is wrong.
FEATURES = [(3, 2), (3, 3)]


def bilinear_values(leading, n1, n2, device, *, bias=True, seed=0, out=OUT) -> dict:
    values = {"x1": sample((*leading, n1), device, seed=seed),
              "x2": sample((*leading, n2), device, seed=seed + 1),
              "weight": sample((out, n1, n2), device, seed=seed + 2)}
    if bias:
        values["bias"] = sample((out,), device, seed=seed + 3)
    return values


@contextlib.contextmanager
def bias_entry_named(function, values: dict):
    """Called without a bias, ctx.needs_input_grad has three entries: an IndexError is blamed
    on reading entry 3 only when a probe proves it, the line that raised indexing a local
    bound to ctx.needs_input_grad itself (``need = ctx.needs_input_grad``, then ``need[3]``)."""
    try:
        yield
    except GradingError as error:
        if "bias" in values or "raised IndexError" not in error.hint or not _reads_entry_3(
                function, values):
            raise
        raise GradingError(
            "Bilinear.backward read ctx.needs_input_grad[3] when called without a bias: "
            "ctx.needs_input_grad has one entry per argument passed to apply, 3 here (x1, x2, "
            "weight); remember in forward whether there was a bias (ctx.has_bias = bias is not "
            "None) and read entry 3 only then", error.details or error.hint,
            mistake="Bilinear/reads-missing-bias-flag") from error


def _reads_entry_3(function, values: dict) -> bool:
    try:
        inputs = make_inputs(values)
        output = function.apply(*inputs.values())
        output.grad_fn.apply(torch.ones_like(output))  # the user's backward, unchecked
    except IndexError as error:
        traceback = error.__traceback__
        while traceback.tb_next is not None:
            traceback = traceback.tb_next
        frame = traceback.tb_frame
        line = linecache.getline(frame.f_code.co_filename, traceback.tb_lineno)
        ctx = next((v for v in frame.f_locals.values() if hasattr(v, "needs_input_grad")),
                   None)
        if ctx is None or len(ctx.needs_input_grad) != 3:
            return False
        names = [n for n, v in frame.f_locals.items() if v is ctx.needs_input_grad]
        return any(re.search(rf"\b{re.escape(n)}\s*\[\s*3\s*\]", line) for n in names) \
            or re.search(r"needs_input_grad\s*\[\s*3\s*\]", line) is not None
    except Exception:  # noqa: BLE001 - a probe: any other failure proves nothing
        return False
    return False


def bilinear_full(Bilinear, device) -> None:
    function = check_is_function(Bilinear, BILINEAR)

    def fresh(rows, seed):
        return bilinear_values((rows,), 3, 2, device, seed=seed)

    with (unsaved_input_named(function, lambda: bilinear_values((5,), 3, 2, device), NEEDS,
                              ("x1", "x2", "weight", "bias"), SAVE_ADVICE, BILINEAR.name),
          state_before_values(function, BILINEAR, fresh, BILINEAR_RULES["values"])):
        _bilinear_checks(function, device, fresh)


# what a None saved in place of an input that a wanted gradient reads is told
SAVE_ADVICE = ("which inputs does each of the four gradients read, and does your forward "
               "save every one that a wanted gradient reads?")


def _bilinear_checks(function, device, fresh) -> None:
    check_call_places(function, BILINEAR, bilinear_values((5,), 3, 2, device))
    check_weight_stepped(function, BILINEAR, bilinear_values((5,), 3, 2, device))
    check_same_shape_calls(function, BILINEAR, bilinear_values((5,), 3, 2, device, bias=False),
                           bilinear_values((5,), 3, 2, device, bias=False, seed=7))
    check_class_untouched(function, DOMAIN, device)
    with case("x1 of shape (5, 3), x2 of shape (5, 2), bias=a tensor"):
        name_ignored_grad_output(function, BILINEAR, bilinear_values((5,), 3, 2, device))
    # every leading shape, with and without a bias, for n1 != n2; n1 == n2 (where a weight read
    # as (out, n2, n1) runs) needs one case only
    cases = [*itertools.product(FEATURES[:1], LEADING_SHAPES, (True, False)),
             (FEATURES[1], LEADING_SHAPES[1], False)]
    for seed, ((n1, n2), leading, bias) in enumerate(cases):
        values = bilinear_values(leading, n1, n2, device, bias=bias, seed=seed)
        with case(f"x1 of shape {(*leading, n1)}, x2 of shape {(*leading, n2)}, "
                  f"bias={'a tensor' if bias else 'None'}"):
            with (bias_entry_named(function, values), bias_sum_named(function, values, device),
                  weight_indices_named(function, values),
                  two_d_only_named(function, BILINEAR, values, lambda rows: bilinear_values(
                      rows, n1, n2, device, bias=bias, seed=seed))):
                forward, backward = check_values_and_gradients(function, BILINEAR, values)
            check_no_ctx_tensors(BILINEAR, forward)
            # the derivation is the exercise: no autograd inside backward, as MyLinearFunction
            check_backward_by_hand(BILINEAR, backward)
    covers("x1 and x2 with no leading dimension")
    covers("bias=None")
    covers("n1 == n2")
    check_empty_batch(function, device)
    check_many_rows(function, BILINEAR, lambda leading, dtype: {
        k: v.to(dtype) for k, v in bilinear_values(leading, 3, 2, device, seed=3).items()}, "x1")
    # out = 1 (one score per pair, as Hint 3's case), n1 = n2 = 1 too: a squeeze() meant for a
    # leading dimension of size 1 drops the feature dimension
    values = bilinear_values((5,), 1, 1, device, seed=11, out=1)
    with case("x1 and x2 of shape (5, 1), weight of shape (1, 1, 1) (out = 1), bias=a tensor"):
        check_values_and_gradients(function, BILINEAR, values)
    # x1 and x2 with no leading dimension, out = 1 and then n1 = 1: a squeeze() that undoes
    # an added leading dimension drops the feature dimension too
    for n1, out, sizes in ((3, 1, "out = 1"), (1, OUT, "n1 = 1")):
        values = bilinear_values((), n1, 2, device, seed=12, out=out)
        with case(f"x1 of shape ({n1},), x2 of shape (2,), weight of shape ({out}, {n1}, 2) "
                  f"({sizes}), bias=a tensor"):
            with squeeze_named(function, BILINEAR, values, sizes):
                check_values_and_gradients(function, BILINEAR, values)
    with case("grad_output not contiguous"):
        check_noncontiguous_grad_output(function, BILINEAR, bilinear_values((2, 3), 3, 2, device))
    # two calls in flight whose feature sizes differ: a size kept where calls share it (the
    # class, a global) is the second call's when the first call's backward runs
    with case("two calls in one graph, x1 of shape (5, 3) then (5, 2)"):
        check_one_ctx_per_call(function, BILINEAR, bilinear_values((5,), 3, 2, device),
                               bilinear_values((5,), 2, 3, device, seed=9))
    # x1, x2, then weight changed in place between forward and backward: autograd refuses
    # (what ctx.save_for_backward guards), or the gradients are those of the values forward saw
    for name in ("x1", "x2", "weight"):
        with case(f"{name} changed in place after forward, x1 of shape (5, 3)"):
            check_input_version_tracking(function, BILINEAR, bilinear_values((5,), 3, 2, device),
                                         name)
    for bias in (True, False):
        check_each_input_alone(function, BILINEAR,
                               bilinear_values((5,), 3, 2, device, bias=bias),
                               frozen_get_none=True)
    check_computes_only_what_is_needed(function, BILINEAR, bilinear_values((5,), 3, 2, device))
    check_frozen_bias_not_summed(function, BILINEAR, bilinear_values((5,), 3, 2, device))
    check_no_work_for_frozen(function, BILINEAR, bilinear_values((5,), 3, 2, device))
    covers("each gradient only when needed")
    check_gradcheck(function, BILINEAR, bilinear_values((2,), 2, 3, device))
    check_layouts(function, DOMAIN, device, bilinear_values((5,), 3, 2, device))
    check_fresh_call_state(function, BILINEAR, fresh)
    check_backward_memory(function, device)


# the memory case: 128 positions and widths out, n1, n2 whose product of all three is 16 to 24
# times the largest product of two, so that one intermediate of positions x out x n1 x n2 shows
MEMORY_CASE = {"leading": (4, 32), "n1": 24, "n2": 20, "out": 16}


def check_backward_memory(function, device) -> None:
    """The contract's memory bullet: backward holds a few tensors of its inputs' and output's
    sizes and at most 2P x max(out n1, out n2, n1 n2) numbers more (P positions): two
    intermediates of positions x two of (out, n1, n2), each gradient a contraction
    of three factors done two at a time; a (positions, out, n1, n2) product, summed over the
    positions for grad_weight, holds out x n1 x n2 numbers per position. Measured as rule 3's
    generic check measures (autograder.linear_memory), which Bilinear's domain opts out of."""
    leading, n1, n2, out = (MEMORY_CASE[k] for k in ("leading", "n1", "n2", "out"))
    values = bilinear_values(leading, n1, n2, "cpu", out=out, seed=5)
    positions = math.prod(leading)
    allowed = positions * max(out * n1, out * n2, n1 * n2) * values["x1"].element_size()

    def within(sized: int) -> int:
        return FACTOR * sized + 2 * allowed + SLACK

    measured = backward_peak(function, fresh_leaves(values), within)
    if measured is None:  # forward or backward raised: the value checks name that
        return
    peak, sized, largest = measured
    budget = within(sized)
    if peak <= budget:
        covers("backward's memory")
        return
    unsummed = returned_unsummed(function, values, 2 * allowed)
    if unsummed is not None:  # the shape backward returned, then what it cost
        name, shape, wanted = unsummed
        raise GradingError(
            f"Bilinear.backward returned grad_{name} of shape {shape} for {name} of shape "
            f"{wanted}, an entry per position that autograd then sums to {name}'s shape: "
            f"backward held {peak:,} bytes at once on {shapes_of(values)} (float64), about "
            f"{budget:,} allowed {rule_reference('by-hand')}. Which sum does grad_{name} need, "
            "and where does your backward do it?",
            mistake="Bilinear/unsummed-gradient")
    if largest is None:
        made = ", in NumPy arrays"
    else:
        made = f"; its largest tensor has shape {tuple(largest.shape)}, made by {largest.op}"
        if largest.numel >= positions * out * n1 * n2:
            made += ", an entry for every position, output, i and j"
    raise GradingError(
        f"Bilinear's backward held {peak:,} bytes at once on {shapes_of(values)} (float64), "
        f"where its inputs and outputs hold {sized:,} and the contract's 2P x max(out n1, "
        f"out n2, n1 n2) numbers take {2 * allowed:,}: about {budget:,} allowed in all{made} "
        f"{rule_reference('by-hand')}. Each gradient sums a product of three factors: which two "
        "can you combine first, so that no tensor holds p, o, i and j together?",
        mistake="Bilinear/holds-four-index-product")


def returned_unsummed(function, values: dict, over: int) -> tuple | None:
    """(input name, shape backward returned, input's shape) for the first gradient backward
    returned with more entries than its input (a shape the input broadcasts to, which the
    engine sums down without a word) and more than ``over`` bytes, read before the engine."""
    recorder, calls = record_returned_gradients(function)
    try:
        inputs = fresh_leaves(values)
        output = recorder.apply(*inputs.values())
        torch.autograd.grad(output, [v for v in inputs.values() if v.requires_grad],
                            torch.ones_like(output), allow_unused=True)
    except Exception:  # noqa: BLE001 - a probe: the value checks name an error
        return None
    for returned in calls[:1]:
        for (name, value), grad in zip(inputs.items(), returned):
            if (isinstance(grad, torch.Tensor) and isinstance(value, torch.Tensor)
                    and grad.numel() > value.numel()
                    and grad.numel() * grad.element_size() > over):
                return name, tuple(grad.shape), tuple(value.shape)
    return None


def check_empty_batch(function, device) -> None:
    """x1 and x2 of shapes (*leading, n1) and (*leading, n2) with a 0 in the leading dims
    (first, last or between), after every other leading shape passed: F.bilinear's output is
    (*leading, out) and the gradients of weight and bias are zeros."""
    for leading in EMPTY_SHAPES:
        values = bilinear_values(leading, 3, 2, device)
        shapes = f"x1 of shape {(*leading, 3)} and x2 of shape {(*leading, 2)}"
        with case(shapes.replace(" and ", ", ") + ", bias=a tensor"):
            try:
                check_values_and_gradients(function, BILINEAR, values)
            except GradingError as error:
                raise_none_for_empty(function, BILINEAR, values, "F.bilinear")
                raise GradingError(
                    f"Bilinear fails for an empty batch, {shapes}, and is right for every "
                    "non-empty leading shape: there F.bilinear's output has shape "
                    f"{(*leading, OUT)} and the gradients of weight and bias are zeros, sums "
                    "over no rows. Does your code divide by the number of rows, pick one row "
                    "out, or ask reshape to infer a size from zero elements?",
                    error.details or error.hint, mistake="Bilinear/empty-batch") from error
    covers("an empty batch")


@contextlib.contextmanager
def weight_indices_named(function, values: dict):
    """With n1 == n2, after every n1 != n2 case passed: a grad_x1 or grad_x2 that reads the
    weight as weight[o, j, i] runs, and is named when a probe proves it."""
    try:
        yield
    except GradingError as error:
        n1, n2 = values["x1"].shape[-1], values["x2"].shape[-1]
        # n1 != n2: a weight read as weight[o, j, i] raises (or gives a wrong shape); probe
        # the same leading shape with n1 == n2, where it runs
        square = values if n1 == n2 else bilinear_values(
            tuple(values["x1"].shape[:-1]), n1, n1, values["x1"].device,
            bias="bias" in values, seed=7)
        name = _weight_swapped_in(function, square)
        if name is None:
            raise
        first = (f"your grad_{name} is right when n1 != n2 and wrong for n1 == n2: it is what "
                 "weight[o, j, i] in place of weight[o, i, j] gives, the weight's last two "
                 "indices swapped, which only a square weight[o] lets run" if n1 == n2 else
                 f"your grad_{name} reads the weight as weight[o, j, i] in place of "
                 "weight[o, i, j], its last two indices swapped: that fails for n1 != n2, and "
                 "for n1 == n2, where a square weight[o] lets it run, it is what the swapped "
                 "weight gives")
        raise GradingError(
            f"{first}. In y[p, o] = "
            "sum_ij x1[p, i] W[o, i, j] x2[p, j], which index of W goes with x1, and which "
            "with x2?", error.details or error.hint,
            mistake="Bilinear/weight-indices-swapped") from error


def _weight_swapped_in(function, values: dict) -> str | None:
    """The input (x1 or x2) whose gradient, wrong, is the one of the weight transposed in its
    last two dims; None if none is."""
    swapped = Spec(BILINEAR.name, BILINEAR.input_names, lambda x1, x2, weight, bias=None:
                   F.bilinear(x1, x2, weight.transpose(1, 2), bias))
    try:
        inputs = make_inputs(values)
        output = function.apply(*inputs.values())
        grad_output = torch.ones_like(output)
        grads = output.grad_fn.apply(grad_output)  # the user's backward, unchecked
        truth = reference_gradients(BILINEAR, inputs, grad_output)
        other = reference_gradients(swapped, inputs, grad_output)
    except Exception:  # noqa: BLE001 - a probe: any failure proves nothing
        return None
    for name, grad in zip(("x1", "x2"), grads):
        if (isinstance(grad, torch.Tensor) and not torch.allclose(grad.detach(), truth[name])
                and torch.allclose(grad.detach(), other[name])):
            return name
    return None


@contextlib.contextmanager
def bias_sum_named(function, values: dict, device):
    """For x1 and x2 with no leading dimension, a wrong grad_bias shape is named when the probe
    proves it: right with leading dimensions, yet backward's own grad_bias (read before the
    engine checks its shape) is 0-d and the sum of every entry of the true one."""
    try:
        yield
    except GradingError as error:
        if values["x1"].dim() != 1 or not _bias_sums_features(function, values, device):
            raise
        raise GradingError(
            f"grad_bias has shape () but bias has shape ({OUT},) for x1 of shape "
            f"{tuple(values['x1'].shape)}, while your backward is right with leading dimensions: "
            "with none, your sum over the leading dimensions summed the output features "
            "(sum(0) of a 1-D tensor does, and so does sum(dim=()), which sums every dimension, "
            "not none): what shape do x1's leading dimensions take when there are none, and "
            "which sum is the same for every number of them?",
            error.details or error.hint, mistake="Bilinear/bias-sums-features") from error


def _bias_sums_features(function, values: dict, device) -> bool:
    if "bias" not in values:
        return False
    try:
        for leading in ((5,), (2, 3)):
            check_values_and_gradients(function, BILINEAR, bilinear_values(
                leading, values["x1"].shape[-1], values["x2"].shape[-1], device))
        inputs = make_inputs(values)
        output = function.apply(*inputs.values())
        grad_bias = output.grad_fn.apply(torch.ones_like(output))[3]  # unchecked
        truth = reference_gradients(BILINEAR, inputs, torch.ones_like(output))["bias"]
    except Exception:  # noqa: BLE001 - a probe: any failure proves nothing
        return False
    return (isinstance(grad_bias, torch.Tensor) and grad_bias.dim() == 0
            and torch.allclose(grad_bias.detach(), truth.sum()))


def _by_seed():
    """The domain's values: x1 (2, 4, 3), x2 (2, 4, 2), out 5 for even seeds, and every size
    another for odd ones (the per-call check's first call), so that a size kept where calls
    share it (out in a global, for grad_bias's reshape) is the other call's."""
    even = sampled(BILINEAR, {"x1": (2, 4, 3), "x2": (2, 4, 2), "weight": (5, 3, 2),
                              "bias": (5,)})
    odd = sampled(BILINEAR, {"x1": (6, 2), "x2": (6, 4), "weight": (3, 2, 4), "bias": (3,)})
    return lambda device, dtype=torch.float64, seed=0, **given: (
        odd if seed % 2 else even)(device, dtype, seed, **given)


# each gradient contracts three factors two at a time, through one intermediate of positions
# x two of (out, n1, n2) (the solution's einsum: positions x n1 x n2 for grad_x1): past "a few
# tensors of the inputs' size" when every size grows at once, so the contract's own bullet
# bounds it instead (check_backward_memory)
DOMAIN = Domain(BILINEAR, _by_seed(), optional=("bias",), layout_clause=BILINEAR_LAYOUT_CLAUSE,
                linear_memory=False,
                linear_memory_clause=("at most 2P x max(out n1, out n2, n1 n2) numbers besides "
                                      "a few tensors of the inputs' and output's sizes"))


EXERCISES = [
    Exercise("Bilinear", "02_linear", bilinear_full,
             contract=("x1 and x2 with no leading dimension", "bias=None", "n1 == n2",
                       "an empty batch", "non-contiguous grad_output",
                       "each gradient only when needed", "backward's memory"),
             example=lambda: tuple(bilinear_values((5,), 3, 2, "cpu").values()), domain=DOMAIN),
]
