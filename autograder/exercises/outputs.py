"""Lesson 07: SortWithIndices, SplitHalves and ReLUInPlace: several outputs, None gradients,
in place. Some contracts leave no trace in the values (integer indices never require grad,
marked or not), so probes observe them: the ctx calls forward made, what the engine passed to
backward, and the memory backward allocated."""

import torch

from ..checks import (Spec, backward_outputs, case, check_is_function, check_no_ctx_tensors,
                      check_untouched, gradcheck_callable, run_forward)
from ..diagnose import diagnose_gradient, diagnose_values
from ..errors import GradingError
from ..exercise import Exercise, sample
from ..probes import (AllocationLog, NoGradient, _shares_memory, record_ctx_calls,
                      record_grad_outputs)

SORT = Spec("SortWithIndices", ("x",), lambda x: torch.sort(x, dim=-1).values)
SPLIT = Spec("SplitHalves", ("x",), lambda x: x)
RELU = Spec("ReLUInPlace", ("x",), torch.relu)

# 0-d last, so that the first failure comes from a shape whose hint can name the mistake.
SORT_SHAPES = [(7,), (3, 5), (2, 3, 4), (4, 2), (5, 1), ()]
SPLIT_SHAPES = [(6,), (3, 4), (2, 3, 8), (5, 2)]
RELU_SHAPES = [(7,), (3, 4), (2, 3, 4), ()]
LEAF_ERROR = "a leaf Variable that requires grad"


def _noise(like: torch.Tensor, seed: int) -> torch.Tensor:
    return sample(like.shape, like.device, seed=seed, dtype=like.dtype)


def _same_values(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a.detach(), b.detach())


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

def _check_saved_indices(forward, indices: torch.Tensor) -> None:
    """Backward needs the permutation and nothing else."""
    names = {"input x": "its input x", "output": "the values"}
    for saved in forward.saved:
        if saved.dtype.is_floating_point:
            what = names.get(saved.role, f"an intermediate of shape {saved.shape}")
            raise GradingError(f"SortWithIndices saves {what} with save_for_backward: backward "
                               "needs only where each value came from; save the indices alone")
    if not any(_same_values(saved.tensor, indices) for saved in forward.saved):
        raise GradingError("SortWithIndices did not save its indices: backward needs them; "
                           "call ctx.save_for_backward(indices)")


def check_sort(function, x: torch.Tensor, *, seed: int = 0, ties: bool = False) -> None:
    """Values, indices, mark_non_differentiable, what is saved, and the scattered gradient."""
    leaf = x.detach().clone().requires_grad_()
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
    marked = [t for name, args in calls if name == "mark_non_differentiable" for t in args
              if isinstance(t, torch.Tensor)]
    if any(_same_values(t, values) for t in marked) or not values.requires_grad:
        raise GradingError("SortWithIndices marked its values as non-differentiable: mark only "
                           "the indices; the values carry the gradient")
    if not any(_same_values(t, indices) for t in marked):
        raise GradingError("SortWithIndices did not mark its indices with "
                           "ctx.mark_non_differentiable(indices): they have no gradient, and "
                           "saying so is part of the contract (for a float output it is the "
                           "only thing that stops autograd expecting one)")
    grad_values = _noise(values, seed + 1)
    pristine = grad_values.clone()
    grad = backward_outputs(SORT, (values, indices), leaf, (grad_values, None))
    check_untouched(SORT, grad_values, pristine)
    expected = torch.zeros_like(x).scatter(-1, indices, pristine)  # grad_x[indices[j]] = g[j]
    if (isinstance(grad, torch.Tensor) and grad.shape == x.shape and x.numel() > 1
            and not torch.allclose(grad, expected)
            and torch.allclose(grad, pristine.gather(-1, indices))):
        raise GradingError("SortWithIndices's backward gathered grad_values with the indices, "
                           "which is what forward does to x: scatter them back instead, "
                           "grad_x[..., indices[j]] = grad_values[..., j]")
    if ties and isinstance(grad, torch.Tensor) and grad.shape == x.shape \
            and not torch.allclose(grad, expected):
        raise GradingError("SortWithIndices's gradient is wrong where x has equal values (ties): "
                           "each grad_values[j] goes to exactly one place, indices[j]; matching "
                           "values instead sends it to every tied position")
    diagnose_gradient("x", grad, expected)
    _check_saved_indices(forward, indices)
    check_no_ctx_tensors(SORT, forward)


