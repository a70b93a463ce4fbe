"""Lesson 09's graded case, shared by all its exercises: values and gradients against the
reference, the shape of what backward itself returned and a dtype narrower than its input's
(a shape the input broadcasts to is accepted, the engine summing it down under Function
contract rule 2, except in BroadcastMul, whose own contract asks for each input's shape)."""

import torch

from ...checks import (Spec, check_inputs_untouched, check_backward_by_hand,
                      check_no_ctx_tensors, check_untouched, check_values_and_gradients,
                      make_inputs, reference_gradients, run_backward, run_forward)
from ...diagnose import shape_hint
from ...errors import GradingError
from ...function_contract import rule_reference
from ...exercise import sample
from ...probes import record_returned_gradients

LESSON = "09_patterns"
FLOAT32 = {"rtol": 1e-4, "atol": 1e-5}


def _entry(value: float, other: float | None) -> str:
    """One value to 4 significant digits, more where ``other`` differs from it only beyond
    them; a zero as 0 whatever its sign."""
    for digits in range(4, 18):
        text = f"{value + 0.0:.{digits}g}"
        if other is None or other == value or text != f"{other + 0.0:.{digits}g}":
            return text
    return repr(value + 0.0)


def listed(values: torch.Tensor, other: torch.Tensor | None = None) -> str:
    """A tensor's values for a hint's details, nested as the tensor, each to 4 significant
    digits (learner trial 81: got and expected with 16 digits each were noise), more where an
    entry and ``other``'s (got beside expected, of the same shape) differ only beyond them."""
    values = values.detach().cpu().double()
    if other is not None:
        other = other.detach().cpu().double()
        if other.shape != values.shape:
            other = None
    if not values.dim():
        return _entry(values.item(), None if other is None else other.item())
    return "[" + ", ".join(listed(row, None if other is None else other[i])
                           for i, row in enumerate(values)) + "]"


def _shape(shape) -> str:
    dims = tuple(shape)
    return "(" + ", ".join(map(str, dims)) + ("," if len(dims) == 1 else "") + ")"


def broadcasts_to(shape: tuple, got: tuple) -> bool:
    """Does an input of ``shape`` broadcast to a gradient of shape ``got``? The engine then
    sums the gradient down to ``shape`` (Function contract, rule 2): it is accepted."""
    try:
        return torch.broadcast_shapes(shape, got) == torch.Size(got)
    except RuntimeError:
        return False


def returned_shape_hint(spec: Spec, name: str, got: tuple, expected: tuple) -> str:
    """Why backward returned grad_{name} in shape ``got``, to which an input of shape
    ``expected`` does not broadcast (so the engine refuses it)."""
    returned = (f"{spec.name}.backward returned grad_{name} of shape {_shape(got)} for {name} "
                f"of shape {_shape(expected)}, a shape {name} does not broadcast to")
    if _drops_ones(expected, got):  # the same entries, with dims of size 1 added
        return (f"{returned}: it has extra dims of size 1 that {name} lacks; which line of "
                "your backward added them?")
    if _drops_ones(got, expected):
        return (f"{returned}: a dim of size 1 that {name} has was dropped (a sum without "
                "keepdim=True, a squeeze, a reshape): which line of your backward dropped it?")
    return shape_hint(name, got, expected)


def _shape_mistake(spec: Spec, got: tuple, expected: tuple) -> str:
    """The id ``returned_shape_hint`` names, where the shapes prove it."""
    return f"{spec.name}/extra-size-1-dims" if _drops_ones(expected, got) else ""


def _drops_ones(got: tuple, expected: tuple) -> bool:
    """Is ``got`` ``expected`` with one or more of its dims of size 1 left out?"""
    rest = iter(expected)  # got must be a subsequence of expected, differing only by ones
    kept = [size for size in expected if size != 1]
    return (len(got) < len(expected) and [size for size in got if size != 1] == kept
            and all(any(size == other for other in rest) for size in got))


