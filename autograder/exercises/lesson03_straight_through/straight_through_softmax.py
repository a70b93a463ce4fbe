"""Lesson 03, transfer: StraightThroughSoftmax, the straight-through (Gumbel-)softmax.

Forward is the one-hot of ``argmax(logits, -1)`` in the logits' dtype (ties as
``torch.argmax``); backward is the vector-Jacobian product of ``softmax(logits / tau, -1)``,
written by hand. The reference is the detach trick in ordinary code, where autograd records
the softmax: ``hard + (soft - soft.detach())``, exactly ``hard`` in value.
"""

import math

import torch
import torch.nn.functional as F

from ...checks import (Spec, case, check_is_function, check_no_ctx_tensors, make_inputs,
                      run_backward, run_forward)
from ...contract import check_each_input_alone, covers
from ...diagnose import diagnose_gradient, diagnose_values
from ...domain import Case, Constant, Domain
from ...errors import GradingError
from ...exercise import Exercise, sample
from ..shared.saved_copies import check_no_copy_saved, check_no_copy_saved_strided
from .straight_through_softmax_argmax import (check_argmax_of_scaled, check_argmax_of_softmax,
                                              check_narrowed_argmax, first_row, one_hot_argmax)
from .straight_through_softmax_gradients import candidates
from .straight_through_softmax_values import (LOWEST_TAU, low_tau, near_ties, overflow_values,
                                              rows_apart, tied_values, values)
from .contracts import LOGITS_LAYOUT_CLAUSE
from .non_differentiable import check_output_differentiable


def reference(logits, tau):
    soft = torch.softmax(logits / tau, dim=-1)
    return one_hot_argmax(logits.detach()) + (soft - soft.detach())


STS = Spec("StraightThroughSoftmax", ("logits", "tau"), reference)


def _finite_by_exp(logits, tau, grad_output, shift=0.0) -> torch.Tensor:
    """Where the gradient is finite for a softmax rebuilt as exp(z - shift) / sum exp(z - shift),
    z = logits / tau: shift 0 overflows exp, the whole tensor's maximum underflows other rows."""
    e = torch.exp(logits / tau - shift)
    s = e / e.sum(-1, keepdim=True)
    return torch.isfinite(s * (grad_output - (s * grad_output).sum(-1, keepdim=True)) / tau)


def _in_float32(logits, tau, grad_output, got) -> bool:
    """Is a float64 gradient, wrong to float64's tolerance, within float32 rounding of the
    softmax's vector-Jacobian product computed in float32?"""
    if logits.dtype != torch.float64:
        return False
    s, g = torch.softmax(logits.float() / tau, -1), grad_output.float()
    computed = (s * (g - (g * s).sum(-1, keepdim=True)) / tau).to(got.dtype)
    return torch.allclose(got, computed, *_gradient_tolerance(torch.float32, grad_output, tau))


def _gradient_tolerance(dtype, grad_output, tau):
    """(rtol, atol) for the gradient, float64's far below float32's rounding (a step in float32
    fails). An entry s_i (g_i - <g, s>) / tau is small where g_i and <g, s> cancel, while the
    rounding of each term is of order eps * |g| / tau: an absolute tolerance scaled by
    max|g| / tau, so that any correct float32 ordering (a softmax by hand, exp(log_softmax),
    PyTorch's own decomposition through grad_output * s) passes at small tau (a Jacobian built as
    a matrix is rule 3's to fail, not this check's). Measured: at most 1.8e-7 of max|g| / tau in
    float32."""
    rtol, atol = (1e-5, 1e-6) if dtype == torch.float32 else (1e-10, 1e-11)
    largest = grad_output.abs().max().item() if grad_output.numel() else 0.0  # (0, n): empty
    unit = (1e-5 if dtype == torch.float32 else 1e-12) * largest / tau
    return rtol, max(atol, unit)


