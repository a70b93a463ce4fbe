"""Lesson 08: softplus as the custom operator autograd_course::softplus (fake implementation,
hand-written backward, opcheck, torch.compile(fullgraph=True)); its tails, where beta * x is
very negative or large, are checked in ``left_tail`` and ``right_tail``."""

from types import SimpleNamespace

import torch
from torch._library.custom_ops import _maybe_get_opdef

from ...checks import Spec, case, check_backward_by_hand
from ...contract import check_each_input_alone, covers
from ...diagnose import diagnose_gradient, diagnose_values
from ...domain import Constant, Domain, sampled
from ...errors import GradingError
from ...exercise import Exercise, sample
from ...probes import trace_backward
from .custom_op_probes import check_beta_slips, check_output_beta
from .left_sweep import check_left_switch, check_left_tail_sweep, check_slope_at_kink
from .left_tail import check_left_tail
from .right_tail import (check_float32_overflow, check_no_switch, check_right_slope,
                         check_right_value)
from .operators import (_quiet, check_custom_operator, fake_and_real, operator_of,
                        raised_error, registration_error, run_opcheck)

LATER_IN_LESSON = True  # softplus comes after LogSumExp (log_sum_exp)

OPERATOR = "autograd_course::softplus"
SOFTPLUS = Spec("softplus", ("x", "beta"), lambda x, beta: torch.logaddexp(beta * x, 0 * x) / beta)


def check_operator(softplus) -> None:
    """softplus calls autograd_course::softplus, and is its current definition."""
    check_custom_operator(softplus, "softplus", (torch.ones(2, dtype=torch.float64), 1.0))
    check_input_unchanged(softplus)


def check_input_unchanged(softplus) -> None:
    """A call, and a backward through it, leave x as it was: the schema (mutates_args=())
    promises the compiler so, and backward reads the caller's own x, which it saved."""
    x = torch.tensor([-1.5, 0.5, 2.0], dtype=torch.float64)
    before = x.clone()
    with torch.no_grad():
        softplus(x, 2.0)
    if not torch.equal(x, before):
        raise GradingError(
            "softplus wrote into its input x (an in-place op such as x.mul_(beta)): the "
            "operator declares mutates_args=(), so the compiler and the caller assume x is "
            "unchanged; compute into new tensors (z = beta * x)",
            f"x was {before.tolist()}, after softplus(x, 2.0) it is {x.tolist()}",
            mistake="softplus/mutates-input")
    x.requires_grad_()
    try:
        torch.autograd.grad(softplus(x, 2.0).sum(), x)
    except Exception:  # noqa: BLE001 - the cases that follow report it with the learner's error
        return
    if not torch.equal(x.detach(), before):
        raise GradingError(
            "softplus's backward wrote into x, the tensor it saved (an in-place op such as "
            "x.mul_(beta)): what setup_context saves is the caller's own x, which a later "
            "forward or backward then reads changed; compute into new tensors "
            "(torch.sigmoid(ctx.beta * x))",
            f"x was {before.tolist()}, after a backward it is {x.detach().tolist()}",
            mistake="softplus/backward-writes-input")


def _softplus_error(phase: str, error: Exception, softplus, beta) -> GradingError:
    named = registration_error("softplus", "beta", error)
    if named is not None:
        return named
    message = str(error)
    if "different than None at position 2" in message:
        return GradingError(f"softplus's backward returned a gradient for beta={beta}, a Python "
                            "float: return None for beta", message,
                            mistake="softplus/gradient-for-beta")
    setup = getattr(_maybe_get_opdef(OPERATOR), "_setup_context_fn", None)
    if setup is not None and message.startswith(f"{getattr(setup, '__name__', '?')}() got an "
                                                "unexpected keyword argument"):
        return GradingError(
            f"softplus's setup_context, {setup.__name__}, is called with keyword arguments: "
            "register_autograd calls setup_context(ctx=..., inputs=..., output=...), so name its "
            "parameters exactly ctx, inputs, output", message,
            mistake="softplus/setup-context-parameter-names")
    if phase == "backward" and getattr(softplus, "_setup_context_fn", True) is None:
        return GradingError(
            "softplus's backward was registered without setup_context: ctx is empty in backward; "
            "register_autograd(backward, setup_context=...) with a setup_context that saves x",
            message, mistake="softplus/no-setup-context")
    return raised_error("softplus", phase, error, f"beta={beta}")


