"""Checks for an in-place Function of one input (lesson 07's ReLUInPlace and AbsInPlace):
written into x, marked dirty, x itself returned, grad_output untouched, exact at and beside 0;
ReLUInPlace's battery; and the writable copy the checks generated from their domains write
into. What every in-place Function owes besides is in ``in_place_rules``."""

import math
from types import SimpleNamespace

import torch
from torch.autograd.function import FunctionCtx

from ...checks import (Spec, backward_outputs, check_is_function, check_no_ctx_tensors,
                      run_forward)
from ...function_contract import rule_reference
from ...class_state import check_class_state, class_state
from ...contract import covers
from ...diagnose import diagnose_gradient, diagnose_values
from ...errors import GradingError
from ...exercise import sample
from ...probes import _shares_memory, record_ctx_calls
from .in_place_rules import check_in_place_rules
from .leaf_probes import check_forward_grad_mode  # noqa: F401 (AbsInPlace too)
from .quoting import quoting_case

RELU = Spec("ReLUInPlace", ("x",), torch.relu)
RELU_SHAPES = [(7,), (3, 4), (2, 3, 4), ()]

# beside the kink, at values models meet: float16 rounds +-1e-9 to 0 (x.half() > 0 reads them
# as 0), and a threshold (x > 1e-6, y > 1e-3) misreads them or +-1e-4; in x of 12 entries or
# more, beside four ordinary ones. (Subnormals and +-1e-300, which no model meets, are not
# tried: a mask read from x.float() or cut off at finfo.tiny is correct over the values models
# meet.)
NEAR_ZERO = (1e-9, -1e-9, 1e-4, -1e-4)


def with_zeros(x: torch.Tensor) -> torch.Tensor:
    """``x`` with every third entry exactly 0 (one of them -0.0), where the derivative's
    convention matters, and (float64) entries right beside 0, where a mask read in float16 or
    with a threshold errs."""
    flat = x.detach().clone().reshape(-1)
    flat[::3] = 0
    if flat.numel() >= 12:
        flat[3] = -0.0  # -0.0: compared with ==, either zero passes; the gradient there is 0
    if flat.dtype == torch.float64 and flat.numel() >= 12:
        flat[[4, 5, 7, 8]] = torch.tensor(NEAR_ZERO, dtype=flat.dtype, device=flat.device)
    return flat.reshape(x.shape)


