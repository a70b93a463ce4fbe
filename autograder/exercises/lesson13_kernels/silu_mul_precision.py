"""Lesson 13: silu_mul away from float64's comfort: float16 and bfloat16 within 2 ulp, float32
gates far from 0, and float64 inputs computed in float32."""

import warnings

import torch
import torch.nn.functional as F

from ...checks import case
from ...contract import covers
from ...errors import GradingError
from ...exercise import sample
from .kernel_checks import explain
from .kernel_ulps import check_within_ulps, name_bfloat16_failure, ulps
from .silu_mul_spec import HALF, SILU_MUL, checked_call, silu_mul_values


def check_half(silu_mul, device) -> None:
    """float16 and bfloat16 within 2 ulp of the float32-computed reference cast back; what
    Triton 3.9's interpreter gets wrong in bfloat16 is named."""
    try:
        _check_half(silu_mul, device)
    except GradingError as error:
        if str(torch.bfloat16) in str(error):
            a, b = (v.to(torch.bfloat16).requires_grad_() for v in
                    silu_mul_values((1031,), device, seed=6, dtype=torch.float32).values())
            name_bfloat16_failure("silu_mul", lambda: torch.autograd.grad(
                silu_mul(a, b), (a, b), torch.ones_like(a)), error)
        raise


def _check_half(silu_mul, device) -> None:
    covers("float16 and bfloat16 within 2 ulp")
    values32 = silu_mul_values((1031,), device, seed=6, dtype=torch.float32)
    grad32 = sample((1031,), device, seed=7, dtype=torch.float32)
    for dtype in HALF:
        a, b = (v.to(dtype).requires_grad_() for v in values32.values())
        grad_output = grad32.to(dtype)
        a32, b32 = (v.detach().float().requires_grad_() for v in (a, b))
        want = SILU_MUL.reference(a32, b32)
        want_grads = torch.autograd.grad(want, (a32, b32), grad_output.float())
        with case(f"{dtype}, 1031 elements"):
            try:
                out = silu_mul(a, b)
            except (GradingError, NotImplementedError):
                raise
            except Exception as error:
                raise explain("silu_mul", f"{dtype} call", error) from error
            from32 = silu_mul(a.detach().float(), b.detach().float()).to(dtype)
            right32 = bool((from32 == want.to(dtype)).float().mean() > 0.9)
            check_within_ulps("silu_mul", "silu_mul's output", out, want.to(dtype).detach(),
                              right_from_float32=right32)
            grads = torch.autograd.grad(out, (a, b), grad_output)
            for name, got, truth in zip("ab", grads, want_grads):
                check_within_ulps("silu_mul", f"the gradient for {name}", got, truth.to(dtype),
                                  right_from_float32=right32)