def check_fake(softplus, x, beta) -> None:
    """The fake implementation's shape, dtype and device match the real output's."""
    fake, real = fake_and_real(softplus, x, beta, lambda error: _softplus_error(
        "fake implementation", error, softplus, beta))
    got, want = ((tuple(t.shape), t.dtype, t.device.type) for t in (fake, real))
    if real.dtype != x.dtype and fake.dtype == x.dtype:
        raise GradingError(
            f"softplus returns {str(real.dtype)[6:]} for an x of {str(x.dtype)[6:]} (beta="
            f"{beta}), where its fake, rightly, says {str(x.dtype)[6:]}: an element-wise op "
            "returns x's dtype; where does your forward change it?",
            mistake="softplus/output-dtype-not-input")
    if got != want:
        raise GradingError(
            f"softplus's fake implementation returns shape {got[0]}, {got[1]} on {got[2]}, "
            f"but the operator returns shape {want[0]}, {want[1]} on {want[2]}: register_fake "
            "must describe the real output, e.g. torch.empty_like(x)",
            mistake="softplus/fake-mismatch")
    if fake.stride() != real.stride() and real.numel() > 1:
        kept = torch.empty_like(x).stride()
        if fake.stride() == x.stride() and real.stride() == kept:
            raise GradingError(
                f"softplus's fake implementation copies x's strides {x.stride()} (x of shape "
                f"{tuple(x.shape)}, a slice or an expand, with gaps or repeats in memory), but "
                f"the operator returns the dense strides {real.stride()}: an element-wise op "
                "keeps x's layout only where x is dense, and torch.compile plans memory with "
                "the fake's", mistake="softplus/fake-copies-strides")
        if real.is_contiguous() and not x.is_contiguous() and fake.stride() == kept:
            raise GradingError(
                f"softplus returns contiguous strides {real.stride()} for a transposed x (shape "
                f"{tuple(x.shape)}, strides {x.stride()}), while its fake implementation keeps "
                f"x's strides {fake.stride()}, as an element-wise op on x does: did forward copy "
                "x (x.contiguous(), .reshape, a kernel's own output)? torch.compile plans memory "
                "with the fake's layout, and opcheck compares it: compute on x without the copy, "
                "or make the fake describe the contiguous output the operator returns",
                mistake="softplus/forward-copies-contiguous")
        raise GradingError(
            f"softplus's fake implementation returns strides {fake.stride()} for x of shape "
            f"{tuple(x.shape)} and strides {x.stride()}, but the operator returns strides "
            f"{real.stride()}: torch.compile plans memory with the fake's layout, and opcheck "
            "compares it; which way of making an empty tensor keeps x's layout?",
            mistake="softplus/fake-strides")


def check_softplus(softplus, x, beta, *, rtol=1e-5, atol=1e-7) -> None:
    """Values and a hand-written gradient against the stable reference."""
    x = x.detach().clone().requires_grad_()
    expected = SOFTPLUS.reference(x.detach(), beta)
    try:
        out = softplus(x, beta)
    except Exception as error:
        raise _softplus_error("forward", error, softplus, beta) from error
    if not torch.isfinite(out).all() and torch.isfinite(expected).all():
        raise GradingError(
            f"softplus overflows for large beta * x (beta={beta}, largest beta * x "
            f"{(beta * x).abs().max().item():.4g}): exp(beta * x) is inf; with z = beta * x, "
            "which part of log(1 + e^z) can come out of the log so that no exponent left is "
            "positive? (lesson 01's softplus did it for beta = 1)", f"got {out.detach()}",
            mistake="softplus/overflows")
    check_output_beta(out.detach(), expected, beta)
    diagnose_values(f"softplus's output with beta={beta}", out, expected, rtol=rtol, atol=atol)
    grad_output = sample(out.shape, out.device, seed=9, dtype=out.dtype)
    try:
        trace = trace_backward(out, [x], grad_output.clone())
    except Exception as error:
        raise _softplus_error("backward", error, softplus, beta) from error
    check_backward_by_hand(SOFTPLUS, trace)
    check_softplus_ctx(out)
    expected_grad = grad_output * torch.sigmoid(beta * x.detach())
    with case(f"beta={beta}"):
        check_beta_slips(trace.grads[0], expected_grad, grad_output * torch.sigmoid(x.detach()),
                         beta)
        diagnose_gradient("x", trace.grads[0], expected_grad, rtol=rtol, atol=atol)


def check_softplus_ctx(out: torch.Tensor) -> None:
    """setup_context saves tensors with save_for_backward, not as ctx attributes (the ctx of a
    registered backward is the output's grad_fn)."""
    kept = [name for name, value in vars(out.grad_fn).items()
            if isinstance(value, torch.Tensor)] if hasattr(out.grad_fn, "__dict__") else []
    if kept:
        raise GradingError(
            f"softplus's setup_context keeps a tensor as ctx.{kept[0]}: save it with "
            "ctx.save_for_backward(x) and read it back from ctx.saved_tensors, so that autograd "
            "checks it for in-place changes and saved-tensor hooks see it",
            mistake="softplus/tensor-on-ctx")


