"""Lesson 03: SignSTE, SignClippedSTE and RoundSTE.

gradcheck disagrees with a straight-through estimator by design (the true derivative is zero
almost everywhere), so these checks do not run it. They check instead that forward is exactly
the quantiser, that backward is exactly the intended surrogate, and the usual hygiene.
"""

import torch

from ...checks import (Spec, case, check_is_function, check_no_ctx_tensors,
                      check_values_and_gradients, make_inputs, run_backward, run_forward)
from ...contract import check_each_input_alone, covers
from ...diagnose import diagnose_gradient, diagnose_values, exact
from ...domain import Domain
from ...errors import GradingError
from ...exercise import Exercise, sample
from .saved_any_dtype import check_no_copy_saved, check_no_copy_saved_strided
from .ste_extremes import (LARGE_HALVES, check_gradient_at_non_finite,
                           check_large_left_unrounded, check_non_finite,
                           check_non_finite_grad_output, check_window_tolerance,
                           diagnose_sign_edges, extreme_values, finite_part, non_finite_values)
from .contracts import X_LAYOUT_CLAUSE
from .non_differentiable import check_output_differentiable

# random x of shape (3, 4) in every dtype and layout, size 1, empty and 0-d: the domain
DTYPES = [torch.float64, torch.float32]


def _straight_through(quantise, mask=None):
    """A composed-ops reference: value exactly ``quantise(x)``, gradient ``mask(x)``
    (or 1). ``x - x.detach()`` is exactly 0 in value and 1 in derivative."""
    def reference(x):
        through = x - x.detach()
        if mask is not None:
            through = through * mask(x.detach())
        return quantise(x.detach()) + through
    return reference


def _inside_clip(x):
    return x.abs() <= 1


SIGN_STE = Spec("SignSTE", ("x",), _straight_through(torch.sign))
SIGN_CLIPPED_STE = Spec("SignClippedSTE", ("x",), _straight_through(torch.sign, _inside_clip))
ROUND_STE = Spec("RoundSTE", ("x",), _straight_through(torch.round))

# Values where the mistakes differ: sign(0) = 0, the clip boundary |x| == 1 (kept), just
# inside and outside it, tiny magnitudes (a tanh look-alike gives ~0 there), and magnitudes
# so large that (sign(x) - x) + x, the detach trick done as arithmetic, rounds to 0: it is
# exact up to |x| = 2^24 in float32 and 2^53 in float64, so only such values can show it.
# Last, float64 values that a float32 copy rounds to +-1 or to 0 (1 + 1e-9, 1e-300): a mask or
# a sign computed on x.float() gets them wrong (in float32 they are +-1 and 0 themselves); and
# +-(1 + 1e-7), which float32 rounds to +-1.00000012, still outside: a mask on x.float() keeps
# them out, a mask with a tolerance (|x| <= 1 + 1e-6) lets them in. Last, the floats next to
# +-1 outside the window (1 + 2^-52 in float64; 1 in float32), so that no tolerance on the
# window, however small, falls between two tested points.
SIGN_EDGES = [-1e17, -3.0, -1.0, -0.999, -0.25, -1e-30, 0.0, 1e-30, 0.25, 0.999, 1.0, 1.001, 3.0,
              1e17, -1 - 1e-9, 1 + 1e-9, 1e-300, -1 - 1e-7, 1 + 1e-7, 1 + 2 ** -52, -1 - 2 ** -52]
# round() rounds half to even, like torch.round: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> -0;
# -0.0 -> -0.0, which adding 0 turns into 0 and a floor-based round keeps (the -0 hint's proof).
# Last, where x + 0.5 is itself rounded, so that floor(x + 0.5) is wrong even with halves
# corrected: the largest float64 and float32 below 0.5 (x + 0.5 rounds up to 1.0), and the odd
# integers 2^23 + 1 and 2^52 + 1 (x + 0.5 rounds to the even integer above). 2^52 + 1 is also
# where a float32 copy of x and float64 tricks such as (x + 1.5 * 2^52) - 1.5 * 2^52 both give
# 2^52; 2^40 + 1.5, which float64 tricks round right and a float32 copy turns into 2^40, tells
# them apart. Last, halves up to the largest each dtype holds (ste_extremes.LARGE_HALVES).
ROUND_EDGES = [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.49, 0.51, -3.7, 3.7, 0.0, -0.0, 7.0, 1e6 + 0.5,
               0.49999999999999994, 0.4999999701976776, 2.0 ** 23 + 1, 2.0 ** 52 + 1,
               2.0 ** 40 + 1.5] + LARGE_HALVES


