"""Lesson 07: SortWithIndices, SplitHalves and ReLUInPlace: several outputs, None gradients,
in place. Some contracts leave no trace in the values (integer indices never require grad,
marked or not), so probes observe them: the ctx calls forward made, what the engine passed to
backward, and the memory backward allocated."""

from types import SimpleNamespace

import torch

from ...checks import (Spec, backward_outputs, case, check_is_function, check_no_ctx_tensors,
                      check_untouched, gradcheck_callable, run_forward)
from ...contract import check_each_input_alone, covers
from ...diagnose import diagnose_gradient, diagnose_values
from ...precision import precision_findings_now
from ...domain import Case, Domain
from ...errors import GradingError
from ...exercise import Exercise, sample
from ...class_state import check_class_state, class_state
from ...probes import (AllocationLog, NoGradient, _shares_memory, record_ctx_calls,
                      record_grad_outputs)
from .in_place import (IN_PLACE_LAYOUT_CLAUSE, IN_PLACE_LAYOUTS, RELU, RELU_SHAPES,  # noqa: F401
                       noise, quoting_case, relu_full, with_zeros, writing_into_a_copy)
from .sort_probes import (check_backward_memory, check_saved_indices, every_row_indexed,
                          float32_twins, right_on_each_row, right_without_ties, same_values,
                          sorted_as_float32_only, ties_hint)
from .split_probes import (DtypeAllocationLog, both_allocated, check_saves_nothing,
                           check_split_ctx_tensors, check_unused_half_zero, check_wider_dtype,
                           fresh_memory_nan,
                           halves as _halves)
from .outputs_domain import SPLIT_OUTPUTS, _near_ties, _sample, _split_values

SORT = Spec("SortWithIndices", ("x",), lambda x: torch.sort(x, dim=-1).values)
SPLIT = Spec("SplitHalves", ("x",), lambda x: x)

# 0-d last, so that the first failure comes from a shape whose hint can name the mistake.
SORT_SHAPES = [(7,), (3, 5), (2, 3, 4), (4, 2), (5, 1), ()]
SPLIT_SHAPES = [(6,), (3, 4), (2, 3, 8), (5, 2), (0, 4), (3, 0)]


def _forward(function, spec: Spec, x: torch.Tensor, count: int):
    """``function.apply(x)`` under the probes: (ForwardTrace, outputs, ctx calls)."""
    with record_ctx_calls() as calls:
        forward = run_forward(function, spec, {"x": x})
    outputs = forward.output if isinstance(forward.output, tuple) else (forward.output,)
    if len(outputs) != count or not all(isinstance(o, torch.Tensor) for o in outputs):
        kinds = ", ".join(type(o).__name__ for o in outputs)
        raise GradingError(f"{spec.name}.forward must return {count} tensor"
                           f"{'s' if count > 1 else ''}; it returned ({kinds})")
    return forward, outputs, calls


# SortWithIndices --------------------------------------------------------------------------

