"""Lesson 13: silu_mul, the custom operator autograd_course::silu_mul computing silu(a) * b with
a Triton forward kernel and a Triton backward kernel."""

import warnings

import torch
import torch.nn.functional as F

from ...checks import Spec, case, check_values_and_gradients
from ...contract import check_each_input_alone, covers
from ...domain import Case, Domain
from ...errors import GradingError
from ...exercise import Exercise, sample
from .contracts import SILU_MUL_CLAUSES
from .kernel_checks import (Calls, check_compiled, check_in_kernels, check_opcheck,
                            check_operator, check_within_ulps, explain, kernel_battery,
                            name_bfloat16_failure)
from .kernel_domain import kernel_operator
from .kernel_fakes import check_backward_fakes, check_ctx_tensors

SILU_MUL = Spec("silu_mul", ("a", "b"), lambda a, b: F.silu(a) * b)
HALF = (torch.float16, torch.bfloat16)


def _values(shape, device, seed=0, dtype=torch.float64) -> dict:
    return {"a": 2 * sample(shape, device, seed=seed, dtype=dtype),
            "b": sample(shape, device, seed=seed + 50, dtype=dtype)}


def _checked(silu_mul, values: dict, **tolerances) -> None:
    try:
        check_values_and_gradients(Calls(silu_mul), SILU_MUL, values, **tolerances)
    except GradingError as error:
        if "may not alias any inputs" not in str(error):  # custom_op's check of each call
            raise
        raise GradingError(
            "an operator of silu_mul returns one of its own inputs (or a view of one): a "
            "custom operator's outputs must be new tensors, so allocate each gradient "
            "(Liger-Kernel writes its gradients into a and b instead, which a custom operator "
            "may not do)", error.details, case=error.case,
            mistake="silu_mul/returns-input") from error
    except NotImplementedError:
        raise
    except Exception as error:
        raise explain("silu_mul", "call", error) from error


def check_non_contiguous(silu_mul, device) -> None:
    """A transposed a and a column-sliced b: the kernel must not read them as flat memory."""
    covers("non-contiguous inputs")
    values = {"a": 2 * sample((7, 5), device, seed=3).t(), "b": sample((5, 14), device)[:, ::2]}
    try:
        with case("a transposed, b a strided slice"):
            _checked(silu_mul, values)
    except GradingError as error:
        dense = {name: value.contiguous() for name, value in values.items()}
        try:
            _checked(silu_mul, dense)
        except GradingError:
            raise error from None
        raise GradingError(
            "silu_mul is right for contiguous inputs but wrong for the same values in a "
            "transposed or strided view: a kernel indexes flat memory, so make the inputs "
            "contiguous on the host (a.contiguous()) or pass their strides to the kernel",
            error.details, case="a transposed, b a strided slice",
            mistake="silu_mul/strided-read-as-flat") from error
    covers("non-contiguous grad_output")
    a, b = (v.detach().clone().requires_grad_() for v in _values((6, 4), device).values())
    grad_output = sample((4, 6), device, seed=4).t()
    grads, dense, truth = (torch.autograd.grad(f(a, b), (a, b), g) for f, g in [
        (silu_mul, grad_output), (silu_mul, grad_output.contiguous()),
        (SILU_MUL.reference, grad_output)])
    for name, got, same, want in zip("ab", grads, dense, truth):
        if not (torch.allclose(got, want, rtol=1e-9, atol=1e-10)  # float64 to its precision
                or torch.allclose(got, same, rtol=1e-9, atol=1e-10)):
            raise GradingError(
                f"silu_mul's gradient for {name} is wrong when grad_output is a transposed view, "
                "and another for the same values contiguous: make grad_output contiguous "
                "before the backward kernel reads it",
                mistake="silu_mul/grad-output-strided-read-as-flat")


def _reads_one_gradient(silu_mul, device) -> bool:
    """Whether the backward used grad_output's first element for every element (a scalar
    load, as for a 0-d gradient): both gradients match that and not the true ones."""
    a, b = (v.requires_grad_() for v in _values((3, 5), device, seed=11).values())
    grad_output = sample((3, 5), device, seed=12)
    try:
        got = torch.autograd.grad(silu_mul(a, b), (a, b), grad_output)
    except Exception:  # noqa: BLE001 -- a probe: the battery's own message stands
        return False
    reference = SILU_MUL.reference(a, b)
    first = torch.autograd.grad(reference, (a, b), grad_output.flatten()[0].expand(3, 5),
                                retain_graph=True)
    truth = torch.autograd.grad(reference, (a, b), grad_output)
    return all(torch.allclose(g, f) and not torch.allclose(g, t)
               for g, f, t in zip(got, first, truth))