def edge_values(spec: Spec, device, dtype=torch.float64) -> dict:
    """The edges; a sign's also at ±inf, a subnormal and -0.0 (ste_extremes.py)."""
    edges = ROUND_EDGES if spec is ROUND_STE else SIGN_EDGES + extreme_values(dtype)
    return {"x": torch.tensor(edges, dtype=dtype, device=device)}


def random_values(shape, device, *, seed=0, dtype=torch.float64) -> dict:
    """Standard normal times 2: about a third of the entries fall outside |x| <= 1."""
    return {"x": 2 * sample(shape, device, seed=seed, dtype=dtype)}


def _first_difference(got: torch.Tensor, expected: torch.Tensor, x: torch.Tensor) -> str:
    index = tuple(int(i) for i in torch.nonzero(got != expected)[0])
    return (f"at x = {exact(x[index].item())} it gives {exact(got[index].item())}, "
            f"expected {exact(expected[index].item())}")


def check_forward_exact(spec: Spec, output, x: torch.Tensor) -> None:
    """Forward must equal the quantiser exactly, the sign of a zero included (torch.equal counts
    -0 and 0 equal; torch.round(-0.49) is -0): only backward is the surrogate."""
    quantise = torch.round if spec is ROUND_STE else torch.sign
    expected = quantise(x.detach())
    what = f"{spec.name}'s output"
    if (not isinstance(output, torch.Tensor) or output.shape != expected.shape
            or output.dtype != expected.dtype or output.device != expected.device):
        diagnose_values(what, output, expected)  # names the type, shape, dtype or device
    got = output.detach()
    if torch.equal(got, expected):
        flipped = torch.signbit(got) != torch.signbit(expected)  # only zeros can differ here
        if flipped.any():
            i = tuple(int(k) for k in torch.nonzero(flipped)[0])
            raise GradingError(
                f"{spec.name}'s output is {exact(got[i].item())} at x = {exact(x[i].item())}, "
                f"where {'round' if spec is ROUND_STE else 'sign'}(x) is "
                f"{exact(expected[i].item())}: equal values, but not the same zero; return "
                f"the quantiser's own result"
                + (" (adding 0, as the detach trick's arithmetic does, turns -0 into 0)"
                   if torch.signbit(expected[i]) and torch.equal(
                       torch.signbit(got), torch.signbit(expected + 0.0)) else ""),
                mistake=f"{spec.name}/signed-zero")
        return
    x = x.detach()
    name, op = spec.name, "round(x)" if spec is ROUND_STE else "sign(x)"
    if spec is not ROUND_STE:
        diagnose_sign_edges(name, got, expected, x)  # wrong only at 0, ±inf or a subnormal
        if x.isinf().any():  # wrong at a finite x too: judge the finite ones
            finite = x.isfinite()
            x, got, expected = x[finite], got[finite], expected[finite]
    if spec is ROUND_STE:
        for wrong, how in ((torch.floor, "floor(x)"), (torch.ceil, "ceil(x)"),
                           (torch.trunc, "trunc(x), which is what .long() or .int() does")):
            if torch.equal(got, wrong(x)):
                raise GradingError(f"{name}'s forward is {how}, not round(x): use torch.round(x)",
                                   mistake={"is floor(x)": "RoundSTE/floors",
                                            "is trunc(x)": "RoundSTE/truncates"})
        half_away = torch.sign(x) * torch.floor(x.abs() + 0.5)
        if torch.equal(got, half_away) or torch.equal(got, torch.floor(x + 0.5)):
            raise GradingError(
                f"{name} does not round halves to even ({_first_difference(got, expected, x)}): "
                "torch.round sends 0.5 to 0, 1.5 to 2 and 2.5 to 2; use torch.round(x)",
                mistake="RoundSTE/halves-not-to-even")
    if spec is ROUND_STE:
        check_large_left_unrounded(name, got, expected, x)
        wrong = got != expected
        if torch.equal(got[wrong], torch.floor(x + 0.5)[wrong]):
            raise GradingError(
                f"{name}'s output is floor(x + 0.5) where it is not round(x) "
                f"({_first_difference(got, expected, x)}): x + 0.5 is rounded to a float before "
                "floor sees it, so this fails even with halves corrected; use torch.round(x)",
                mistake="RoundSTE/floor-of-x-plus-half")
    if torch.equal(got, x):
        raise GradingError(f"{name}'s forward returns x unchanged: it must return {op}",
                           mistake=f"{name}/forward-returns-x")
    narrow = quantise(x.float()).to(x.dtype)  # a float32 copy rounds 1 + 1e-9 to 1, 1e-300 to 0
    if x.dtype == torch.float64 and not torch.equal(narrow, expected) and torch.equal(got, narrow):
        bare = op.removesuffix("(x)")
        raise GradingError(
            f"{name}'s output is {bare} of x rounded to float32 "
            f"({_first_difference(got, expected, x)}): forward ran {bare} on a float32 copy of "
            f"x (a .float()), which drops float64's digits before {bare} sees them; return {op} "
            "in x's dtype", mistake=f"{name}/forward-in-float32")
    if torch.equal(got, (expected - x) + x):  # what the detach trick computes, to the bit
        raise GradingError(
            f"{name}'s output is {op} only up to rounding ({_first_difference(got, expected, x)}): "
            "inside forward autograd is off, so y_hard - y_soft.detach() + y_soft is plain "
            f"arithmetic there, exact only up to |x| = 2^24 in float32 (2^53 in float64); return "
            f"{op} exactly and put the surrogate in backward",
            mistake=f"{name}/detach-trick-in-forward")
    if torch.allclose(got, expected, rtol=1e-5, atol=1e-6):
        raise GradingError(
            f"{name}'s output is {op} only up to rounding ({_first_difference(got, expected, x)}): "
            f"forward must return {op} exactly, every entry an exact {op} of x"
        )
    allowed = (got == got.round()) if spec is ROUND_STE else (got.abs() == 1) | (got == 0)
    if not allowed.all():
        kind = "integers" if spec is ROUND_STE else "-1, 0 or 1"
        raise GradingError(
            f"{name}'s output is not all {kind} ({_first_difference(got, expected, x)}): "
            f"a smooth approximation is not {op}; forward must be exactly {op}, only backward "
            "uses the surrogate",
            mistake=f"{name}/smooth-forward")
    diagnose_values(what, got, expected, rtol=0, atol=0, inputs={"x": x})