def _check_rows_finite(logits, tau, grad_output, got, expected) -> None:
    """Name the first row whose gradient is not finite where the softmax's is, and the global
    shift only where it gives non-finite entries exactly there (rows of far-apart magnitude)."""
    bad = ~torch.isfinite(got) & torch.isfinite(expected)
    if not bad.any():
        return
    row = first_row(bad)
    values_ = ", ".join(f"{v:g}" for v in logits[row].tolist())
    where = (f"StraightThroughSoftmax's gradient for logits is not finite in row {list(row)} "
             f"(logits {values_}, tau={tau:g}), where the softmax's gradient is finite")
    shifted = _finite_by_exp(logits, tau, grad_output, shift=(logits / tau).max())
    if torch.equal(torch.isfinite(got), shifted):
        raise GradingError(
            f"{where}: it is what a softmax shifted by the whole tensor's maximum gives (the "
            f"largest logit / tau is {(logits / tau).max().item():g}, in another row), which "
            "underflows every exp of this row to 0, and 0 / 0 is nan; subtract each row's own "
            "maximum (amax(-1, keepdim=True)), as torch.softmax does")
    raise GradingError(f"{where}: compare that row's softmax with torch.softmax(logits / tau, -1)")


def check_forward(output, logits: torch.Tensor, tau=None) -> None:
    """The output must be the one-hot of argmax, exactly, in the logits' dtype."""
    expected = one_hot_argmax(logits)
    what = "StraightThroughSoftmax's output"
    if not isinstance(output, torch.Tensor) or output.shape != expected.shape:
        diagnose_values(what, output, expected)
    if output.dtype != expected.dtype:
        why = " (F.one_hot returns int64)" if output.dtype == torch.int64 else ""
        raise GradingError(
            f"{what} has dtype {output.dtype}, not the logits' {expected.dtype}{why}: convert "
            "the one-hot with .to(logits.dtype)")
    got = output.detach()
    if torch.equal(got, expected):
        return
    if tau is not None:  # logits / tau first: a softmax of equal z ties too
        check_argmax_of_scaled(got, logits, tau, expected)
        check_argmax_of_softmax(got, logits, tau, expected)
    check_narrowed_argmax(got, logits, expected)
    soft = torch.softmax(logits, -1)
    if torch.allclose(got, soft, atol=1e-3) or bool(((got > 0) & (got < 1)).any()):
        raise GradingError(
            f"{what} is not one-hot: forward returns the hard sample, the one-hot of "
            "argmax(logits, -1); only backward uses the softmax")
    if bool(((got == 0) | (got == 1)).all()) and bool((got.sum(-1) > 1).any()):
        raise GradingError(
            f"{what} has more than one 1 in a row with tied maxima: a one-hot has a single 1, "
            "at the first maximum, as torch.argmax(logits, -1) picks it")
    n = logits.shape[-1]
    for how, index in (("topk(1)", logits.topk(1, -1).indices[..., 0]),
                       ("sort(descending=True)", logits.sort(-1, descending=True).indices[..., 0])):
        if torch.equal(got, F.one_hot(index, n).to(got.dtype)):
            row = first_row(got != expected)
            raise GradingError(
                f"{what} puts its 1 at another of the tied maxima in row {list(row)}: it is the "
                f"one-hot of {how}'s first index, and topk and sort do not promise which of tied "
                "values comes first; torch.argmax(logits, -1) picks the first maximum",
                mistake="StraightThroughSoftmax/topk-or-sort-on-ties")
    if torch.equal(got.sum(-1), torch.ones_like(got.sum(-1))):
        raise GradingError(
            f"{what} puts its 1 at the wrong position in some row: take argmax over the last "
            "dim, as torch.argmax(logits, -1) does (ties go to the first maximum)")
    diagnose_values(what, got, expected, rtol=0, atol=0)


def _used_the_one_hot(forward, logits) -> bool:
    """Did forward save the one-hot? s (delta - s) is 0 at a one-hot."""
    hard = one_hot_argmax(logits)
    return forward is not None and any(saved.shape == tuple(hard.shape)
                                       and torch.equal(saved.tensor.detach(), hard)
                                       for saved in forward.saved)