def sort_opening(SortWithIndices, device="cpu") -> None:
    function = check_is_function(SortWithIndices, SORT)
    with case("x = [[2, 0, 2, 1, 0, 2]], which has ties"):
        check_sort(function, torch.tensor([[2.0, 0, 2, 1, 0, 2]], dtype=torch.float64,
                                          device=device), ties=True)
    with case("x of shape (3, 5)"):
        check_sort(function, sample((3, 5), device))
    gradcheck_callable(SORT, lambda t: function.apply(t)[0], sample((2, 4), device, seed=1))


def sort_full(SortWithIndices, device) -> None:
    sort_opening(SortWithIndices, device)
    for seed, shape in enumerate(SORT_SHAPES):
        with case(f"x of shape {shape}"):
            check_sort(SortWithIndices, sample(shape, device, seed=seed), seed=seed)
    ties = torch.randint(0, 3, (4, 9), generator=torch.Generator().manual_seed(3)).double()
    with case("x of shape (4, 9) with many ties"):
        check_sort(SortWithIndices, ties.to(device), ties=True)
    with case("x of shape (3, 6) in float32"):
        check_sort(SortWithIndices, sample((3, 6), device, dtype=torch.float32))


# SplitHalves ------------------------------------------------------------------------------

def _halves(x: torch.Tensor):
    h = x.shape[-1] // 2
    return x[..., :h], x[..., h:]


def _one_output_used(function, x: torch.Tensor, used: int, grad: torch.Tensor) -> None:
    """Only output ``used`` feeds the loss: backward must get None for the other, and allocate
    nothing beyond the gradient it returns."""
    probe, received = record_grad_outputs(function)
    leaf = x.detach().clone().requires_grad_()
    _, outputs, _ = _forward(probe, SPLIT, leaf, 2)
    grad_outputs = [grad if i == used else None for i in (0, 1)]
    which = ("first", "second")[1 - used]
    with AllocationLog() as log:
        got = backward_outputs(SPLIT, outputs, leaf, grad_outputs)
    if received and received[-1][1 - used] is not None:
        raise GradingError(f"SplitHalves's backward received a tensor of zeros for the unused "
                           f"{which} output: call ctx.set_materialize_grads(False) in forward, "
                           "so that autograd passes None instead of allocating zeros")
    expected = torch.zeros_like(x)
    _halves(expected)[used].copy_(grad)
    diagnose_gradient("x", got, expected)
    budget = x.numel() * x.element_size()  # zeros for the missing half would add half again
    if log.bytes > 1.25 * budget:
        raise GradingError(
            f"SplitHalves's backward allocated a zero tensor for the unused {which} output "
            f"({log.bytes} bytes for a gradient of {budget}): write the gradient you have into "
            "one zero-initialised tensor (new_zeros, then a slice) or pad it; no zeros per "
            "missing output", f"ops that allocated: {', '.join(log.ops)}")


def _no_output_used(function, x: torch.Tensor) -> None:
    """Both gradients None: backward must return None, allocating nothing."""
    leaf = x.detach().clone().requires_grad_()
    _, (first, _), _ = _forward(function, SPLIT, leaf, 2)
    dropped = NoGradient.apply(first)
    ones = torch.ones_like(dropped)
    with AllocationLog() as log:
        got = backward_outputs(SPLIT, (dropped,), leaf, (ones,))
    if got is not None or log.bytes:
        raise GradingError("SplitHalves's backward returned a tensor when both gradients were "
                           "None: return None (no gradient at all) instead of a tensor of zeros",
                           f"ops that allocated: {', '.join(log.ops)}")