def _narrowed_copy_saved(forward, x: torch.Tensor, narrow: torch.dtype) -> bool:
    """Did forward save x cast to ``narrow`` (``x.to(torch.bfloat16)``, "to save memory")?"""
    return any(saved.role == "intermediate" and saved.dtype == narrow
               and saved.shape == x.shape and torch.equal(saved.tensor.detach(), x.to(narrow))
               for saved in forward.saved)


def check_mask_on_narrowed_x(forward, got, expected, x, grad_output) -> None:
    """SignClippedSTE's mask, exactly the one of x rounded to a narrower dtype: named by its
    cause, a copy of x saved narrowed (the mask then read from it), or x cast to float32 in
    backward (a float16 or bfloat16 cast there is not named: on the edge values a tolerance of
    1e-6 on the window gives float16's mask)."""
    for narrow in (torch.float32, torch.bfloat16, torch.float16):
        if (torch.finfo(narrow).bits >= torch.finfo(x.dtype).bits
                or torch.equal(got, expected)
                or not torch.equal(got, grad_output * _inside_clip(x.to(narrow)))):
            continue
        kind, wide = (str(d).removeprefix("torch.") for d in (narrow, x.dtype))
        where = _first_difference(got, expected, x)
        if _narrowed_copy_saved(forward, x, narrow):
            raise GradingError(
                f"SignClippedSTE saved x as a {kind} copy for {wide} inputs, and its clip mask, "
                f"read from that copy, is wrong ({where}): the copy drops digits {wide} has, "
                "and rounds values just outside the window to ±1, inside it; it is also memory "
                "x itself would not cost: save x as it is, or a mask forward computes from it",
                mistake="SignClippedSTE/saves-narrowed-x")
        if narrow == torch.float32:  # narrower, a tolerance on the window can look the same
            raise GradingError(
                f"SignClippedSTE's clip mask is built on x rounded to float32 ({where}): "
                "x.float() rounds values just outside the window, such as 1 + 1e-9, to ±1, "
                "inside it; build the mask from x itself",
                mistake="SignClippedSTE/mask-in-float32")