def _check_saved_narrower(forward, logits) -> None:
    """A wrong gradient from a tensor forward saved in a dtype narrower than the logits' (the
    softmax saved as bfloat16 or float16 "to save memory"): name that dtype."""
    if forward is None:
        return
    for saved in forward.saved:
        if (saved.role == "intermediate" and saved.dtype.is_floating_point
                and torch.finfo(saved.dtype).bits < torch.finfo(logits.dtype).bits):
            narrow = str(saved.dtype).removeprefix("torch.")
            raise GradingError(
                f"StraightThroughSoftmax's gradient for logits has {narrow}'s precision: forward "
                f"saved a {narrow} tensor of shape {tuple(saved.shape)} for "
                f"{str(logits.dtype).removeprefix('torch.')} logits, and backward's gradient "
                f"keeps only {narrow}'s digits (about {_digits(saved.dtype)} significant "
                "digits); what forward saves keeps the digits the gradient needs",
                mistake="StraightThroughSoftmax/saves-narrower-dtype")


def _check_saved_wider(forward, logits) -> None:
    """Nothing forward saves is in a dtype wider than the logits' (the contract's last clause):
    a softmax computed in float64 for float32 logits ("for accuracy") passes every precision
    check and keeps twice the bytes; the shared check names only a cast that adds no digit."""
    if not logits.is_floating_point():
        return
    for saved in forward.saved:
        if (saved.role == "intermediate" and saved.dtype.is_floating_point
                and torch.finfo(saved.dtype).bits > torch.finfo(logits.dtype).bits):
            wide, narrow = (str(d).removeprefix("torch.") for d in (saved.dtype, logits.dtype))
            raise GradingError(
                f"StraightThroughSoftmax's forward saved a {wide} tensor of shape "
                f"{tuple(saved.shape)} for {narrow} logits: the contract saves nothing in a "
                f"dtype wider than the logits', and this one takes {saved.nbytes} bytes where "
                f"{narrow} takes {saved.tensor.numel() * torch.finfo(logits.dtype).bits // 8}; "
                f"compute what you save in {narrow} (a .double() or float64 tensor in forward "
                "widens it)", mistake="StraightThroughSoftmax/saves-wider-dtype")


def _digits(dtype) -> int:
    return round(-math.log10(torch.finfo(dtype).eps))


def check_gradient(values_: dict, got, grad_output, forward=None) -> None:
    logits, tau = values_["logits"], values_["tau"]
    inputs = make_inputs(values_)
    expected, = torch.autograd.grad(reference(**inputs), inputs["logits"], grad_output)
    if not isinstance(got, torch.Tensor) or got.shape != expected.shape:
        diagnose_gradient("logits", got, expected)
    rtol, atol = _gradient_tolerance(logits.dtype, grad_output, tau)
    got = got.detach()
    if torch.allclose(got, expected, rtol=rtol, atol=atol):
        return
    if not got.any() and expected.any():
        where = "StraightThroughSoftmax's gradient for logits is zero everywhere: "
        if _used_the_one_hot(forward, logits):
            raise GradingError(
                f"{where}backward uses the saved one-hot in place of the softmax, and the "
                "softmax's Jacobian, written with s alone (Hint 2), is zero when s is a one-hot; "
                "it needs s = softmax(logits / tau), saved or recomputed")
        raise GradingError(
            f"{where}that is the true derivative of the one-hot, which a straight-through "
            "softmax replaces with softmax(logits / tau)'s",
            mistake="StraightThroughSoftmax/true-zero-gradient")
    naive = _finite_by_exp(logits, tau, grad_output)
    if not naive.all() and torch.equal(torch.isfinite(got), naive):
        largest = (logits / tau).abs().max().item()
        raise GradingError(
            "StraightThroughSoftmax's gradient for logits is not finite where the softmax's is: "
            f"logits / tau reaches {largest:.0f}, and exp of more than "
            f"{math.log(torch.finfo(logits.dtype).max):.1f} is inf in "
            f"{str(logits.dtype).removeprefix('torch.')} (inf / inf is nan); subtract each "
            "row's maximum before exp, as torch.softmax does")
    _check_rows_finite(logits, tau, grad_output, got, expected)
    _check_saved_narrower(forward, logits)
    if _in_float32(logits, tau, grad_output, got):
        raise GradingError(
            "StraightThroughSoftmax's gradient for float64 logits has float32's precision: it "
            "equals the softmax's gradient computed in float32, to float32 rounding, and misses "
            "float64's by more; compute in the logits' dtype (look for a .float() or a float32 "
            "tensor in forward or backward)")
    for candidate, hint in candidates(logits, tau, grad_output):
        if torch.allclose(got, candidate, rtol=rtol, atol=atol):
            raise GradingError(f"StraightThroughSoftmax's gradient for logits is wrong: {hint}",
                               mistake={"lacks the factor 1 / tau":
                                        "StraightThroughSoftmax/missing-one-over-tau"})
    diagnose_gradient("logits", got, expected, rtol=rtol, atol=atol)


