"""Lesson 08: LogSumExp under vmap, jvp and forward-mode gradcheck; softplus as the custom
operator autograd_course::softplus (fake, backward, opcheck, torch.compile(fullgraph=True))."""

import inspect
import logging
import warnings
from contextlib import contextmanager

import torch
from torch._library.custom_ops import CustomOpDef, _maybe_get_opdef
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.autograd.gradcheck import GradcheckError

from ..checks import (Spec, _explain_runtime_error, case, check_backward_by_hand,
                      check_is_function, check_values_and_gradients, run_forward)
from ..diagnose import diagnose_gradient, diagnose_values
from ..errors import GradingError
from ..exercise import Exercise, sample
from ..probes import trace_backward

OPERATOR = "autograd_course::softplus"
LSE = Spec("LogSumExp", ("x", "dim"), lambda x, dim: torch.logsumexp(x, dim))
SOFTPLUS = Spec("softplus", ("x", "beta"), lambda x, beta: torch.logaddexp(beta * x, 0 * x) / beta)
# (shape, dim): negative dims, 1-d to a 0-d result, and a 0-size batch last
LSE_CASES = [((3, 5), 1), ((3, 5), 0), ((2, 3, 4), -1), ((2, 3, 4), -2), ((2, 3, 4), 0),
             ((6,), 0), ((6,), -1), ((0, 4), -1)]
HUGE = torch.tensor([[1000.0, 999.0, -1000.0], [-1000.0, -999.5, -1000.0]])


def lse_values(shape, device, *, seed=0, dim=1, dtype=torch.float64) -> dict:
    return {"x": 3 * sample(shape, device, seed=seed, dtype=dtype), "dim": dim}


def check_lse_form(function) -> None:
    """The setup_context form: forward(x, dim) without ctx, setup_context, vmap rule, jvp."""
    base = torch.autograd.Function
    if function.setup_context is base.setup_context:
        raise GradingError(
            "LogSumExp has no setup_context: torch.func transforms need the setup_context form, "
            "forward(x, dim) without ctx plus setup_context(ctx, inputs, output) that saves")
    parameters = inspect.signature(function.forward).parameters.values()
    if not any(p.kind is p.VAR_POSITIONAL for p in parameters):
        names = [p.name for p in parameters]
        if len(names) != 2 or names[0] == "ctx":
            raise GradingError(
                f"LogSumExp.forward takes ({', '.join(names)}): with setup_context, forward "
                "takes no ctx, only (x, dim); saving happens in setup_context")
    if not getattr(function, "generate_vmap_rule", False) and function.vmap is base.vmap:
        raise GradingError("LogSumExp does not set generate_vmap_rule = True: torch.vmap refuses "
                           "a Function without a vmap rule; add it as a class attribute")
    if function.jvp is base.jvp:
        raise GradingError("LogSumExp has no jvp staticmethod: forward-mode AD (torch.func.jvp, "
                           "forward_ad) needs jvp(ctx, x_tangent, dim_tangent)")


def _transform_error(phase: str, error: Exception, inputs: dict) -> GradingError:
    """A hint for an exception raised while a torch.func transform ran the learner's code."""
    message = str(error)
    if "vmap support" in message:
        return GradingError("LogSumExp does not set generate_vmap_rule = True: torch.vmap "
                            "refuses it", message)
    if "setup_context" in message:
        return GradingError("LogSumExp has no setup_context: torch.func transforms need the "
                            "setup_context form", message)
    if phase == "jvp" and isinstance(error, (ValueError, IndexError)) and (
            "got 0" in message or "out of range" in message):
        return GradingError(
            "LogSumExp.jvp found ctx.saved_tensors empty: tensors saved with save_for_backward "
            "are for backward only; in setup_context also call ctx.save_for_forward(...) with "
            "what jvp needs", message)
    if isinstance(error, RuntimeError):
        return _explain_runtime_error(LSE, phase, error, inputs)
    return GradingError(f"LogSumExp.{phase} raised {type(error).__name__} with x of shape "
                        f"{tuple(inputs['x'].shape)}, dim={inputs['dim']}: {message}", message)


def check_lse_stable(function, device) -> None:
    """Finite values and gradients at |x| = 1000 in float64."""
    x = HUGE.to(device=device, dtype=torch.float64).requires_grad_()
    out = run_forward(function, LSE, {"x": x, "dim": 1}).output
    grad, = torch.autograd.grad(out.sum(), x)
    expected = torch.logsumexp(x.detach(), 1)
    if not torch.isfinite(out).all() or not torch.isfinite(grad).all():
        raise GradingError(
            "LogSumExp overflows at |x| = 1000: exp(1000) is inf in float64; subtract the max "
            "along dim first, m + log(sum(exp(x - m)))", f"got {out.detach()}, expected {expected}")
    diagnose_values("LogSumExp's output at |x| = 1000", out, expected)
    diagnose_gradient("x", grad, torch.softmax(x.detach(), 1))