def check_surrogate(spec: Spec, forward, x: torch.Tensor, grad, grad_output) -> None:
    """Backward must return exactly the intended surrogate gradient, naming the usual slips."""
    x = x.detach()
    clipped = spec is SIGN_CLIPPED_STE
    inside = _inside_clip(x)
    expected = grad_output * inside if clipped else grad_output.clone()
    if (not isinstance(grad, torch.Tensor) or grad.shape != expected.shape
            or grad.dtype != expected.dtype or grad.device != expected.device):
        diagnose_gradient("x", grad, expected)  # None, shape, dtype or device
    got = grad.detach()
    if torch.equal(got, expected):
        return
    name = spec.name
    what = ("grad_output times the slope of "
            + ("your stand-in B" if clipped else "your stand-in that never stops the gradient")
            + " (from 'Your stand-ins for round and sign')")
    op = "round" if spec is ROUND_STE else "sign"

    def matches(candidate) -> bool:
        return not torch.equal(candidate, expected) and torch.equal(got, candidate)

    if not got.any() and expected.any():
        raise GradingError(
            f"{name}'s gradient is zero everywhere: that is the true derivative of {op}, which "
            f"a straight-through estimator replaces; return {what}",
            mistake=f"{name}/true-zero-gradient")
    if matches(torch.ones_like(got)) or matches(inside.to(got.dtype)):
        raise GradingError(
            f"{name}'s backward ignores grad_output: multiply the surrogate derivative by "
            f"grad_output (chain rule) and return {what}",
            mistake=f"{name}/ignores-grad-output")
    if clipped:
        saved_roles = [saved.role for saved in forward.saved]
        if matches(grad_output) and "output" in saved_roles and "input x" not in saved_roles:
            raise GradingError(
                f"{name} builds its clip mask from the output sign(x), whose magnitude is never "
                "above 1: the clip is on the input, so save x and build the mask from it",
                mistake="SignClippedSTE/mask-from-output")
        if matches(grad_output):
            raise GradingError(
                f"{name}'s gradient is not clipped: it passes grad_output where |x| > 1 too, "
                "where your stand-in for sign is flat and its slope is 0",
                mistake="SignClippedSTE/not-clipped")
        if matches(grad_output * (x.abs() < 1)):
            raise GradingError(
                f"{name} drops the gradient at |x| == 1: the contract's corners are "
                "torch.clamp(x, -1, 1)'s, whose slope there is 1: |x| <= 1, not |x| < 1",
                mistake="SignClippedSTE/drops-boundary")
        if matches(grad_output * (x.abs() > 1)) or matches(grad_output * (x.abs() >= 1)):
            raise GradingError(
                f"{name}'s clip mask is inverted: it passes grad_output where your stand-in for "
                "sign is flat and zeroes it where the stand-in's slope is 1",
                mistake="SignClippedSTE/inverted-mask")
        if (matches(grad_output.clamp(-1, 1)) or matches(grad_output * (grad_output.abs() <= 1))):
            raise GradingError(
                f"{name} clips grad_output instead of masking by the input: the surrogate is the "
                "slope of your stand-in at x, and the chain rule multiplies grad_output by it, "
                "whatever grad_output's values",
                mistake="SignClippedSTE/clips-grad-output")
        check_mask_on_narrowed_x(forward, got, expected, x, grad_output)
        check_window_tolerance(name, got, expected, x, grad_output)
    elif matches(grad_output * inside):
        raise GradingError(
            f"{name} zeroes the gradient where |x| > 1: that is the clipped estimator "
            f"(SignClippedSTE); {name} passes grad_output through everywhere",
            mistake=f"{name}/clipped-estimator")
    if not clipped:  # right at every finite x, not at ±inf
        check_gradient_at_non_finite(name, got, expected, x, finite_only=True)
    if got.dtype == torch.float64 and matches(expected.float().to(got.dtype)):
        raise GradingError(
            f"{name}'s gradient is grad_output rounded to float32 "
            f"({_first_difference(got, expected, x)}): backward computed it in float32 for "
            "float64 x (a .float(), or a tensor made in the default dtype, such as "
            "torch.zeros(x.shape)), and autograd cast it back: keep it in grad_output's dtype"
            + ("; a mask saved in float32 is fine, 0 and 1 lose no digits" if clipped else ""),
            mistake=f"{name}/gradient-in-float32")
    try:
        diagnose_gradient("x", got, expected, rtol=0, atol=0)
    except GradingError as error:
        if not str(error).startswith("your gradient for x is wrong:"):
            raise  # a sign or a constant factor: diagnose named it
        # the edge values are chosen where mistakes differ: say which x, not which index
        raise GradingError(
            f"your gradient for x is wrong: {_first_difference(got, expected, x)} (grad_output "
            f"there is {exact(grad_output[got != expected][0].item())})") from None