def _run_forward(function, inputs: dict):
    """run_forward, naming the logits' shape and tau when the learner's forward raises
    IndexError (a softmax over dim=1 on 1-d logits), which it leaves as raised."""
    try:
        return run_forward(function, STS, inputs)
    except IndexError as error:
        message = str(error).splitlines()[0] if str(error) else "index out of range"
        raise GradingError(
            f"StraightThroughSoftmax.forward raised IndexError with logits of shape "
            f"{tuple(inputs['logits'].shape)}, tau={inputs['tau']:g}: {message}",
            str(error)) from error


def check_straight_through_softmax(function, values_: dict, *, seed=0, grad_output=None):
    """Exact one-hot forward, the softmax's vector-Jacobian product in backward, by hand."""
    inputs = make_inputs(values_)
    forward = _run_forward(function, inputs)
    logits = values_["logits"]
    try:
        check_forward(forward.output, logits, values_["tau"])
    except GradingError:
        with torch.no_grad():  # a forward that draws noise shows it within a few calls
            again = [function.apply(logits.clone(), values_["tau"]) for _ in range(8)]
        if any(isinstance(a, torch.Tensor) and not torch.equal(a, forward.output.detach())
               for a in again):
            raise GradingError(
                "StraightThroughSoftmax's forward gives a different one-hot each time for the same "
                "logits: it draws noise itself; the caller adds Gumbel noise to the logits, and "
                "forward returns the one-hot of argmax(logits, -1)") from None
        raise
    if grad_output is None:
        generator = torch.Generator().manual_seed(seed + 1000)
        grad_output = torch.randn(logits.shape, generator=generator,
                                  dtype=logits.dtype).to(logits.device)
    pristine = grad_output.clone()
    backward = run_backward(STS, forward.output, inputs, grad_output)
    check_gradient(values_, backward.grads[0], pristine, forward)
    check_no_ctx_tensors(STS, forward)
    check_no_copy_saved(STS, forward, inputs)
    _check_saved_wider(forward, logits)