def check_sort(function, x: torch.Tensor, *, seed: int = 0, ties: bool = False,
               saved: bool = True) -> None:
    """Values, indices, mark_non_differentiable, the scattered gradient, and (``saved``) what
    is saved."""
    leaf = x.detach().clone().requires_grad_()
    state = class_state(function)
    forward, (values, indices), calls = _forward(function, SORT, leaf, 2)
    diagnose_values("SortWithIndices's values", values, torch.sort(x, dim=-1).values)
    if indices.dtype != torch.int64:
        raise GradingError(f"SortWithIndices's indices have dtype {indices.dtype}: return the "
                           "int64 indices of torch.sort unchanged")
    if indices.shape != x.shape or not (
            torch.equal(x.gather(-1, indices), values.detach())
            and torch.equal(indices.sort(-1).values, torch.sort(x, -1).indices.sort(-1).values)):
        raise GradingError("SortWithIndices's indices do not say where each value came from: "
                           "return torch.sort(x, dim=-1)'s indices, so x.gather(-1, indices) "
                           "== values")
    if sorted_as_float32_only(x, indices):
        raise GradingError("SortWithIndices's order sorts x only as float32 numbers: on values "
                           "float32 rounds to ties, x.gather(-1, indices) is ascending in float32 "
                           "and not in x's dtype, as when a float32 copy of x is sorted. Sort x "
                           "itself: torch.sort(x, dim=-1)",
                           mistake="SortWithIndices/sorted-in-float32")
    marked = [t for name, args in calls if name == "mark_non_differentiable" for t in args
              if isinstance(t, torch.Tensor)]
    if any(same_values(t, values) for t in marked) or not values.requires_grad:
        raise GradingError("SortWithIndices marked its values as non-differentiable: mark only "
                           "the indices; the values carry the gradient")
    if not any(t is indices for t in marked) and any(same_values(t, indices) for t in marked):
        raise GradingError("SortWithIndices marked a copy of its indices, not the indices it "
                           "returns: ctx.mark_non_differentiable applies to the tensor objects "
                           "forward returns, so a copy (indices.clone()) leaves the returned "
                           "indices unmarked. Mark the tensor you return: "
                           "ctx.mark_non_differentiable(indices)",
                           mistake="SortWithIndices/marks-a-copy-of-indices")
    if not any(t is indices for t in marked):
        raise GradingError("SortWithIndices did not mark its indices with "
                           "ctx.mark_non_differentiable(indices): they have no gradient, and "
                           "saying so is part of the contract (for a float output it is the "
                           "only thing that stops autograd expecting one)",
                           mistake="SortWithIndices/indices-not-marked")
    grad_values = noise(values, seed + 1)
    if grad_values.dim() >= 2:  # a transposed copy: the same values, not contiguous
        grad_values = grad_values.transpose(-2, -1).contiguous().transpose(-2, -1)
    pristine = grad_values.clone()
    grad = backward_outputs(SORT, (values, indices), leaf, (grad_values, None))
    check_untouched(SORT, grad_values, pristine)
    expected = torch.zeros_like(x).scatter(-1, indices, pristine)  # grad_x[indices[j]] = g[j]
    if (isinstance(grad, torch.Tensor) and grad.shape == x.shape and x.numel() > 1
            and not torch.allclose(grad, expected)
            and torch.allclose(grad, pristine.gather(-1, indices))):
        raise GradingError("SortWithIndices's backward gathered grad_values with the indices, "
                           "as forward did to x: that applies the permutation a second time "
                           "instead of undoing it. Which position of grad_x should "
                           "grad_values[j] reach? (your my_sort_backward check above)",
                           mistake="SortWithIndices/gathers-instead-of-scattering")
    if (isinstance(grad, torch.Tensor) and every_row_indexed(grad, indices, pristine)
            and not torch.allclose(grad, expected)):
        raise GradingError("SortWithIndices's backward gives every row of grad_x the same "
                           "values, each sent there by some row's indices: it indexes the last "
                           "dimension with every row's indices at once. Each row must route its "
                           "gradient with its own row of indices: which op writes along a "
                           "dimension, row by row, from an index tensor of the input's shape? "
                           "(your my_sort_backward check saw one row only)",
                           mistake="SortWithIndices/indexes-with-every-row")
    if (ties and isinstance(grad, torch.Tensor) and grad.shape == x.shape
            and not torch.allclose(grad, expected) and right_without_ties(function, x)):
        raise ties_hint(grad, expected)
    if (isinstance(grad, torch.Tensor) and not (grad.shape == x.shape
                                                 and torch.allclose(grad, expected))
            and right_on_each_row(function, x)):
        raise GradingError("SortWithIndices's gradient is right for a single row and wrong for "
                           "a batch of rows: each row must be routed by its own indices (x of "
                           f"shape {tuple(x.shape)} holds {x.shape[:-1].numel()} rows, each "
                           "sorted by its own permutation along the last dimension). Does the "
                           "op your backward routes with take one row of indices, or one index "
                           "tensor of x's shape, row by row?",
                           mistake="SortWithIndices/right-on-one-row-only")
    diagnose_gradient("x", grad, expected)
    if saved:  # a class or ctx attribute first: it would read as indices not saved at all
        check_class_state(SimpleNamespace(spec=SORT), function, state, "forward")
        check_no_ctx_tensors(SORT, forward)
        check_saved_indices(forward, indices, function)