def check_straight_through(function, spec: Spec, values: dict, *, seed: int = 0):
    """Exact forward, exact surrogate, then grad_output and the input left untouched."""
    inputs = make_inputs(values)
    forward = run_forward(function, spec, inputs)
    check_forward_exact(spec, forward.output, values["x"])
    check_no_copy_saved(spec, forward, inputs)
    generator = torch.Generator().manual_seed(seed + 1000)
    grad_output = torch.randn(values["x"].shape, generator=generator,
                              dtype=values["x"].dtype).to(values["x"].device)
    pristine = grad_output.clone()
    backward = run_backward(spec, forward.output, inputs, grad_output)
    check_surrogate(spec, forward, values["x"], backward.grads[0], pristine)
    # the detach-trick reference is nan at ±inf: those were judged above, against sign(x)
    check_values_and_gradients(function, spec, finite_part(values), rtol=0, atol=0, seed=seed)
    return forward, backward


# The edge cases each contract implies, all in the edge values above.
EDGES = {"SignSTE": ("sign(0)", "float32"),
         "SignClippedSTE": ("sign(0)", "|x| == 1 kept", "float32"),
         "RoundSTE": ("halves to even", "float32")}


def _full(spec: Spec):
    def full(submission, device) -> None:
        function = check_is_function(submission, spec)
        check_output_differentiable(function, spec, random_values((3, 4), device))
        # the edges in both dtypes (float32 has its own exact limits); random inputs in every
        # dtype and layout come from the domain
        for dtype in DTYPES:
            name = str(dtype).removeprefix("torch.")
            with case(f"the edge values {'halves, 0' if spec is ROUND_STE else '0, ±1, ±inf'}, {name}"):
                forward, _ = check_straight_through(function, spec,
                                                    edge_values(spec, device, dtype))
                check_no_ctx_tensors(spec, forward)
            # NaN (and ±inf for round), which the reference and the gradient checks leave out:
            # forward, and the plain estimators' backward (stand-in B's slope at NaN depends on
            # how B is written: not judged)
            with case(f"x = nan{', ±inf' if spec is ROUND_STE else ''}, {name}"):
                x = torch.tensor(non_finite_values(spec is ROUND_STE), dtype=dtype,
                                 device=device)
                inputs = make_inputs({"x": x})
                output = run_forward(function, spec, inputs).output
                check_non_finite(spec.name, "round" if spec is ROUND_STE else "sign", output, x)
                if spec is not SIGN_CLIPPED_STE:
                    grad_output = torch.linspace(-1.5, 1.25, len(x), dtype=dtype, device=device)
                    grad = run_backward(spec, output, inputs, grad_output.clone()).grads[0]
                    check_gradient_at_non_finite(spec.name, grad, grad_output, x)
            # grad_output ±inf and NaN at finite x, inside the clip's window and beyond it
            with case(f"grad_output = inf, nan, -inf, {name}"):
                x = torch.tensor([0.5, -2.0, 2.5, -1.0, 0.0, 3.0], dtype=dtype, device=device)
                inputs = make_inputs({"x": x})
                output = run_forward(function, spec, inputs).output
                grad_output = torch.tensor([float("inf"), float("nan"), float("-inf")] * 2,
                                           dtype=dtype, device=device)
                grad = run_backward(spec, output, inputs, grad_output.clone()).grads[0]
                check_non_finite_grad_output(spec.name, grad, grad_output,
                                             x if spec is SIGN_CLIPPED_STE else None)
        for edge in EDGES[spec.name]:
            covers(edge)
        check_each_input_alone(function, spec, random_values((3, 4), device, seed=5),
                               rtol=0, atol=0)
        with case("x transposed, (4, 3)"):
            check_no_copy_saved_strided(function, spec, random_values((3, 4), device, seed=6),
                                        "x")
    return full


def _domain_values(device, dtype=torch.float64, seed=0) -> dict:
    return random_values((3, 4), device, seed=seed, dtype=dtype)


EXERCISES = [Exercise(spec.name, "03_ste", _full(spec), contract=EDGES[spec.name],
                      domain=Domain(spec, _domain_values, layout_clause=X_LAYOUT_CLAUSE))
             for spec in (SIGN_STE, ROUND_STE, SIGN_CLIPPED_STE)]  # the lesson's order