def check_lse_case(function, values: dict, **tolerances) -> None:
    """Values and gradients for one (shape, dim); a backward that fails only away from the last
    dimension gets the unsqueeze hint."""
    x, dim = values["x"], values["dim"]
    with case(f"x of shape {tuple(x.shape)}, dim={dim}"):
        try:
            check_values_and_gradients(function, LSE, values, **tolerances)
        except GradingError as error:
            last = dim in (-1, x.dim() - 1)
            if last or not ("backward" in error.hint or "gradient" in error.hint):
                raise
            raise GradingError(
                f"LogSumExp's backward fails for dim={dim}, which is not the last dimension: "
                "unsqueeze grad_output and the output at ctx.dim, not at -1, so that they "
                "broadcast along dim", str(error)) from error


def check_lse_ctx(function, values: dict) -> None:
    """No tensor kept as a ctx attribute: jvp's tensors go through save_for_forward."""
    inputs = {"x": values["x"].detach().clone().requires_grad_(), "dim": values["dim"]}
    forward = run_forward(function, LSE, inputs)
    if forward.ctx_tensor_attributes:
        raise GradingError(
            f"LogSumExp keeps a tensor as {forward.ctx_tensor_attributes[0]}: keep what jvp "
            "needs with ctx.save_for_forward and what backward needs with ctx.save_for_backward")


def check_lse_jvp(function, values: dict) -> None:
    """torch.func.jvp through the learner's jvp against torch.logsumexp's."""
    x, dim = values["x"], values["dim"]
    tangent = sample(x.shape, x.device, seed=5, dtype=x.dtype)
    try:
        out, got = torch.func.jvp(lambda t: function.apply(t, dim), (x,), (tangent,))
    except Exception as error:
        raise _transform_error("jvp", error, values) from error
    _, expected = torch.func.jvp(lambda t: torch.logsumexp(t, dim), (x,), (tangent,))
    if not (isinstance(got, torch.Tensor) and got.shape == expected.shape
            and torch.allclose(got, expected, rtol=1e-5, atol=1e-7)):
        raise GradingError("LogSumExp.jvp is wrong: the tangent of logsumexp is "
                           "sum(softmax(x, dim) * x_tangent, dim)", f"got {got}, not {expected}")


def check_lse_vmap(function, values: dict) -> None:
    """torch.vmap(LogSumExp.apply, in_dims=(0, None)) and per-sample gradients under vmap."""
    x, dim = values["x"], values["dim"]
    batch = torch.stack([x, 2 * x + 1, -x])
    inner = dim if dim < 0 else dim + 1
    try:
        got = torch.vmap(function.apply, in_dims=(0, None))(batch, dim)
        grads = torch.vmap(torch.func.grad(lambda t: function.apply(t, dim).sum()))(batch)
    except Exception as error:
        raise _transform_error("vmap", error, values) from error
    with case(f"torch.vmap over a batch of 3, x of shape {tuple(x.shape)}, dim={dim}"):
        diagnose_values("LogSumExp's output under vmap", got, torch.logsumexp(batch, inner))
        diagnose_gradient("x", grads, torch.softmax(batch, inner))


def check_lse_gradcheck(function, values: dict, *, batched: bool = False) -> None:
    """gradcheck in float64, forward mode (the learner's jvp) and reverse mode."""
    x, dim = values["x"].detach().clone().requires_grad_(), values["dim"]
    try:
        torch.autograd.gradcheck(lambda t: function.apply(t, dim), (x,), eps=1e-6, atol=1e-5,
                                 check_forward_ad=True, check_batched_grad=batched)
    except GradcheckError as error:
        forward = "forward mode" in str(error)
        mode, where = ("forward", "jvp") if forward else ("reverse", "backward")
        raise GradingError(f"gradcheck (check_forward_ad=True) failed in {mode} mode for "
                           f"LogSumExp with dim={dim}: {where} differs from finite differences",
                           str(error)) from error
    except Exception as error:
        raise _transform_error("jvp", error, values) from error


def lse_quick(LogSumExp) -> None:
    function = check_is_function(LogSumExp, LSE)
    check_lse_form(function)
    values = lse_values((3, 4), "cpu")
    check_lse_case(function, values)
    check_lse_case(function, lse_values((3, 4), "cpu", seed=1, dim=0))
    check_lse_ctx(function, values)
    check_lse_stable(function, "cpu")
    check_lse_jvp(function, values)
    check_lse_vmap(function, values)
    check_lse_gradcheck(function, lse_values((2, 3), "cpu"))