def _held_fixed(silu_mul, device) -> str | None:
    """Which factor of silu(a) = a * sigmoid(a) the gradient for a held fixed ("a" or
    "sigmoid(a)"), when it matches g * b times the derivative of the other factor alone, and
    not the true gradient; None otherwise."""
    a, b = (v.requires_grad_() for v in _values((3, 5), device, seed=14).values())
    grad_output = sample((3, 5), device, seed=15)
    try:
        got = torch.autograd.grad(silu_mul(a, b), (a, b), grad_output)[0]
    except Exception:  # noqa: BLE001 -- a probe: the battery's own message stands
        return None
    s = torch.sigmoid(a.detach())
    truth = torch.autograd.grad(SILU_MUL.reference(a, b), a, grad_output)[0]
    partial = {"sigmoid(a)": s, "a": a.detach() * s * (1 - s)}  # the other factor's derivative
    for fixed, derivative in partial.items():
        if (torch.allclose(got, grad_output * b.detach() * derivative)
                and not torch.allclose(got, truth)):
            return fixed
    return None


def check_half(silu_mul, device) -> None:
    """float16 and bfloat16 within 2 ulp of the float32-computed reference cast back; what
    Triton 3.9's interpreter gets wrong in bfloat16 is named."""
    try:
        _check_half(silu_mul, device)
    except GradingError as error:
        if str(torch.bfloat16) in str(error):
            a, b = (v.to(torch.bfloat16).requires_grad_() for v in
                    _values((1031,), device, seed=6, dtype=torch.float32).values())
            name_bfloat16_failure("silu_mul", lambda: torch.autograd.grad(
                silu_mul(a, b), (a, b), torch.ones_like(a)), error)
        raise


def _check_half(silu_mul, device) -> None:
    covers("float16 and bfloat16 within 2 ulp")
    values32 = _values((1031,), device, seed=6, dtype=torch.float32)
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


def _computed_in_float32(silu_mul, a: torch.Tensor, b: torch.Tensor) -> bool:
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
                    f"silu_mul's {what} is {got[bad][0].item()} at a = {where:g} in float32, "
                    "where silu is finite: most likely an exp that overflows (in float32 exp(x) "
                    "is inf once x > 88.7, and inf / inf is nan); write the sigmoid as "
                    "1 / (1 + exp(-a)), whose exp can only overflow where the sigmoid is 0",
                    mistake="silu_mul/exp-overflows")
        _checked(silu_mul, values, rtol=1e-5, atol=1e-6)


def check_kernels_do_the_work(silu_mul, device) -> None:
    """The arithmetic runs in the kernels, and each pass is one launch of one kernel (37
    elements: one block of any block size a learner would pick, or a grid-stride loop)."""
    covers("arithmetic in the learner's kernels")
    a, b = (v.requires_grad_() for v in _values((37,), device).values())
    forward = check_in_kernels("silu_mul", "forward", lambda: silu_mul(a, b))
    out = silu_mul(a, b)
    grad_output = torch.ones_like(out)
    backward = check_in_kernels("silu_mul", "backward",
                                lambda: torch.autograd.grad(out, (a, b), grad_output))
    covers("one kernel launch per pass")
    for phase, launched, what in [("forward", forward, "computes y"),
                                  ("backward", backward, "computes both gradients")]:
        if len(launched) > 1:
            raise GradingError(
                f"silu_mul's {phase} launched {len(launched)} Triton kernels "
                f"({', '.join(launched)}) on 37 elements: the point of the fused op is one "
                f"pass over memory, so one kernel, launched once, {what}, reading each input "
                "once", mistake="silu_mul/more-than-one-launch")