def check_compiled(softplus, x, beta) -> None:
    """torch.compile(fullgraph=True, backend="aot_eager") matches eager values and gradients."""
    scope = {"softplus": softplus, "beta": beta, "torch": torch}  # fresh code: no stale cache
    through = eval(compile("lambda x: torch.sin(softplus(x * 2, beta)) * x",  # noqa: S307
                           "<softplus under torch.compile>", "eval"), scope)
    eager_x, compiled_x = (x.detach().clone().requires_grad_() for _ in range(2))
    (eager := through(eager_x)).sum().backward()
    # every re-run of the answer cell adds guards to dynamo's caches until its recompile limit
    # rejects a right answer (seen on a GPU machine, where both devices compile): start afresh
    torch._dynamo.reset()
    try:
        with _quiet():
            compiled = torch.compile(through, fullgraph=True, backend="aot_eager")(compiled_x)
            compiled.sum().backward()
    except Exception as error:
        cause = error
        while cause.__cause__ is not None:  # dynamo wraps the learner's own error
            cause = cause.__cause__
        hint = _softplus_error("compiled call", cause, softplus, beta)
        raise GradingError(f"torch.compile(fullgraph=True) failed on a function calling "
                           f"softplus: {hint.hint}", str(error)) from error
    with case("under torch.compile(fullgraph=True, backend='aot_eager')"):
        diagnose_values("softplus's output", compiled, eager)
        diagnose_gradient("x", compiled_x.grad, eager_x.grad)


def check_opcheck(softplus, x, beta) -> None:
    """torch.library.opcheck: schema, autograd registration, fake tensor, AOT dispatch."""
    run_opcheck("softplus", x, beta,
                lambda error: _softplus_error("opcheck", error, softplus, beta))


def softplus_full(softplus, device) -> None:
    check_operator(softplus)
    check_no_switch(softplus, device, SOFTPLUS)
    check_left_switch(softplus, device, _softplus_error)
    for seed, shape in enumerate([(3, 4), (5,), (2, 3, 2), (), (0, 3)]):
        x = 2 * sample(shape, device, seed=seed)
        check_fake(softplus, x, 1.5)
        for beta in (1.0, 0.5, 3.0):
            check_softplus(softplus, x, beta)
    covers("0-d and 1-D x")
    check_slope_at_kink(softplus, device, _softplus_error)  # after the by-hand rule
    huge = torch.tensor([800.0, -800.0, 0.5, 300.0], dtype=torch.float64, device=device)
    for beta in (1.0, 4.0):
        check_softplus(softplus, huge, beta)
    covers("beta * x in the thousands")
    check_float32_overflow(softplus, device)
    check_left_tail(softplus, device, SOFTPLUS, _softplus_error)
    check_left_tail_sweep(softplus, device, _softplus_error)
    check_right_value(softplus, device, _softplus_error)
    covers("the right side's value, to the dtype's precision")
    check_right_slope(softplus, device, _softplus_error)
    covers("the right side's gradient, to the dtype's precision")
    covers("the left tail, relative error")
    covers("the left tail's gradient, relative error")
    check_fake(softplus, sample((3,), device, dtype=torch.float32), 2.0)
    check_each_input_alone(SimpleNamespace(apply=softplus), SOFTPLUS,
                           {"x": sample((3, 4), device), "beta": 1.5})
    check_opcheck(softplus, sample((3, 4), device, seed=3), 1.5)  # a second layout below
    with case("x of shape (3, 4), transposed (not contiguous)"):  # strides the fake must give
        transposed = sample((4, 3), device, seed=5).mT
        check_fake(softplus, transposed, 1.5)
        check_opcheck(softplus, transposed, 1.5)
    with case("x = base[:, :3] of a (4, 5) base (not dense)"):
        check_fake(softplus, sample((4, 5), device, seed=6)[:, :3], 1.5)
    with case("x of shape (4, 1) expanded to (4, 3) (stride 0)"):
        check_fake(softplus, sample((4, 1), device, seed=7).expand(4, 3), 1.5)
    with case("x = base.permute(2, 0, 1) of a (2, 3, 4) base (dense, not contiguous)"):
        check_fake(softplus, sample((2, 3, 4), device, seed=8).permute(2, 0, 1), 1.5)
    covers("torch.library.opcheck")
    check_compiled(softplus, sample((4, 3), device, seed=4), 1.5)
    covers("torch.compile(fullgraph=True)")


_TYPICAL = sampled(SOFTPLUS, {"x": (3, 4)}, {"beta": 1.5}, scale=2.0)


def _softplus_values(device, dtype=torch.float64, seed=0, **constants) -> dict:
    """x of shape (3, 4) with one entry at +70 and one at -70 among typical ones."""
    values = _TYPICAL(device, dtype, seed, **constants)
    x = values["x"].clone()
    x[0, 1], x[2, 2] = 70.0, -70.0
    return {**values, "x": x}


EXERCISES = [
    Exercise("softplus", "08_compile", softplus_full,
             example=lambda: (2 * sample((3, 4), "cpu"), 1.5),
             # float32 from the domain: its x holds +-70, where exp(beta * x) leaves float32's
             # range at the default beta and float64's at the largest
             domain=Domain(SOFTPLUS, _softplus_values, prepare=operator_of(check_operator),
                           constants={"beta": Constant(1e-6, 100.0, "beta a Python float > 0, "
                                                       "tiny and large")}),
             contract=("0-d and 1-D x", "beta * x in the thousands",
                       "the right side's value, to the dtype's precision",
                       "the right side's gradient, to the dtype's precision",
                       "the left tail, relative error",
                       "the left tail's gradient, relative error",
                       "torch.library.opcheck", "torch.compile(fullgraph=True)")),
]