def check_split(function, x: torch.Tensor, *, seed: int = 0) -> None:
    """Fresh halves, both gradients, each one alone, neither."""
    leaf = x.detach().clone().requires_grad_()
    forward, outputs, _ = _forward(function, SPLIT, leaf, 2)
    for label, got, want in zip(("first", "second"), outputs, _halves(x)):
        diagnose_values(f"SplitHalves's {label} output", got, want)
    if any(_shares_memory(o, leaf) for o in outputs):
        raise GradingError("SplitHalves returned views of x: return fresh tensors "
                           "(x[..., :h].clone()); autograd forbids in-place changes to views a "
                           "Function returns, and they change whenever x does")
    check_no_ctx_tensors(SPLIT, forward)
    grads = [_noise(o, seed + i) for i, o in enumerate(outputs, 1)]
    pristine = [g.clone() for g in grads]
    got = backward_outputs(SPLIT, outputs, leaf, grads)
    for g, p in zip(grads, pristine):
        check_untouched(SPLIT, g, p)
    diagnose_gradient("x", got, torch.cat(pristine, dim=-1))
    for used in (0, 1):
        with case(f"only the {('first', 'second')[used]} output used"):
            _one_output_used(function, x, used, pristine[used])
    with case("neither output's gradient defined"):
        _no_output_used(function, x)


def split_opening(SplitHalves, device="cpu") -> None:
    function = check_is_function(SplitHalves, SPLIT)
    with case("x of shape (3, 4)"):
        check_split(function, sample((3, 4), device))
    gradcheck_callable(SPLIT, function.apply, sample((2, 6), device, seed=1))


def split_full(SplitHalves, device) -> None:
    split_opening(SplitHalves, device)
    for seed, shape in enumerate(SPLIT_SHAPES):
        with case(f"x of shape {shape}"):
            check_split(SplitHalves, sample(shape, device, seed=seed), seed=seed)
    with case("x of shape (3, 6) in float32"):
        check_split(SplitHalves, sample((3, 6), device, dtype=torch.float32))


# ReLUInPlace ------------------------------------------------------------------------------

def _with_zeros(x: torch.Tensor) -> torch.Tensor:
    """``x`` with every third entry exactly 0, where the ReLU convention matters."""
    flat = x.detach().clone().reshape(-1)
    flat[::3] = 0
    return flat.reshape(x.shape)


def _check_rewritten(function, x: torch.Tensor, y: torch.Tensor, before: torch.Tensor) -> None:
    """y must be x itself, clamped, with x's history now the Function's backward."""
    if y is not x:
        if _shares_memory(y, x):
            raise GradingError(
                "ReLUInPlace did not call ctx.mark_dirty(x): autograd got its input back unmarked "
                "and returned a view of it, while x itself keeps its old history, so gradients "
                "through x are silently wrong")
        unchanged = " and left x unchanged" if torch.equal(x.detach(), before) else ""
        raise GradingError(f"ReLUInPlace returned a new tensor{unchanged}: clamp x in place "
                           "(x.clamp_(min=0)), call ctx.mark_dirty(x) and return x itself")
    diagnose_values("x after ReLUInPlace", x, torch.relu(before))


def check_relu(function, x: torch.Tensor, *, seed: int = 0) -> None:
    """Written in place, marked dirty, the gradient with 0 at x == 0, grad_output untouched."""
    base = x.detach().clone().requires_grad_()
    inner = base.clone()  # not a leaf: writing into it is allowed
    before, version = inner.detach().clone(), inner._version
    forward, (y,), _ = _forward(function, RELU, inner, 1)
    _check_rewritten(function, inner, y, before)
    if inner._version == version:  # unreachable through mark_dirty, which bumps it too
        raise GradingError("x's version counter did not move: write into x in place")
    check_no_ctx_tensors(RELU, forward)
    grad_output = _noise(y, seed + 1)
    pristine = grad_output.clone()
    got = backward_outputs(RELU, (y,), base, (grad_output,))
    check_untouched(RELU, grad_output, pristine)
    expected = pristine * (before > 0)
    if isinstance(got, torch.Tensor) and got.shape == x.shape and not torch.allclose(got, expected):
        if (before == 0).any() and torch.allclose(got, pristine * (before >= 0)):
            raise GradingError("ReLUInPlace's gradient at x == 0 is grad_output: make it 0, as "
                               "MyReLU does in lesson 01 (mask y > 0, not y >= 0)")
        if torch.allclose(got, pristine) and (before < 0).any():
            raise GradingError("ReLUInPlace's backward passes grad_output through everywhere: "
                               "after the clamp x has no negative entries, so a mask y >= 0 is "
                               "all True; use y > 0")
    diagnose_gradient("x", got, expected)