class _Values:
    """SortWithIndices as a one-output function of x (its values), for the contract checks."""

    def __init__(self, function):
        self.function = function

    def apply(self, x):
        return self.function.apply(x)[0]


def sort_full(SortWithIndices, device) -> None:
    function = check_is_function(SortWithIndices, SORT)
    # the gradient first, without ties and then with, so that a hint about ties is proven
    with quoting_case(SORT, "x of shape (3, 5)"):
        check_sort(function, sample((3, 5), device, seed=12), saved=False)
    with quoting_case(SORT, "x = [[2, 0, 2, 1, 0, 2]], which has ties"):
        check_sort(function, torch.tensor([[2.0, 0, 2, 1, 0, 2]], dtype=torch.float64,
                                          device=device), ties=True, saved=False)
    with quoting_case(SORT, "pairs of values one float64 ulp apart"):
        check_sort(function, float32_twins(device), saved=False)
    for seed, shape in enumerate(SORT_SHAPES):
        with quoting_case(SORT, f"x of shape {shape}"):
            check_sort(function, sample(shape, device, seed=seed), seed=seed)
    # strided indices: a copy of them is saved
    with quoting_case(SORT, "x transposed, of shape (3, 5)"):
        check_sort(function, sample((5, 3), device, seed=13).mT, seed=13)
    covers("0-d x")
    covers("non-contiguous grad_values")
    check_each_input_alone(_Values(function), SORT, {"x": sample((3, 5), device)})
    ties = torch.randint(0, 3, (4, 9), generator=torch.Generator().manual_seed(3)).double()
    with quoting_case(SORT, "x of shape (4, 9) with many ties"):
        check_sort(function, ties.to(device), ties=True)
    # rows of 32 (the lesson's tied tensor, and it reversed): from 17 entries or so on, torch.sort's
    # default and stable=True order ties differently, so indices from one sort and a gradient
    # routed by another disagree here (9 entries a row are too few to tell them apart)
    tied = torch.tensor([1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 2.0, 0.0] * 4, dtype=torch.float64)
    with quoting_case(SORT, "x of shape (2, 32), the lesson's tied tensor and it reversed"):
        check_sort(function, torch.stack([tied, tied.flip(-1)]).to(device), seed=14, ties=True)
    covers("ties")
    with quoting_case(SORT, "x of shape (4, 64): what backward allocates"):
        check_backward_memory(function, device)
    for seed, shape in ((15, (0, 5)), (16, (3, 0))):  # empty: after the checks that name more
        with quoting_case(SORT, f"x of shape {shape}"):
            check_sort(function, sample(shape, device, seed=seed), seed=seed)
    gradcheck_callable(SORT, lambda t: function.apply(t)[0], sample((2, 4), device, seed=1))


# SplitHalves ------------------------------------------------------------------------------