def full(submission, device) -> None:
    function = check_is_function(submission, STS)
    check_output_differentiable(function, STS, values((3, 4), device))
    # square (5, 5) first: a row sum without keepdim broadcasts there instead of raising
    for seed, (shape, tau) in [(5, ((5, 5), 0.7)), *enumerate([((3, 5), 0.7), ((6,), 1.5),
                               ((2, 3, 4), 2.5), ((4, 7), 0.1), ((3, 5), 10.0)])]:
        with case(f"logits of shape {shape}, tau={tau}"):
            check_straight_through_softmax(function, values(shape, device, tau=tau, seed=seed),
                                           seed=seed)
    with case("float32 logits up to 12 at tau=0.1"):
        check_straight_through_softmax(function, overflow_values(device))
    # before the generated cases, for their proven hints (argmax of rounded logits or of a
    # softmax, a softmax shifted by the tensor's maximum)
    with case("maxima tied, or one ulp above the runner-up"):
        check_straight_through_softmax(function, near_ties(device, torch.float64))
    # at tau = 10 a softmax's argmax ties logits one ulp apart; at 0.7 and 10, logits / tau
    # does, for the pairs _SCALED_TIES lists
    for tau in (0.7, 10.0):
        for dtype in (torch.float64, torch.float32):
            with case(f"near ties at tau={tau:g}, {str(dtype).removeprefix('torch.')}"):
                check_straight_through_softmax(function, near_ties(device, dtype, tau=tau))
    with case(f"logits a few thousandths apart at tau={LOWEST_TAU:g}, the contract's lowest"):
        try:
            check_straight_through_softmax(function, low_tau(device))
        except GradingError as error:  # right at every larger tau above: tau itself changed
            if not error.hint.startswith("your gradient for logits is wrong"):
                raise
            raise GradingError(
                f"StraightThroughSoftmax's gradient for logits is wrong at tau={LOWEST_TAU:g} "
                "alone, right at every larger tau tried: does it use another tau (a floor such "
                f"as max(tau, 0.01))? The contract takes tau down to {LOWEST_TAU:g}, where the "
                "softmax of logits a few thousandths apart is far from one-hot", error.hint) from None
    with case("a row of magnitude 1000 beside rows of magnitude 1"):
        check_straight_through_softmax(function, rows_apart(device, torch.float64))
    for dtype in (torch.float64, torch.float32):
        with case(f"tied maxima, {str(dtype).removeprefix('torch.')}"):
            check_straight_through_softmax(function, tied_values(device, dtype))
    for edge in ("float32", "large logits / tau", "1-D logits", "ties"):
        covers(edge)
    # a (2, 3, 5) view of a (3, 2, 5) tensor, whose leading dims cannot merge: .view(-1, n) raises
    transposed = sample((3, 2, 5), device, seed=9).transpose(0, 1)
    with case("a non-contiguous grad_output, logits of shape (2, 3, 5)"):
        check_straight_through_softmax(function, values((2, 3, 5), device),
                                       grad_output=transposed)
    covers("non-contiguous grad_output")
    with case("logits transposed, (5, 3)"):
        check_no_copy_saved_strided(function, STS, values((3, 5), device, seed=8), "logits")
    check_each_input_alone(function, STS, values((3, 4), device, seed=4))
    # an empty batch of rows (a loop over them with torch.stack raises on it): the domain's
    # empty-input rule, after every check here


LATER_IN_LESSON = True  # the lesson's transfer exercise, after FakeQuantize
EXERCISES = [
    Exercise("StraightThroughSoftmax", "03_ste", full,
             contract=("float32", "1-D logits", "ties", "non-contiguous grad_output",
                       "large logits / tau"),
             example=lambda: (sample((2, 4), "cpu"), 0.5),
             domain=Domain(STS, lambda device, dtype=torch.float64, seed=0, tau=0.7:
                           values((3, 4), device, tau=tau, seed=seed, dtype=dtype),
                           constants={"tau": Constant(LOWEST_TAU, 100.0,
                                                     "tau a positive Python float, at least 0.001")},
                           # at tau = 0.001 the softmax of random logits is one-hot and its gradient 0 whatever tau
                           # backward divides by: two calls at 0.3 and 40 tell a tau kept
                           # outside ctx from each call's own
                           per_call_constants=({"tau": 0.3}, {"tau": 40.0}),
                           ties=Case(near_ties, "ties as torch.argmax, one ulp apart too"),
                           rows_apart=Case(rows_apart, "each row's softmax stable on its own"),
                           layout_clause=LOGITS_LAYOUT_CLAUSE,
                           # a one-hot needs a dimension of classes: the exercise's logits have
                           # at least one (F.one_hot of a 0-d argmax is not 0-d)
                           zero_dim=False,
                           empty_and_scalar_clause="an empty batch of rows (logits have at "
                                                   "least one dimension, the classes')")),
]
