"""Lesson 03: the sign estimators at the values no finite, normal x reaches: ±inf, a subnormal
and -0.0; and all three quantisers at NaN (round at ±inf too), forward and, for the two plain
estimators, backward.

The contracts put no limit on x, and sign(±inf) = ±1, sign(subnormal) = ±1, sign(-0.0) = ±0
exactly as torch.sign gives them. The detach-trick reference cannot judge them (inf - inf is
nan), so forward is judged against torch.sign directly and the gradient against grad_output
(times the clip mask, 0 at ±inf); the reference comparison runs on the finite values only.
SignSTE's and RoundSTE's stand-in has slope 1 at every x, NaN included, so their gradient is
grad_output there too; SignClippedSTE's at NaN is not judged: stand-in B's slope there depends
on how B is written (clamp's is 0, hardtanh's 1).
A hand-made sign that patches only the zero of x / x.abs() is wrong at ±inf (inf / inf is nan,
and nan_to_num makes it 0); one that clamps the denominator to torch.finfo(x.dtype).tiny is
wrong at a subnormal x (5e-324 / tiny is 2.2e-16, not 1).
"""

import torch

from ...diagnose import exact
from ...errors import GradingError

# the smallest positive subnormal each dtype holds (1e-45 is 1.4e-45 in float32)
SUBNORMAL = {torch.float64: 5e-324, torch.float32: 1e-45}


def extreme_values(dtype) -> list[float]:
    """Appended to the sign edges: finite ones first, so the finite edges keep their order."""
    tiny = SUBNORMAL[dtype]
    return [tiny, -tiny, -0.0, float("inf"), float("-inf")]


def finite_part(values: dict) -> dict:
    """The values without ±inf, for the detach-trick reference (nan at ±inf)."""
    x = values["x"]
    return values if x.isfinite().all() else {**values, "x": x[x.isfinite()]}


def _differ(got: torch.Tensor, expected: torch.Tensor) -> torch.Tensor:
    """Where the values differ, nan counted as differing from everything but nan."""
    both_nan = got.isnan() & expected.isnan()
    return ((got != expected) & ~both_nan) | (got.isnan() != expected.isnan())


def diagnose_sign_edges(name: str, got: torch.Tensor, expected: torch.Tensor,
                        x: torch.Tensor) -> None:
    """Name a sign wrong only at 0, at a subnormal or at ±inf (x / x.abs() and its patches);
    return quietly when it is wrong elsewhere too (the finite checks then name it)."""
    wrong = _differ(got, expected)
    zero, infinite = x == 0, x.isinf()
    subnormal = (x != 0) & (x.abs() < torch.finfo(x.dtype).tiny)
    if not wrong.any() or (wrong & ~(zero | infinite | subnormal)).any():
        return
    at_inf = wrong & infinite
    inf_nan = bool(at_inf.any()) and bool(got[at_inf].isnan().all())
    also_inf = "; x / x.abs() is also nan at ±inf, inf / inf" if inf_nan else ""
    if (wrong & zero).any():
        value = got[wrong & zero][0].item()
        why = ""
        if value != value:
            why = f" (0 / 0 is nan, as in x / x.abs() at 0{also_inf})"
        elif abs(value) == 1:
            why = " (a comparison such as x >= 0 sends 0 to one side)"
        raise GradingError(
            f"{name}.apply(0) gives {exact(value)} but sign(0) = 0: use torch.sign(x){why}",
            mistake=f"{name}/sign-of-zero-not-zero")
    first = wrong & subnormal if (wrong & subnormal).any() else at_inf
    i = tuple(int(k) for k in torch.nonzero(first)[0])
    at, value = x[i].item(), got[i].item()
    said = (f"{name}.apply({exact(at)}) gives {exact(value)} but sign({exact(at)}) = "
            f"{exact(expected[i].item())}")
    if (wrong & subnormal).any():
        tiny = torch.finfo(x.dtype).tiny
        clamped = x / x.abs().clamp(min=tiny)
        on = wrong & subnormal
        how = (f"x / x.abs().clamp(min=tiny) divides it by tiny ({exact(tiny)}), not by |x|"
               if torch.equal(got[on], clamped[on]) else "sign is still ±1 there")
        raise GradingError(
            f"{said}: {exact(at)} is subnormal, below "
            f"torch.finfo({str(x.dtype).removeprefix('torch.')}).tiny, and {how}"
            f"{'; it is also nan at ±inf, inf / inf' if inf_nan else ''}; "
            "use torch.sign(x)", mistake=f"{name}/sign-of-subnormal")
    why = ""
    if inf_nan:
        why = ": x / x.abs() is inf / inf = nan there, so patching its 0 / 0 at 0 alone leaves it"
    elif value == 0:
        why = ": 0 where sign is ±1, as nan_to_num gives for x / x.abs()'s inf / inf = nan"
    raise GradingError(f"{said}{why}; the contract puts no limit on x: use torch.sign(x)",
                       mistake=f"{name}/sign-of-infinity")