def _one_output_used(function, x: torch.Tensor, used: int, grad: torch.Tensor) -> None:
    """Only output ``used`` feeds the loss: backward must get None for the other, and allocate
    nothing beyond the gradient it returns."""
    probe, received = record_grad_outputs(function)
    leaf = x.detach().clone().requires_grad_()
    _, outputs, _ = _forward(probe, SPLIT, leaf, 2)
    grad_outputs = [grad if i == used else None for i in (0, 1)]
    which = ("first", "second")[1 - used]
    with DtypeAllocationLog() as log, fresh_memory_nan():
        got = backward_outputs(SPLIT, outputs, leaf, grad_outputs)
    if received and received[-1][1 - used] is not None:
        raise GradingError(f"SplitHalves's backward received a tensor of zeros for the unused "
                           f"{which} output: call ctx.set_materialize_grads(False) in forward, "
                           "so that autograd passes None instead of allocating zeros",
                           mistake="SplitHalves/gradients-materialised")
    expected = torch.zeros_like(x)
    _halves(expected)[used].copy_(grad)
    check_unused_half_zero(got, expected, used, which)
    # got is autograd's result, cast to x's dtype: a float32 gradient (torch.zeros without
    # dtype=) comes back float64, the cast (_to_copy) among the ops below; name the dtype
    with precision_findings_now():  # before the bytes the cast back costs
        diagnose_gradient("x", got, expected, computed_in=x.dtype)
    budget = x.numel() * x.element_size()  # zeros for the missing half would add half again
    if x.numel() and log.bytes > 1.25 * budget:  # an empty x: no budget to measure
        spent = f"{log.bytes} bytes for a gradient of {budget} (ops: {', '.join(log.ops)})"
        check_wider_dtype(log, x, spent)
        if "cat" in log.ops or sum(op in ZERO_MAKERS for op in log.ops) > 1:
            raise GradingError(
                f"SplitHalves's backward allocated a zero tensor for the unused {which} output "
                f"besides the gradient it returns ({spent}): one tensor of x's shape is the "
                "least; how can the half you have land in it without a second tensor?",
                mistake="SplitHalves/zeros-for-missing-half")
        raise GradingError(f"SplitHalves's backward allocated {spent}: which of these is not "
                           "the gradient itself?")


ZERO_MAKERS = {"zeros", "zeros_like", "new_zeros", "full", "full_like", "new_full"}


def _no_output_used(function, x: torch.Tensor) -> None:
    """Both gradients None: backward must return None, allocating nothing."""
    leaf = x.detach().clone().requires_grad_()
    _, (first, _), _ = _forward(function, SPLIT, leaf, 2)
    dropped = NoGradient.apply(first)
    ones = torch.ones_like(dropped)
    try:
        with AllocationLog() as log:
            got = backward_outputs(SPLIT, (dropped,), leaf, (ones,))
    except (AttributeError, TypeError, IndexError) as error:  # read from a None gradient
        raise GradingError(f"SplitHalves.backward raised {type(error).__name__} with neither "
                           "output used: after ctx.set_materialize_grads(False), the gradient "
                           "of an unused output arrives as None, here both, and your backward "
                           "read a shape, dtype or value from one of them. With no gradient "
                           "coming in, what gradient goes out, and what must backward look at "
                           "before it reads either?",
                           str(error), mistake="SplitHalves/none-gradient-not-handled") from error
    if got is not None or log.bytes:
        raise GradingError("SplitHalves's backward returned a tensor when both gradients were "
                           "None: return None (no gradient at all) instead of a tensor of zeros",
                           f"ops that allocated: {', '.join(log.ops)}",
                           mistake="SplitHalves/tensor-when-both-none")


def check_split(function, x: torch.Tensor, *, seed: int = 0) -> None:
    """Fresh halves, both gradients, each one alone, neither."""
    leaf = x.detach().clone().requires_grad_()
    forward, outputs, _ = _forward(function, SPLIT, leaf, 2)
    for label, got, want in zip(("first", "second"), outputs, _halves(x)):
        diagnose_values(f"SplitHalves's {label} output", got, want)
    if any(_shares_memory(o, leaf) for o in outputs):
        raise GradingError("SplitHalves returned views of x: return tensors with memory of "
                           "their own (which op copies a slice?); autograd forbids in-place "
                           "changes to views a Function returns, and they change whenever x "
                           "does",
                           mistake="SplitHalves/returns-views-of-x")
    check_split_ctx_tensors(SPLIT, forward)
    check_saves_nothing(outputs, leaf)
    grads = [noise(o, seed + i).transpose(-2, -1).contiguous().transpose(-2, -1)
             if o.dim() >= 2 else noise(o, seed + i) for i, o in enumerate(outputs, 1)]
    pristine = [g.clone() for g in grads]
    with DtypeAllocationLog() as log:
        got = backward_outputs(SPLIT, outputs, leaf, grads)
    for g, p in zip(grads, pristine):
        check_untouched(SPLIT, g, p)
    diagnose_gradient("x", got, torch.cat(pristine, dim=-1))
    for used in (0, 1):
        with case(f"only the {('first', 'second')[used]} output used"):
            _one_output_used(function, x, used, pristine[used])
    with case("neither output's gradient defined"):
        _no_output_used(function, x)
    with case("both outputs used"):  # last: a float32 step is named above, before its bytes
        both_allocated(log, x)