def check_fake(silu_mul, device) -> None:
    """The fake output has the real one's shape, dtype and strides, in float32 and for a
    transposed float64 a and b (opcheck's test_faketensor fails on a stride mismatch), and so
    do the fake outputs of the operator called in backward."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    a, b = _values((3, 5), device, dtype=torch.float32).values()
    a64, b64 = _values((3, 5), device).values()
    for where, (a, b) in [("", (a, b)), (" for a transposed a and b", (a64.t(), b64.t()))]:
        real = silu_mul(a, b)
        try:
            with FakeTensorMode() as mode:
                fake = silu_mul(mode.from_tensor(a), mode.from_tensor(b))
        except Exception as error:
            raise explain("silu_mul", "fake implementation", error) from error
        if (fake.shape, fake.dtype) != (real.shape, real.dtype):
            raise GradingError(f"silu_mul's fake implementation returns shape "
                               f"{tuple(fake.shape)}, {fake.dtype}, but the operator returns "
                               f"{tuple(real.shape)}, {real.dtype}: register_fake must describe "
                               "the real output", mistake="silu_mul/fake-mismatch")
        if fake.stride() != real.stride():
            raise GradingError(
                f"silu_mul's fake implementation gives strides {fake.stride()}{where}, but the "
                f"operator returns strides {real.stride()}: register_fake must describe the "
                "real output, strides included (opcheck fails on it); the kernel writes a "
                "contiguous output, so return one (memory_format=torch.contiguous_format)",
                mistake="silu_mul/fake-strides")
    check_backward_fakes("silu_mul", silu_mul, (a64.t(), b64.t()))


def silu_mul_full(silu_mul, device) -> None:
    with kernel_battery("silu_mul", silu_mul, device):
        check_operator(silu_mul, "silu_mul", tuple(_values((4,), device).values()))
        try:
            for seed, shape in enumerate([(3, 5), (1031,), (2, 3, 7), (1024,)]):
                with case(f"a and b of shape {shape}"):
                    _checked(silu_mul, _values(shape, device, seed=seed))
        except GradingError as error:
            if fixed := _held_fixed(silu_mul, device):
                raise GradingError(
                    f"silu_mul's gradient for a is g * b times the derivative of silu(a) = "
                    f"a * sigmoid(a) with {fixed} held fixed: both factors move with a. What "
                    "does the product rule add? my_silu_mul_grads, above the exercise's answer "
                    "cell, checks your formula against autograd",
                    error.details, case=error.case,
                    mistake="silu_mul/product-rule-one-factor") from error
            if not _reads_one_gradient(silu_mul, device):
                raise
            raise GradingError(
                "silu_mul's backward uses grad_output's first element for every element: its "
                "gradients match grad_output[0] broadcast, not grad_output. Here grad_output "
                "is a tensor like y (a 0-d gradient is loaded once; this one is loaded per "
                "element, with the offsets and mask of a and b)",
                error.details, case=error.case,
                mistake="silu_mul/grad-output-read-once") from error
        a, b = (v.requires_grad_() for v in _values((3, 5), device).values())
        check_ctx_tensors("silu_mul", silu_mul(a, b))
        covers("sizes not a multiple of the block")
        covers("0-d and empty inputs")
        for shape in [(), (0, 3)]:
            with case(f"a and b of shape {shape}"):
                _checked(silu_mul, _values(shape, device, seed=9))
        check_each_input_alone(Calls(silu_mul), SILU_MUL, _values((6, 5), device, seed=2))
        covers("gradcheck in float64")
        a, b = (v.requires_grad_() for v in _values((6,), device, seed=5).values())
        if not torch.autograd.gradcheck(silu_mul, (a, b), raise_exception=False):
            if _computed_in_float32(silu_mul, a, b):
                raise GradingError("silu_mul computes float64 inputs in float32: its float64 "
                                   "results agree with the float32 computation, not with float64 "
                                   "(gradcheck fails); convert only float16 and bfloat16 to "
                                   "float32 and keep float64 in float64",
                                   mistake="silu_mul/float64-in-float32")
            raise GradingError("gradcheck failed for silu_mul: the analytic Jacobian differs "
                               "from the numerical one")
        check_kernels_do_the_work(silu_mul, device)  # before the dtypes: names host arithmetic
        check_non_contiguous(silu_mul, device)
        check_large_activations(silu_mul, device)
        check_half(silu_mul, device)
        check_fake(silu_mul, device)
        covers("opcheck")
        check_opcheck("silu_mul", "silu_mul",
                      tuple(v.requires_grad_() for v in _values((5, 3), device).values()))
        covers("torch.compile without graph breaks")
        check_compiled("silu_mul", silu_mul, tuple(_values((4, 3), device, seed=4).values()))


# Triton refuses a block of more than 2**20 elements: one program over the whole tensor
# (BLOCK = triton.next_power_of_2(n)) fails from here on; "any shape" includes these
LARGE = (1024, 1025)  # 1,049,600 elements, rows of 1025


def _large(device, dtype) -> dict:
    return _values(LARGE, device, seed=13, dtype=dtype)


EXERCISES = [
    Exercise("silu_mul", "13_kernels", silu_mul_full,
             example=lambda: tuple(_values((3, 4), "cpu").values()),
             contract=("sizes not a multiple of the block", "0-d and empty inputs",
                       "gradcheck in float64", "non-contiguous inputs",
                       "non-contiguous grad_output",
                       "large activations in float32", "float16 and bfloat16 within 2 ulp",
                       "arithmetic in the learner's kernels", "one kernel launch per pass",
                       "opcheck", "torch.compile without graph breaks"),
             clauses=SILU_MUL_CLAUSES,
             domain=Domain(SILU_MUL, lambda device, dtype=torch.float64, seed=0: _values(
                               (3, 5), device, seed=seed, dtype=dtype),
                           prepare=kernel_operator("silu_mul"),
                           dtypes=(torch.float64, torch.float32, *HALF),
                           dtype_clause="float32 and float64, and float16/bfloat16 computing in "
                                        "float32 and returning the input dtype",
                           accumulates={dtype: torch.float32 for dtype in HALF},
                           layout_clause="any shape, non-contiguous inputs made contiguous",
                           large=Case(_large, "any shape: past 2**20 elements, the largest "
                                      "block Triton accepts", dtype=torch.float32))),
]