def _float32_reading(spec: Spec, x: torch.Tensor, grad_output: torch.Tensor,
                     dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The gradient a mask or sign read from x.to(dtype) gives: the reference's at x rounded."""
    rounded = x.detach().to(dtype).to(x.dtype).requires_grad_()
    grad, = torch.autograd.grad(spec.reference(rounded), rounded, grad_output)
    return grad


def check_float32_reading(function, spec: Spec, got, pristine, before, what: str) -> None:
    """A wrong float64 gradient that is what x read in a narrower dtype gives, named by a probe:
    x.half() rounds 1e-9 to 0 but not 1e-7 (beside 0 at values models meet); x.float() and
    x.bfloat16() round only values no model meets (1e-300, 1e-42) to 0, which the checks no
    longer try, so their names stay for a probe that sees them."""
    if before.dtype != torch.float64 or not any(
            torch.allclose(got, _float32_reading(spec, before, pristine, dtype))
            for dtype in (torch.float32, torch.float16, torch.bfloat16)):
        return
    # +-1e-7, which float16 keeps, and +-1e-9, which it rounds to 0: a threshold (1e-6, 1e-10)
    # reads them otherwise
    probe = torch.tensor([1e-30, -1e-30, 1e-300, -1e-300, 0.5, -0.5, 1e-7, -1e-7, 1e-9, -1e-9,
                          1e-42, -1e-42],
                         dtype=torch.float64, device=before.device)
    try:
        _, grad, g, _ = gradient_through(function, spec, probe, seed=3)
    except Exception:  # the learner's code may raise anything: then it is not proven
        return
    if not isinstance(grad, torch.Tensor) or grad.shape != probe.shape:
        return
    if torch.allclose(grad, _float32_reading(spec, probe, g, torch.float16)):
        raise GradingError(
            f"{spec.name}'s {what} is read in a narrower dtype than x's: x = 1e-9 reads as "
            "0, as from x.half() (float16 keeps nothing nonzero below about 6e-8), and its "
            f"gradient treats it as 0: build the {what} from x itself",
            mistake=f"{spec.name}/{what}-in-narrower-dtype")
    if torch.allclose(grad, _float32_reading(spec, probe, g, torch.bfloat16)):
        raise GradingError(
            f"{spec.name}'s {what} is read from x rounded to bfloat16: x.bfloat16() rounds "
            "+-1e-300 and even +-1e-42 (which float32 keeps) to 0, and its gradient treats "
            f"them as 0; build the {what} from x itself", mistake=f"{spec.name}/{what}-in-bfloat16")
    if torch.allclose(grad, _float32_reading(spec, probe, g)):
        raise GradingError(
            f"{spec.name}'s {what} is read from x rounded to float32: x.float() rounds x = "
            "1e-300 and -1e-300 to 0, which its gradient then treats as 0 (1e-30, which "
            f"float32 keeps, is read right); build the {what} from x itself",
            mistake=f"{spec.name}/{what}-in-float32")


def noise(like: torch.Tensor, seed: int) -> torch.Tensor:
    return sample(like.shape, like.device, seed=seed, dtype=like.dtype)


# PyTorch's error when forward marks a tensor dirty and does not return that very tensor
DIRTY_NOT_RETURNED = "marked as dirty during the forward method were not returned"


def _returned_by_forward(function, x: torch.Tensor):
    """What ``function``'s forward returns for ``x`` called directly, with a bare ctx and
    autograd off (apply raised after it returned, so the output never reached the grader)."""
    ctx = FunctionCtx()
    with torch.no_grad():
        if getattr(function, "setup_context", None) is not getattr(
                torch.autograd.Function, "setup_context"):
            output = function.forward(x)
            function.setup_context(ctx, (x,), output)
            return output
        return function.forward(ctx, x)


def dirty_not_returned(function, spec: Spec, before: torch.Tensor) -> GradingError:
    """Forward marked x dirty and returned another tensor object: named by what it returned (a
    view of x, a new tensor), from a direct call of forward on a copy of x."""
    x = before.clone()
    try:
        output = _returned_by_forward(function, x)
    except Exception:  # the learner's code may raise anything: then say what PyTorch proved
        output = None
    returned = output if isinstance(output, tuple) else (output,)
    if any(isinstance(o, torch.Tensor) and o is not x and _shares_memory(o, x)
           for o in returned):
        what = ("a view of x (x.view_as(x), x.view(...), x[...] and x.reshape(...) are new "
                "tensor objects that share x's memory), not x itself")
    elif any(isinstance(o, torch.Tensor) for o in returned):
        what = "a new tensor, not x itself"
    else:
        what = "something other than x itself"
    return GradingError(
        f"{spec.name}.forward calls ctx.mark_dirty(x) but returns {what}, and PyTorch refuses "
        "the call (\"Some elements marked as dirty during the forward method were not returned "
        "as output\"): marking x is right; return the very tensor you wrote into and marked",
        mistake=f"{spec.name}/dirty-not-returned")


def forward_in_place(function, spec: Spec, x: torch.Tensor):
    """``function.apply(x)`` for a non-leaf ``x``: (ForwardTrace, output, x's values before)."""
    before, version = x.detach().clone(), x._version
    try:
        with record_ctx_calls():
            forward = run_forward(function, spec, {"x": x})
    except GradingError as error:
        if DIRTY_NOT_RETURNED not in str(error.__cause__ or ""):
            raise
        raise dirty_not_returned(function, spec, before) from error
    y = forward.output
    if not isinstance(y, torch.Tensor):
        raise GradingError(f"{spec.name}.forward must return x; it returned {type(y).__name__}")
    if y is not x:
        if _shares_memory(y, x):
            raise GradingError(
                f"{spec.name}.apply(x) gave back a new tensor that views x, not x itself, "
                "which apply does when forward returns its input x (or a view of it) without "
                "telling autograd that forward wrote into x: autograd never learned of the "
                "write, so gradients through x are silently wrong. Which ctx call tells "
                "autograd that forward modified x? help(torch.autograd.function.FunctionCtx)",
                mistake=f"{spec.name}/mark-dirty-missing")
        unchanged = " and left x unchanged" if torch.equal(x.detach(), before) else ""
        raise GradingError(f"{spec.name} returned a new tensor{unchanged}: write into x in "
                           "place, tell autograd of the write through ctx and return x itself",
                           mistake=f"{spec.name}/returns-new-tensor")
    if (not x.is_contiguous() and torch.equal(x.detach(), before)
            and not torch.equal(spec.reference(before), before)):
        raise GradingError(
            f"x after {spec.name} is unchanged where x is not contiguous (shape "
            f"{tuple(x.shape)}, strides {x.stride()}): the write went into a copy. reshape and "
            "contiguous() copy a tensor whose memory is not in order (view refuses to): write "
            "into x itself", mistake=f"{spec.name}/writes-into-a-copy")
    check_exact(spec, x, before, where=torch.isnan)
    diagnose_values(f"x after {spec.name}", x, spec.reference(before))
    check_exact(spec, x, before)
    if x._version == version:  # unreachable through mark_dirty, which bumps it too
        raise GradingError("x's version counter did not move: write into x in place")
    check_no_ctx_tensors(spec, forward)
    return forward, y, before


def check_exact(spec: Spec, y: torch.Tensor, before: torch.Tensor, where=None) -> None:
    """The reference is exact in every dtype (a clamp, a sign flip): so is the write. A
    threshold below 0 (x < -1e-6) leaves entries such as -1e-9 that no tolerance sees; a
    product with a mask turns -inf into nan (``where``: only entries where it holds of y)."""
    expected = spec.reference(before)
    if y.shape != expected.shape:
        return
    wrong = (y.detach() != expected) & ~torch.isnan(expected)  # == : -0.0 is 0.0
    if where is not None:
        wrong &= where(y.detach())
    if bool(wrong.any()):
        at = wrong.nonzero()[0].tolist()
        index = tuple(at)
        raise GradingError(
            f"x after {spec.name} is not exactly {spec.reference.__name__}(x): at index "
            f"{index}, x = {before[index].item():.6g} became {y.detach()[index].item():.6g}, "
            f"{spec.reference.__name__} gives {expected[index].item():.6g}; the write is exact "
            "in every dtype, beside 0 and at +-inf included: what does your write do to that "
            "entry?", mistake=f"{spec.name}/write-not-exact")


def with_infinities(device) -> torch.Tensor:
    """+-inf beside 0, +-1e-9 and ordinary values: the gradient is that of the reference at
    every one (a mask or sign that divides y by itself, or x by |x|, turns inf / inf to nan)."""
    return torch.tensor([[math.inf, -math.inf, 0.0, 2.5], [-1.5, 1e-9, -1e-9, math.inf]],
                        dtype=torch.float64, device=device)


def gradient_through(function, spec: Spec, x: torch.Tensor, seed: int = 0):
    """(the gradient of a leaf ``base`` whose clone went through ``function``, the
    grad_output used, x's values before the write)."""
    base = x.detach().clone().requires_grad_()
    inner = base.clone()  # not a leaf: writing into it is allowed
    forward, y, before = forward_in_place(function, spec, inner)
    grad_output = noise(y, seed + 1)
    if grad_output.dim() >= 2:  # the same values, not contiguous
        grad_output = grad_output.transpose(-2, -1).contiguous().transpose(-2, -1)
    pristine = grad_output.clone()
    got = backward_outputs(spec, (y,), base, (grad_output,))
    return forward, got, pristine, before


def writable_copy(x: torch.Tensor) -> torch.Tensor:
    """A non-leaf copy of ``x`` with x's strides (a column slice stays a column slice), its
    gradient flowing back to x: an in-place Function may write into it."""
    base = x._base if x._base is not None else x
    buffer = torch.zeros_like(base, memory_format=torch.contiguous_format).detach()
    copy = buffer.as_strided(x.size(), x.stride(), x.storage_offset())
    return copy.copy_(x)


def writing_into_a_copy(function):
    """For the generated checks, which give x as a leaf that requires grad (or a view of one):
    ``function.apply`` on a writable copy of x with x's strides. A subclass, so that an
    attribute forward or backward sets on the learner's class is still seen."""
    return type(function.__name__, (function,),
                {"apply": staticmethod(lambda x: function.apply(writable_copy(x)))})


IN_PLACE_LAYOUTS = ("transposed", "column slice")
IN_PLACE_LAYOUT_CLAUSE = ("x of any strides an in-place write accepts (transposed, a column "
                          "slice); not expanded: torch refuses to write in place into an "
                          "expanded tensor, whose elements share memory")


# ReLUInPlace ------------------------------------------------------------------------------

def check_relu(function, x: torch.Tensor, *, seed: int = 0) -> None:
    """Written in place, marked dirty, the gradient with 0 at x == 0, grad_output untouched."""
    state = class_state(function)
    forward, got, pristine, before = gradient_through(function, RELU, x, seed)
    expected = pristine * (before > 0)
    if isinstance(got, torch.Tensor) and got.shape == x.shape and not torch.allclose(got, expected):
        if (before == 0).any() and torch.allclose(got, pristine * (before >= 0)):
            raise GradingError("ReLUInPlace's gradient at x == 0 is grad_output: make it 0, as "
                               "MyReLU does in lesson 01. Which comparison is False exactly "
                               "where x was 0 or below?",
                               mistake="ReLUInPlace/gradient-at-zero")
        if torch.allclose(got, pristine) and (before < 0).any():
            raise GradingError("ReLUInPlace's backward passes grad_output through everywhere, "
                               "also where x was negative. After the clamp y has no negative "
                               "entries: which comparison on y is False exactly where x was 0 "
                               "or below?", mistake="ReLUInPlace/mask-always-true")
        check_float32_reading(function, RELU, got, pristine, before, "mask")
    diagnose_gradient("x", got, expected, inputs={"x": before})
    if not forward.saved and (before <= 0).any() and (before > 0).any():
        check_class_state(SimpleNamespace(spec=RELU), function, state, "forward")
        raise GradingError(
            "ReLUInPlace saves nothing with ctx.save_for_backward, yet its backward knows where "
            "x was clamped: it reads that from somewhere that is not this call's ctx (a module "
            "global, a list it pops, a class attribute), which every call shares and whose "
            "contents a second call, or a second backward on one graph, does not find as this "
            "forward left them. Save what backward needs with ctx.save_for_backward",
            mistake="ReLUInPlace/state-outside-ctx")
    check_relu_saved(forward, before)


def check_relu_saved(forward, x: torch.Tensor) -> None:
    """The output is all backward needs, and x holds it once forward returns: saving x costs
    nothing. A tensor made in forward and saved besides (a mask) may cost one byte an element."""
    made = [saved for saved in forward.saved if saved.role == "intermediate"]
    total = sum(saved.nbytes for saved in made)
    if total > max(x.numel(), 1):
        what = ", ".join(f"a {str(s.dtype)[6:]} tensor of shape {s.shape}" for s in made)
        raise GradingError(
            f"ReLUInPlace saves {what}, made in forward: {total} bytes for {x.numel()} "
            "elements, where x (the output once forward returns) costs nothing and a mask one "
            "byte per element; what does backward need, and is it already in a tensor?",
            mistake="ReLUInPlace/saves-copy")


def relu_full(ReLUInPlace, device) -> None:
    function = check_is_function(ReLUInPlace, RELU)
    check_forward_grad_mode(function, RELU, device)
    for seed, shape in enumerate(RELU_SHAPES):
        with quoting_case(RELU, f"x of shape {shape} with some entries exactly 0"):
            check_relu(function, with_zeros(sample(shape, device, seed=seed)), seed=seed)
    covers("x == 0")
    covers("0-d x")
    with quoting_case(RELU, "x of shape (0, 3)"):  # x.min() raises here
        check_relu(function, sample((0, 3), device, seed=4), seed=4)
    covers("empty x")
    with quoting_case(RELU, "x with every entry positive, nothing to clamp"):
        check_relu(function, sample((3, 4), device, seed=8).abs() + 0.5, seed=8)
    with quoting_case(RELU, "x transposed, some entries exactly 0"):
        check_relu(function, with_zeros(sample((4, 3), device, seed=6)).mT, seed=6)
    with quoting_case(RELU, "x with +-inf entries"):
        check_relu(function, with_infinities(device), seed=7)
    check_in_place_rules(function, RELU, device, with_zeros)