def check_outputs_writable(function, x: torch.Tensor) -> None:
    """Fresh tensors can be written in place, and the gradient then follows the write."""
    leaf = x.detach().clone().requires_grad_()
    _, (first, second), _ = _forward(function, SPLIT, leaf, 2)
    try:
        first.mul_(3)
        second.add_(1)
    except RuntimeError as error:
        if "is a view" not in str(error):
            raise
        raise GradingError(
            "SplitHalves returned views: writing into an output in place raised \""
            f"{str(error).splitlines()[0][:90]}...\"; a view of x, or of a tensor forward made "
            "(x.clone().chunk(2, -1) gives views of the clone), is not a fresh tensor: return "
            "tensors with memory of their own: which op copies a slice?", str(error),
            mistake="SplitHalves/outputs-not-writable") from error
    grad = backward_outputs(SPLIT, (first, second), leaf, (torch.ones_like(first),
                                                            torch.ones_like(second)))
    expected = torch.ones_like(x)
    _halves(expected)[0].mul_(3)
    diagnose_gradient("x", grad, expected)


class _Joined:
    """SplitHalves as a one-output function of x (its halves side by side)."""

    def __init__(self, function):
        self.function = function

    def apply(self, x):
        return torch.cat(self.function.apply(x), dim=-1)


def split_full(SplitHalves, device) -> None:
    function = check_is_function(SplitHalves, SPLIT)
    for seed, shape in enumerate(SPLIT_SHAPES):
        with quoting_case(SPLIT, f"x of shape {shape}"):
            check_split(function, sample(shape, device, seed=seed), seed=seed)
    # the allocation probes in float32 too: a buffer of a fixed float64 dtype is twice x's
    # bytes there, and autograd's cast back to x's dtype a copy besides
    with quoting_case(SPLIT, "x of shape (3, 4) in float32"):
        check_split(function, sample((3, 4), device, seed=9, dtype=torch.float32), seed=9)
    covers("one output used, or neither")
    covers("non-contiguous gradients")
    with quoting_case(SPLIT, "x of shape (3, 4), each output then written in place"):
        check_outputs_writable(function, sample((3, 4), device, seed=7))
    covers("outputs written in place")
    check_each_input_alone(_Joined(function), SPLIT, {"x": sample((2, 6), device, seed=8)})
    gradcheck_callable(SPLIT, function.apply, sample((2, 6), device, seed=1))


EXERCISES = [
    Exercise("SortWithIndices", "07_outputs", sort_full,
             contract=("0-d x", "non-contiguous grad_values", "ties"),
             domain=Domain(SORT, _sample((3, 5)), ties=Case(
                 _near_ties, "values one ulp apart are sorted by value, as torch.sort(x) "
                 "sorts them (x compared in its own dtype)"))),
    Exercise("SplitHalves", "07_outputs", split_full,
             contract=("one output used, or neither", "non-contiguous gradients",
                       "outputs written in place"),
             domain=Domain(SPLIT_OUTPUTS, _split_values)),
    Exercise("ReLUInPlace", "07_outputs", relu_full,
             contract=("x == 0", "0-d x", "empty x", "a leaf that requires grad",
                       "a view of a non-leaf", "version counter"),
             domain=Domain(RELU, lambda device, dtype=torch.float64, seed=0: {
                 "x": with_zeros(sample((3, 4), device, seed=seed, dtype=dtype))},
                 prepare=lambda submission: writing_into_a_copy(
                     check_is_function(submission, RELU)),
                 layouts=IN_PLACE_LAYOUTS, layout_clause=IN_PLACE_LAYOUT_CLAUSE)),
]