def non_finite_values(is_round: bool) -> list[float]:
    """NaN for every quantiser (torch.sign(nan) is 0, torch.round(nan) nan); ±inf too for
    round, whose other edges are all finite (the sign edges hold ±inf already); and a finite
    value beside them."""
    nan, inf = float("nan"), float("inf")
    return [nan, 1.5, -nan] + ([inf, -inf] if is_round else [])


def check_non_finite(name: str, op: str, output, x: torch.Tensor) -> None:
    """Forward at NaN (and ±inf for round) is exactly the quantiser's: 0 for sign, nan for round.
    (The gradient there: ``check_gradient_at_non_finite``.)"""
    expected = getattr(torch, op)(x)
    got = output.detach() if isinstance(output, torch.Tensor) else output
    if (not isinstance(got, torch.Tensor) or got.shape != expected.shape
            or got.dtype != expected.dtype):
        return  # the edge cases name the type, shape or dtype
    wrong = _differ(got, expected)
    if not wrong.any():
        return
    i = tuple(int(k) for k in torch.nonzero(wrong)[0])
    at, value, want = x[i].item(), got[i].item(), expected[i].item()
    infinite = at == at
    raise GradingError(
        f"{name}.apply({exact(at)}) gives {exact(value)} but {op}({exact(at)}) = {exact(want)}"
        f" as torch.{op} gives it: the contract puts no limit on x, "
        f"{'±inf' if infinite else 'NaN'} included; use torch.{op}(x)",
        mistake=f"{name}/round-of-non-finite" if op == "round" else f"{name}/sign-of-nan")


def check_gradient_at_non_finite(name: str, got, expected: torch.Tensor, x: torch.Tensor, *,
                                 finite_only: bool = False) -> None:
    """Name a plain estimator's gradient that is grad_output at every finite x but not at
    ±inf or NaN (a backward "guarded" with isfinite or isnan): the stand-in that never stops
    the gradient has slope 1 there too. Return quietly when it is wrong at a finite x as well
    (the other checks name that), and, with ``finite_only``, when it is nan or inf there
    (diagnose_gradient names a non-finite gradient)."""
    if (not isinstance(got, torch.Tensor) or got.shape != expected.shape
            or got.dtype != expected.dtype):
        return
    wrong = _differ(got.detach(), expected)
    non_finite = ~x.isfinite()
    if not (wrong & non_finite).any() or (wrong & ~non_finite).any():
        return
    if finite_only and not got.detach()[wrong & non_finite].isfinite().all():
        return
    i = tuple(int(k) for k in torch.nonzero(wrong & non_finite)[0])
    raise GradingError(
        f"{name}: at x = {exact(x[i].item())} your gradient is {exact(got[i].item())}; the "
        "stand-in that never stops the gradient has slope 1 there too and passes grad_output "
        f"({exact(expected[i].item())}): backward holds for x of any value, ±inf and NaN "
        "included", mistake=f"{name}/gradient-stops-at-non-finite")


def check_non_finite_grad_output(name: str, got, grad_output: torch.Tensor,
                                 window_x=None) -> None:
    """The plain estimators pass every grad_output on unchanged, ±inf and NaN included (a loss
    that overflowed must show in the gradient, not vanish): a backward that "cleans" grad_output
    with nan_to_num or isfinite hides it. The clipped one (``window_x``: its x) passes it
    on inside its window; beyond it, where stand-in B is flat, autograd gives 0 and a product
    with the mask 0 * inf = NaN: either is accepted."""
    if (not isinstance(got, torch.Tensor) or got.shape != grad_output.shape
            or got.dtype != grad_output.dtype):
        return
    got = got.detach()
    wrong = _differ(got, grad_output)
    window = None if window_x is None else window_x.abs() <= 1
    if window is not None:
        wrong = torch.where(window, wrong, (got != 0) & ~got.isnan())
    if not wrong.any():
        return
    i = tuple(int(k) for k in torch.nonzero(wrong)[0])
    where = "" if window is None else f" at x = {exact(window_x[i].item())}"
    stand_in = ("inside its window |x| <= 1 stand-in B passes every grad_output on as it is, "
                "±inf and NaN included (beyond it, 0 or 0 * inf = NaN)" if window is not None
                else "the stand-in that never stops the gradient passes every grad_output on as "
                "it is, ±inf and NaN included")
    raise GradingError(
        f"{name} changes a non-finite grad_output: where grad_output is "
        f"{exact(grad_output[i].item())}{where} your gradient is {exact(got[i].item())}; "
        f"{stand_in} (a nan_to_num or an isfinite filter in backward hides an overflowed loss)",
        mistake=f"{name}/changes-non-finite-grad-output")