def lse_full(LogSumExp, device) -> None:
    function = check_is_function(LogSumExp, LSE)
    check_lse_form(function)
    for seed, (shape, dim) in enumerate(LSE_CASES):
        values = lse_values(shape, device, seed=seed, dim=dim)
        check_lse_case(function, values)
        check_lse_ctx(function, values)
        check_lse_jvp(function, values)
        if 0 not in shape:
            check_lse_vmap(function, values)
    check_lse_stable(function, device)
    float32 = lse_values((3, 4), device, dim=-1, dtype=torch.float32)
    with case("x of shape (3, 4) in float32, dim=-1"):
        check_values_and_gradients(function, LSE, float32, rtol=1e-5, atol=1e-6)
    for shape, dim in [((2, 3), 1), ((2, 3, 2), -2), ((4,), 0)]:
        check_lse_gradcheck(function, lse_values(shape, device, dim=dim), batched=True)


class _Calls(torch.utils._python_dispatch.TorchDispatchMode):
    """Record which operators a call dispatched."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.__dict__.setdefault("names", []).append(str(func.overloadpacket))
        return func(*args, **(kwargs or {}))


@contextmanager
def _quiet():
    """Silence dynamo's and opcheck's logging of a failure that is about to become a hint."""
    logger, level = logging.getLogger("torch"), logging.getLogger("torch").level
    logger.setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings(action="ignore"):
            yield
    finally:
        logger.setLevel(level)


def check_operator(softplus) -> None:
    """softplus calls autograd_course::softplus, and is its current definition."""
    if isinstance(softplus, type) and issubclass(softplus, torch.autograd.Function):
        raise GradingError("softplus is an autograd.Function: define it as the custom operator "
                           f"{OPERATOR} with @torch.library.custom_op")
    with _Calls() as calls:
        softplus(torch.ones(2, dtype=torch.float64), 1.0)
    if "autograd_course.softplus" not in vars(calls).get("names", []):
        raise GradingError(
            f"softplus never calls the custom operator {OPERATOR}: define it with "
            f'@torch.library.custom_op("{OPERATOR}", mutates_args=())',
            f"operators called: {', '.join(vars(calls).get('names', [])) or 'none'}")
    if isinstance(softplus, CustomOpDef) and _maybe_get_opdef(OPERATOR) is not softplus:
        raise GradingError(f"softplus is an older definition: {OPERATOR} was defined again after "
                           "it; the operator runs the newest: re-run the cell defining softplus")


def _softplus_error(phase: str, error: Exception, softplus, beta) -> GradingError:
    message = str(error)
    if "no fake impl" in message:
        return GradingError("softplus has no fake implementation: add @softplus.register_fake "
                            "returning torch.empty_like(x); torch.compile and opcheck need it",
                            message)
    if "no autograd formula" in message:
        return GradingError("softplus has no autograd registration: call "
                            "softplus.register_autograd(backward, setup_context=setup_context)",
                            message)
    if "incorrect number of gradients" in message:
        return GradingError("softplus's backward returns the wrong number of gradients: return "
                            "one per input of the operator, (grad_x, None), with None for beta",
                            message)
    if "different than None at position 2" in message:
        return GradingError(f"softplus's backward returned a gradient for beta={beta}, a Python "
                            "float: return None for beta", message)
    if phase == "backward" and getattr(softplus, "_setup_context_fn", True) is None:
        return GradingError(
            "softplus's backward was registered without setup_context: ctx is empty in backward; "
            "register_autograd(backward, setup_context=...) with a setup_context that saves x",
            message)
    return GradingError(f"softplus's {phase} raised {type(error).__name__} with beta={beta}: "
                        f"{message.splitlines()[0] if message else ''}", message)


def check_fake(softplus, x, beta) -> None:
    """The fake implementation's shape, dtype and device match the real output's."""
    real = softplus(x, beta)
    try:
        with _quiet(), FakeTensorMode() as mode:
            fake = softplus(mode.from_tensor(x), beta)
    except Exception as error:
        raise _softplus_error("fake implementation", error, softplus, beta) from error
    got, want = ((tuple(t.shape), t.dtype, t.device.type) for t in (fake, real))
    if got != want:
        raise GradingError(
            f"softplus's fake implementation returns shape {got[0]}, {got[1]} on {got[2]}, "
            f"but the operator returns shape {want[0]}, {want[1]} on {want[2]}: register_fake "
            "must describe the real output, e.g. torch.empty_like(x)")


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
            f"{(beta * x).abs().max().item():.4g}): exp(beta * x) is inf; compute "
            "max(z, 0) + log1p(exp(-|z|)) with z = beta * x", f"got {out.detach()}")
    diagnose_values(f"softplus's output with beta={beta}", out, expected, rtol=rtol, atol=atol)
    grad_output = sample(out.shape, out.device, seed=9, dtype=out.dtype)
    try:
        trace = trace_backward(out, [x], grad_output)
    except Exception as error:
        raise _softplus_error("backward", error, softplus, beta) from error
    check_backward_by_hand(SOFTPLUS, trace)
    check_softplus_ctx(out)
    with case(f"beta={beta}"):
        diagnose_gradient("x", trace.grads[0], grad_output * torch.sigmoid(beta * x.detach()),
                          rtol=rtol, atol=atol)


def check_softplus_ctx(out: torch.Tensor) -> None:
    """setup_context saves tensors with save_for_backward, not as ctx attributes (the ctx of a
    registered backward is the output's grad_fn)."""
    kept = [name for name, value in vars(out.grad_fn).items()
            if isinstance(value, torch.Tensor)] if hasattr(out.grad_fn, "__dict__") else []
    if kept:
        raise GradingError(
            f"softplus's setup_context keeps a tensor as ctx.{kept[0]}: save it with "
            "ctx.save_for_backward(x) and read it back from ctx.saved_tensors, so that autograd "
            "checks it for in-place changes and saved-tensor hooks see it")


def check_opcheck(softplus, x, beta) -> None:
    """torch.library.opcheck: schema, autograd registration, fake tensor, AOT dispatch."""
    try:
        with _quiet():
            torch.library.opcheck(torch.ops.autograd_course.softplus.default,
                                  (x.detach().clone().requires_grad_(x.is_floating_point()),
                                   beta))
    except Exception as error:
        raise _softplus_error("opcheck", error.__cause__ or error, softplus, beta) from error


def check_compiled(softplus, x, beta) -> None:
    """torch.compile(fullgraph=True, backend="aot_eager") matches eager values and gradients."""
    scope = {"softplus": softplus, "beta": beta, "torch": torch}  # fresh code: no stale cache
    through = eval(compile("lambda x: torch.sin(softplus(x * 2, beta)) * x",  # noqa: S307
                           "<softplus under torch.compile>", "eval"), scope)
    eager_x, compiled_x = (x.detach().clone().requires_grad_() for _ in range(2))
    (eager := through(eager_x)).sum().backward()
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


def softplus_quick(softplus) -> None:
    check_operator(softplus)
    x = 2 * sample((3, 4), "cpu")
    check_fake(softplus, x, 1.5)
    check_softplus(softplus, x, 1.5)
    check_softplus(softplus, torch.tensor([1000.0, -1000.0, 0.5], dtype=torch.float64), 1.0)


def softplus_full(softplus, device) -> None:
    check_operator(softplus)
    for seed, shape in enumerate([(3, 4), (5,), (2, 3, 2), (), (0, 3)]):
        x = 2 * sample(shape, device, seed=seed)
        check_fake(softplus, x, 1.5)
        for beta in (1.0, 0.5, 3.0):
            check_softplus(softplus, x, beta)
    huge = torch.tensor([800.0, -800.0, 0.5, 300.0], dtype=torch.float64, device=device)
    for beta in (1.0, 4.0):
        check_softplus(softplus, huge, beta)
    check_softplus(softplus, torch.tensor([100.0, -100.0, 0.5], device=device), 2.0,
                   rtol=1e-5, atol=1e-6)
    check_fake(softplus, sample((3,), device, dtype=torch.float32), 2.0)
    for shape, beta in [((3, 4), 1.5), ((5,), 0.5)]:
        check_opcheck(softplus, sample(shape, device, seed=3), beta)
    check_compiled(softplus, sample((4, 3), device, seed=4), 1.5)


EXERCISES = [
    Exercise("LogSumExp", "08_compile", lse_quick, lse_full,
             "eight (shape, dim) cases with negative dims, a 1-d input and a 0-size batch, "
             "torch.func.jvp and vmap (with per-sample gradients) for each, gradcheck with "
             "check_forward_ad=True and batched gradients, float32, CPU and CUDA",
             example=lambda: (3 * sample((3, 4), "cpu"), 1)),
    Exercise("softplus", "08_compile", softplus_quick, softplus_full,
             "five shapes (0-d and 0-size too) and three betas, |beta * x| up to 3200, "
             "float32, torch.library.opcheck, torch.compile(fullgraph=True, "
             "backend='aot_eager') against eager values and gradients, CPU and CUDA",
             example=lambda: (2 * sample((3, 4), "cpu"), 1.5)),
]