def check_float16_steps(silu_mul, device) -> None:
    """float16 gates from -16 to -10 where sigmoid(a) lies below float16's smallest normal
    number (6.1e-5), and silu(a) too below about -12.2, where float16 keeps only a few digits,
    while y and both gradients
    are ordinary float16 numbers: first with a b in the thousands and grad_output 1 (the output
    and the gradient for a), then with b = 1 and a grad_output in the thousands (both
    gradients: with grad_output 1 the gradient for b is silu(a) itself, as small as the
    reference, and a float16 product grad_output * silu(a) would go unseen). Computed in
    float32 and cast once they are within 1 ulp; a product (or sigmoid(a)) rounded to float16
    on the way is off by several, which random values in [-4, 4] never show (there the
    rounding stays under 2 ulp)."""
    covers("float16 past float16's normal range")
    gates = torch.tensor([-10.0, -11.0, -12.0, -13.0, -14.0, -15.0, -16.0, -12.5], device=device)
    large = (-0.2 / F.silu(gates)).clamp(max=6e4).round()  # y, or grad_output * silu(a), -0.2
    ones = torch.ones_like(gates)
    a, b, g = torch.cat([gates, gates]), torch.cat([large, ones]), torch.cat([ones, large])
    a16, b16, g16 = (t.half() for t in (a, b, g))
    a16, b16 = a16.requires_grad_(), b16.requires_grad_()
    a32, b32 = (t.detach().float().requires_grad_() for t in (a16, b16))
    want = SILU_MUL.reference(a32, b32)
    want = (want, *torch.autograd.grad(want, (a32, b32), g16.float()))
    with case("float16, a from -16 to -10 and b or grad_output in the thousands"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = silu_mul(a16, b16)
        got = (out, *torch.autograd.grad(out, (a16, b16), g16))
    with case("float16, b and grad_output of 300"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _check_grad_times_b(silu_mul, device)
    for what, mine, truth in zip(("output", "gradient for a", "gradient for b"), got, want):
        truth = truth.detach().half()
        worst = ulps(mine.detach(), truth)
        if what == "output":  # grad_output does not reach the output: its rows repeat b = 1
            worst = worst[:len(gates)]
        if worst.max().item() > 2:
            i = int(worst.argmax())
            raise GradingError(
                f"silu_mul's {what} in float16 is {worst[i].item():.3g} ulp off at a = "
                f"{a[i].item():g}, b = {b[i].item():g}, grad_output = {g[i].item():g} (got "
                f"{mine[i].item()!r}, expected {truth[i].item()!r}), where sigmoid(a) and "
                "silu(a) lie below float16's smallest normal number (6.1e-5) but the result "
                "does not: a step computed in float16 (a product, or sigmoid(a) rounded to "
                "float16) keeps only a few digits there. The contract computes half precision "
                "in float32: convert after loading and cast only when storing",
                mistake="silu_mul/half-step-in-float16")


def _check_grad_times_b(silu_mul, device) -> None:
    """float16 grad_output and b of 300: grad_output * b = 90000 is past float16's largest
    number (65504), while the gradient for a (g * b * silu'(a), silu'(-5) = -0.027) is not."""
    a, b, g = (torch.tensor([-5.0, -6.0, -8.0], device=device) for _ in range(3))
    b, g = b.fill_(300.0), g.fill_(300.0)
    a16, b16 = (t.half().requires_grad_() for t in (a, b))
    a64, b64 = (t.double().requires_grad_() for t in (a, b))
    got = torch.autograd.grad(silu_mul(a16, b16), (a16, b16), g.half())
    want = torch.autograd.grad(SILU_MUL.reference(a64, b64), (a64, b64), g.double())
    for name, mine, truth in zip("ab", got, want):
        bad = ~torch.isfinite(mine)
        if bad.any():
            i = int(bad.nonzero()[0])
            raise GradingError(
                f"silu_mul's gradient for {name} in float16 is {mine[i].item()} at a = "
                f"{a[i].item():g}, b = 300, grad_output = 300, where it is {truth[i].item():.4g}: "
                "grad_output * b computed in float16 overflows (90000 is past float16's largest "
                "number, 65504). The contract computes half precision in float32: convert "
                "grad_output, a and b after loading, every product included",
                mistake="silu_mul/half-product-overflows")


def check_float64_gates(silu_mul, device) -> None:
    """float64 gates from 10 to 36, both signs: sigmoid(a) there differs from 1 (or silu(a) from
    0) by less than float32 can hold but far more than float64 rounds away, so a shortcut that
    takes sigmoid(a) as 1 past a float32 threshold is off by far more than float64's
    rounding; and 100 and 300, past an exp's argument clamped to keep float32 finite."""
    covers("float64 gates up to 300")
    # past 36 too: an exp's argument clamped (at -80, say) keeps float32 finite and takes
    # float64's sigmoid as a constant in the tail, silu's value off by orders of magnitude
    magnitudes = torch.tensor([10.0, 12.0, 15.5, 17.0, 20.0, 24.0, 28.0, 32.0, 36.0, 100.0,
                               300.0], dtype=torch.float64, device=device)
    a = torch.cat([magnitudes, -magnitudes])
    b = sample(a.shape, device, seed=19).abs() + 0.5
    leaves = [t.clone().requires_grad_() for t in (a, b)]
    refs = [t.clone().requires_grad_() for t in (a, b)]
    with case("float64, |a| from 10 to 300"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = silu_mul(*leaves)
        got = (out, *torch.autograd.grad(out, leaves, torch.ones_like(out)))
    want = SILU_MUL.reference(*refs)
    want = (want, *torch.autograd.grad(want, refs, torch.ones_like(want)))
    for what, mine, truth in zip(("output", "gradient for a", "gradient for b"), got, want):
        error = ((mine.detach() - truth.detach()).abs() / truth.detach().abs()).nan_to_num(1.0)
        if error.max().item() > 1e-11:
            i = int(error.argmax())
            if mine[i].item() == 0:
                raise GradingError(
                    f"silu_mul's {what} in float64 is 0 at a = {a[i].item():g}, where it is "
                    f"{truth[i].item():.3g}: a tail cut to 0 past some |a|? In float64 silu's "
                    "tail is tiny, not 0; compute it at every a, in the input's precision",
                    mistake="silu_mul/float64-gate-saturated")
            raise GradingError(
                f"silu_mul's {what} in float64 is {error[i].item():.2g} off (relative) at a = "
                f"{a[i].item():g}, where float64 is good to about 1e-15: sigmoid(a) taken as "
                "a constant (1, 0, or its value at a clamp of a or of exp's argument) past some "
                "|a|, or computed in float32? At a = 15.5, 1 - sigmoid(a) is "
                "1.9e-7, below float32's step but not float64's: compute the sigmoid at every "
                "a, in the input's precision", mistake="silu_mul/float64-gate-saturated")


def computed_in_float32(silu_mul, a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether the output or a gradient for float64 ``a``, ``b`` is the float32 computation:
    within float32 rounding of it, and off the float64 answer by more than float64 rounding."""
    a, b = (t.detach().clone().requires_grad_() for t in (a, b))
    a32, b32 = (t.detach().float().requires_grad_() for t in (a, b))
    ones = torch.ones_like(a)
    try:
        out = silu_mul(a, b)
        got = (out, *torch.autograd.grad(out, (a, b), ones))
    except Exception:  # noqa: BLE001 -- a probe: the battery's own message stands
        return False
    want64 = SILU_MUL.reference(a, b)
    want64 = (want64, *torch.autograd.grad(want64, (a, b), ones))
    want32 = SILU_MUL.reference(a32, b32)
    want32 = (want32, *torch.autograd.grad(want32, (a32, b32), ones.float()))
    for mine, exact, single in zip(got, want64, want32):
        if (mine.dtype == torch.float64
                and not torch.allclose(mine, exact, rtol=1e-12, atol=1e-14)
                and torch.allclose(mine, single.double(), rtol=1e-6, atol=1e-7)):
            return True
    return False


def check_large_activations(silu_mul, device) -> None:
    """float32 gates far from 0 (LLM activations reach hundreds): silu(a) is a finite number
    there, about a for large a and -0 for very negative a, and so are both gradients."""
    covers("large activations in float32")
    magnitudes = torch.tensor([20.0, 50.0, 89.0, 100.0, 1e3, 1e4])
    a = torch.cat([magnitudes, -magnitudes]).to(device)
    values = {"a": a, "b": sample(a.shape, device, seed=12, dtype=torch.float32)}
    with case("float32, |a| from 20 to 1e4"), warnings.catch_warnings():
        # the interpreter's NumPy warns when exp(-a) overflows to inf, which a right kernel
        # may do (the sigmoid is then 0): the values below decide
        warnings.simplefilter("ignore", RuntimeWarning)
        leaves = {name: value.clone().requires_grad_() for name, value in values.items()}
        try:
            out = silu_mul(leaves["a"], leaves["b"])
            grads = torch.autograd.grad(out, (leaves["a"], leaves["b"]), torch.ones_like(out))
        except (GradingError, NotImplementedError):
            raise
        except Exception as error:
            raise explain("silu_mul", "call", error) from error
        for what, got in [("output", out), ("gradient for a", grads[0]),
                          ("gradient for b", grads[1])]:
            bad = ~torch.isfinite(got)
            if bad.any():
                where = a[bad.nonzero()[0].item()].item()
                raise GradingError(
                    f"silu_mul's {what} is {got[bad][0].item()} at a = {where:g} in float32 "
                    "(a finite b), where silu is finite: an exp that overflows? (in float32 "
                    "exp(x) is inf once x > 88.7, and inf / inf and inf * 0 are nan): which "
                    "value in your kernels grows past float32 at this a, and which step then "
                    "turns it into a non-finite result?",
                    mistake="silu_mul/exp-overflows")
        checked_call(silu_mul, values, rtol=1e-5, atol=1e-6)


def check_bfloat16_range(silu_mul, device) -> None:
    """bfloat16 gates, values and a grad_output past float16's largest number (65504):
    bfloat16 holds them, and silu(a) * b and both gradients are finite there; a route through
    float16, in forward or in backward (grad_output's included), makes them inf."""
    covers("bfloat16 past float16's range")
    a = torch.tensor([7e4, -7e4, 1e5, 2.0, 1.0], device=device, dtype=torch.bfloat16)
    b = torch.tensor([0.5, 0.5, 0.5, 7e4, 0.5], device=device, dtype=torch.bfloat16)
    grad_output = torch.tensor([1.0, 1.0, 1.0, 1.0, 7e4], device=device, dtype=torch.bfloat16)
    leaves = [value.clone().requires_grad_() for value in (a, b)]
    with case("bfloat16, |a|, |b| and grad_output up to 1e5"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = silu_mul(*leaves)
        grads = torch.autograd.grad(out, leaves, grad_output)
    for what, got in [("output", out), ("gradient for a", grads[0]), ("gradient for b", grads[1])]:
        bad = ~torch.isfinite(got)
        if bad.any():
            index = bad.nonzero()[0].item()
            raise GradingError(
                f"silu_mul's {what} is {got[bad][0].item()} at a = {a[index].item():g}, b = "
                f"{b[index].item():g}, grad_output = {grad_output[index].item():g} in "
                "bfloat16, where it is finite: bfloat16 reaches far past "
                "float16's largest number, 65504; is a bfloat16 input computed in float32, or "
                "does it pass through float16 on the way?",
                mistake="silu_mul/bfloat16-through-float16")