def check_window_tolerance(name: str, got, expected, x: torch.Tensor, grad_output) -> None:
    """Name a clipped gradient that is right but for values just past |x| = 1, where it passes
    grad_output: a tolerance on the window (|x| <= 1 + 1e-12), however small."""
    wrong = got != expected
    near = (x.abs() > 1) & (x.abs() - 1 <= 1e-6)
    if not wrong.any() or not (wrong <= near).all() or not torch.equal(got[wrong],
                                                                     grad_output[wrong]):
        return
    at = x[wrong][0].item()
    raise GradingError(
        f"{name}'s window is judged with a tolerance: at x = {exact(at)}, just past "
        f"{'' if at > 0 else '-'}1 (by {exact(abs(at) - 1)}), it passes grad_output, where "
        "stand-in B is flat and its slope is 0; the window ends at |x| = 1 exactly: compare "
        "|x| with 1 itself, no epsilon", mistake="SignClippedSTE/window-tolerance")


# Halves among large x, appended to round's edges: float32 has halves up to 2^23 - 0.5 and
# float64 up to 2^52 - 0.5, so a round that returns every |x| beyond some threshold unchanged
# ("they are integers already") is wrong at the largest of them whatever the threshold; the
# sweep 2^k + 0.5 also names where it starts. In float32 the float64 ones are integers.
LARGE_HALVES = [s * h for h in [2.0 ** k + 0.5 for k in range(20, 52)]
                + [6e6 + 0.5, 2.0 ** 23 - 0.5, 2.0 ** 52 - 0.5] for s in (1, -1)]


def check_large_left_unrounded(name: str, got: torch.Tensor, expected: torch.Tensor,
                               x: torch.Tensor, what: str = "x") -> None:
    """Name a round that is right for small x but returns x unchanged wherever |x| is at least
    some threshold (the 1.5 * 2^23 trick with an early exit at 2^22, say); ``what`` names x
    (FakeQuantize's codes: x / scale, its scale 1)."""
    wrong = got != expected
    if not wrong.any() or not torch.equal(got[wrong], x[wrong]):
        return
    start = x[wrong].abs().min()
    rounded = (x != torch.round(x)) & ~wrong & (x.abs() < start)  # non-integers it did round
    if not rounded.any():
        return
    check_magic_number(name, got, expected, x, what)
    i = tuple(int(k) for k in torch.nonzero(wrong & (x.abs() == start))[0])
    top = "2^23 - 0.5 in float32" if x.dtype == torch.float32 else "2^52 - 0.5 in float64"
    raise GradingError(
        f"{name} leaves {what} unrounded at {what} = {exact(x[i].item())}, where round({what}) "
        f"is {exact(expected[i].item())}, though it rounds smaller ones: an early exit for large "
        "values "
        f"that takes them for integers already; a float can be a half up to {top} "
        "(every float from 2^23 in float32, 2^52 in float64, on is an integer): use "
        f"torch.round({what})", mistake=f"{name}/large-x-left-unrounded")


def check_magic_number(name: str, got: torch.Tensor, expected: torch.Tensor, x: torch.Tensor,
                       what: str = "x") -> None:
    """Name a round that gives, at every x tried, what (x + 1.5 * 2^52) - 1.5 * 2^52 gives
    (1.5 * 2^23 in float32), with or without x kept where it is an integer already (|x| >= 2^52):
    exact only where |x| < 2^51 (2^22), since past it x + 1.5 * 2^52 leaves [2^52, 2^53), the
    floats spaced 1 apart. A guard at 2^52 makes every wrong entry x itself, below -2^51, which
    looks like an early exit for large values: it is not one."""
    bits = 52 if x.dtype == torch.float64 else 23
    magic = 1.5 * 2.0 ** bits
    trick = (x + magic) - magic
    guarded = torch.where(x.abs() >= 2.0 ** bits, x, trick)
    if not any(torch.equal(got, t) for t in (trick, guarded)):
        return
    wrong = got != expected
    i = tuple(int(k) for k in torch.nonzero(wrong)[0])
    same = " (x itself)".replace("x", what) if got[i] == x[i] else ""
    raise GradingError(
        f"{name}'s output is round({what}) only where |{what}| < 2^{bits - 1}: at {what} = "
        f"{exact(x[i].item())} it gives {exact(got[i].item())}{same}, expected "
        f"{exact(expected[i].item())}, as ({what} + 1.5 * 2^{bits}) - 1.5 * 2^{bits} does "
        f"at every {what} tried: past 2^{bits - 1} that sum leaves [2^{bits}, 2^{bits + 1}), the "
        f"only floats spaced exactly 1 apart (below it halves survive, above it odd integers go "
        f"to even); use torch.round({what})", mistake=f"{name}/magic-number-round")