def own_shape_hint(spec: Spec, name: str, got: tuple, expected: tuple) -> str:
    """Why backward returned grad_{name} in shape ``got``, a shape the input broadcasts to,
    where the exercise's own contract asks for the input's shape itself."""
    returned = (f"{spec.name}.backward returned grad_{name} of shape {_shape(got)} for {name} "
                f"of shape {_shape(expected)}")
    if _drops_ones(expected, got):
        return (f"{returned}: it has extra dims of size 1 that {name} lacks, and this "
                "exercise's contract asks for each gradient in its input's own shape: which "
                "line of your backward added them?")
    return (f"{returned}: this exercise's contract asks for each gradient in its input's own "
            "shape, the broadcast dims summed by backward itself, not left to the engine: along "
            f"which dims of the output was {name} repeated?")


def check_returned_shapes(spec: Spec, returned: list, values: dict, exact: bool = False) -> None:
    """What backward itself returned has each tensor input's shape or a shape the input
    broadcasts to (which the engine sums down: Function contract, rule 2), and no narrower
    dtype than the input's (named here, where the values it lost fail first); with ``exact``
    (an exercise whose own contract asks for it), its shape only. A wider dtype is rule 2's
    generic check (``autograder.returned_dtypes``), run for every exercise."""
    for grads in returned:
        for (name, value), grad in zip(values.items(), grads):
            if not (isinstance(value, torch.Tensor) and value.is_floating_point()
                    and isinstance(grad, torch.Tensor)):
                continue
            got, expected = tuple(grad.shape), tuple(value.shape)
            if exact and got != expected and broadcasts_to(expected, got):
                mistake = (f"{spec.name}/extra-size-1-dims" if _drops_ones(expected, got)
                           else f"{spec.name}/gradient-left-to-engine")
                raise GradingError(own_shape_hint(spec, name, got, expected), mistake=mistake)
            if got != expected and not broadcasts_to(expected, got):
                raise GradingError(returned_shape_hint(spec, name, got, expected),
                                   mistake=_shape_mistake(spec, got, expected))
            if _narrower(grad.dtype, value.dtype):  # a wider one is the generic check's
                raise GradingError(  # (returned_dtypes), after every check: it loses nothing
                    f"{spec.name}.backward returned grad_{name} in {grad.dtype} for {name} in "
                    f"{value.dtype}: keep the input's dtype (the engine converted it for you, "
                    f"after the precision was lost) {rule_reference('gradients')}")


def _narrower(dtype: torch.dtype, than: torch.dtype) -> bool:
    """Does a floating ``dtype`` keep fewer significant bits than ``than``?"""
    return (dtype.is_floating_point and than.is_floating_point
            and torch.finfo(dtype).eps > torch.finfo(than).eps)


# PyTorch's words when index_add or scatter_add (which reports itself as scatter) adds one
# dtype into a tensor of another
_DTYPE_CLASHES = ("must have the same scalar type", "Expected self.dtype to be equal to src.dtype")


def explain_broadcast_error(spec: Spec, error: GradingError) -> GradingError:
    """Shapes that do not broadcast inside backward: most often a reduction that lost a dim.
    Dtypes that clash in an add at an index: most often a buffer made without a dtype."""
    if any(clash in error.hint for clash in _DTYPE_CLASHES):
        return GradingError(f"{spec.name}'s backward added values into a tensor of another dtype "
                            f"({error.hint}): torch.zeros(shape) makes float32 whatever x is; "
                            "make the buffer with grad_output.new_zeros(shape) (or zeros_like)",
                            error.details)
    if "must match the size of tensor" not in error.hint:
        return error
    return GradingError(f"{spec.name}'s backward combined tensors whose shapes do not "
                        f"broadcast ({error.hint}): compare the shape of each tensor on that "
                        "line with x's", error.details)


# the exercises whose contract has a saving clause (BroadcastMul's and ProdOverDim's have none)
SAVING_CLAUSE = frozenset({"Cumsum", "IndexSelect", "Normalize", "CumMax"})