def check_leaf_error(function, device) -> None:
    """A leaf that requires grad: PyTorch's own error, which mark_dirty triggers."""
    leaf = torch.tensor([-1.0, 2.0, 0.5], dtype=torch.float64, device=device, requires_grad=True)
    try:
        function.apply(leaf)
    except NotImplementedError:
        raise
    except RuntimeError as error:
        if LEAF_ERROR in str(error):
            return
        raise GradingError("ReLUInPlace raised its own error for a leaf that requires grad: let "
                           "PyTorch raise it; ctx.mark_dirty(x) does", str(error)) from error
    raise GradingError("ReLUInPlace overwrote a leaf that requires grad without an error: call "
                       "ctx.mark_dirty(x), and PyTorch raises \"a leaf Variable that requires "
                       "grad has been used in an in-place operation\"")


def check_relu_on_view(function, device) -> None:
    """Writing through a view of a non-leaf: the base's gradient sees the clamp."""
    a = torch.tensor([-1.0, 3.0, -2.0, 0.5, 0.0], dtype=torch.float64, device=device,
                     requires_grad=True)
    b = a.clone()
    function.apply(b[1:])
    weights = torch.arange(1.0, 6.0, dtype=torch.float64, device=device)
    got = backward_outputs(RELU, (b,), a, (weights,))
    expected = weights * torch.tensor([1.0, 1, 0, 1, 0], dtype=torch.float64, device=device)
    diagnose_gradient("x", got, expected)


def check_version_tracking(function, device) -> None:
    """An op that saved x before the in-place write must refuse to backpropagate."""
    b = sample((4,), device, seed=9).requires_grad_().clone()
    saved_by_sin = b.sin()
    function.apply(b)
    try:
        saved_by_sin.sum().backward()
    except RuntimeError as error:
        if "modified by an inplace operation" in str(error):
            return
        raise
    raise GradingError("sin(x) computed before ReLUInPlace backpropagated without an error: "
                       "ReLUInPlace must write into x with an in-place op, which bumps its "
                       "version counter")


def relu_opening(ReLUInPlace, device="cpu") -> None:
    function = check_is_function(ReLUInPlace, RELU)
    with case("x of shape (3, 5) with some entries exactly 0"):
        check_relu(function, _with_zeros(sample((3, 5), device)))
    check_leaf_error(function, device)
    gradcheck_callable(RELU, lambda t: function.apply(t.clone()),
                       sample((2, 4), device, seed=1, away_from_zero=0.1))


def relu_full(ReLUInPlace, device) -> None:
    relu_opening(ReLUInPlace, device)
    for seed, shape in enumerate(RELU_SHAPES):
        with case(f"x of shape {shape}"):
            check_relu(ReLUInPlace, _with_zeros(sample(shape, device, seed=seed)), seed=seed)
    with case("x of shape (3, 6) in float32"):
        check_relu(ReLUInPlace, _with_zeros(sample((3, 6), device, dtype=torch.float32)))
    with case("x a view, b[1:], of a tensor b that is not a leaf"):
        check_relu_on_view(ReLUInPlace, device)
    plain = torch.tensor([-1.0, 2.0], device=device)  # requires no grad: written, returned
    if ReLUInPlace.apply(plain) is not plain or plain.min() < 0:
        raise GradingError("ReLUInPlace on a tensor that requires no grad must still clamp it in "
                           "place and return it")
    check_version_tracking(ReLUInPlace, device)


EXERCISES = [
    Exercise("SortWithIndices", "07_outputs", sort_full),
    Exercise("SplitHalves", "07_outputs", split_full),
    Exercise("ReLUInPlace", "07_outputs", relu_full),
]