def check_ctx_tensors(spec: Spec, forward) -> None:
    """No tensor as a ctx attribute, said as a question: save_for_backward is the place for a
    tensor backward needs, and half of this lesson's exercises need none of what a learner keeps
    there (Cumsum's x, IndexSelect's x), which moving it into save_for_backward would not fix.
    A differentiable output kept on ctx keeps the shared message, which names the cycle."""
    if not forward.ctx_tensor_attributes or any(
            value is output for value in forward.ctx_attributes.values()
            for output in (forward.output if isinstance(forward.output, tuple)
                           else (forward.output,))):
        check_no_ctx_tensors(spec, forward)
        return
    where = ", ".join(forward.ctx_tensor_attributes)
    rule = ("one it can do without (the contract's saving clause) is not kept anywhere"
            if spec.name in SAVING_CLAUSE else "a tensor is never a ctx attribute (a rule for "
            f"every exercise) {rule_reference('ctx')}")
    raise GradingError(
        f"{spec.name} stores a tensor as {where}, out of autograd's sight (no check of in-place "
        "changes, no saved-tensor hooks): does backward need that tensor at all? One it needs "
        f"goes through ctx.save_for_backward; {rule}", mistake=f"{spec.name}/tensor-on-ctx")


# backward's memory bound for Cumsum and IndexSelect (shared.jacobian_memory), in multiples of the
# bytes of the floating inputs and the output: a correct backward holds two or three tensors of
# their size (a flip, a scan, a buffer, an index of x's rows)
LINEAR_FACTOR = 8

# the ids of the shared checks that an input or grad_output was written in place (rule 5)
_WRITES = ("/writes-input", "/writes-grad-output")


def graded_case(function, spec: Spec, values: dict, tolerance=None, exact_shapes=False):
    """Values and gradients against the reference, grad_output and inputs untouched, the
    shapes backward returned (with ``exact_shapes``, each input's own), no tensors on ctx, a
    backward written by hand."""
    probe, returned = record_returned_gradients(function)
    try:
        forward, backward = check_values_and_gradients(probe, spec, values, **(tolerance or {}))
    except GradingError as error:
        if error.mistake.endswith(_WRITES):  # an in-place write, named before any shape
            raise
        check_returned_shapes(spec, returned, values, exact_shapes)  # the precise hint
        raise explain_broadcast_error(spec, error) from error
    check_returned_shapes(spec, returned, values, exact_shapes)
    check_ctx_tensors(spec, forward)
    check_backward_by_hand(spec, backward)
    return forward, backward


def described(values: dict, dtype: torch.dtype) -> str:
    """``a of shape (3, 1), b of shape (4,), float64``."""
    parts = [f"{n} of shape {_shape(v.shape)}" if isinstance(v, torch.Tensor) else f"{n}={v!r}"
             for n, v in values.items()]
    return ", ".join(parts + [str(dtype).removeprefix("torch.")])


def gradient_for(function, spec: Spec, values: dict, seed: int = 1, grad_output=None):
    """(the learner's gradient for the first input, the true one, grad_output), the truth
    computed on the inputs as given: an input or grad_output written in place by forward or
    backward is named as such, never blamed on the gradient's values."""
    inputs = make_inputs(values)
    before = {n: (v.detach().clone(), v._version) for n, v in inputs.items()
              if isinstance(v, torch.Tensor)}
    forward = run_forward(function, spec, inputs)
    check_inputs_untouched(spec, inputs, before, "forward")
    if grad_output is None:
        grad_output = sample(forward.output.shape, forward.output.device, seed=seed,
                             dtype=forward.output.dtype)
    truth = reference_gradients(spec, make_inputs(values), grad_output)
    given = grad_output.clone()
    version = given._version
    try:
        backward = run_backward(spec, forward.output, inputs, given)
    except GradingError as error:
        raise explain_broadcast_error(spec, error) from error
    check_untouched(spec, given, grad_output, version)
    check_inputs_untouched(spec, inputs, before, "backward")
    first = next(iter(truth))
    return backward.grads[0], truth[first], grad_output
