"""Lesson 08: LogSumExp under the torch.func transforms and forward mode (torch.func.jvp,
torch.vmap with per-sample gradients, gradcheck with check_forward_ad=True), and the hint for
an exception one of them raised inside the learner's code."""

import re

import torch
from torch.autograd.gradcheck import GradcheckError

from ...batched_backward import check_backward_batches
from ...checks import case
from ...diagnose import diagnose_gradient, diagnose_values
from ...errors import GradingError
from ...explain import _explain_runtime_error
from ...exercise import sample
from ...failure import learner_frames
from ...function_contract import rule_reference
from .lse_grad_output import check_lse_grad_output_kept
from .lse_inputs import LSE


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
            "what jvp needs", message, mistake="LogSumExp/jvp-without-save-for-forward")
    sizes = re.search(r"Tensor is of size (\[[\d, ]*\]) while the given forward gradient is of "
                      r"size (\[[\d, ]*\])", message)
    if phase == "jvp" and sizes:
        return GradingError(
            f"LogSumExp.jvp returns a tangent of shape {sizes[2]} for an output of shape "
            f"{sizes[1]} (x of shape {tuple(inputs['x'].shape)}, dim={inputs['dim']}): a "
            f"tangent has its output's shape, x's shape with dim removed, so the sum runs over "
            f"dim, without keepdim", message, mistake="LogSumExp/jvp-tangent-shape")
    if "data-dependent control flow" in message:
        frames = learner_frames(error)
        where = f": `{frames[-1][3]}` in {frames[-1][2]}" if frames else ""
        return GradingError(
            f"LogSumExp has a Python if on tensor values{where}; under torch.vmap (with x of "
            f"shape {tuple(inputs['x'].shape)}, dim={inputs['dim']}) a tensor holds the whole "
            "batch, so generate_vmap_rule has no one value to branch on", message,
            mistake="LogSumExp/python-if-on-values")
    shape = tuple(inputs['x'].shape)
    if "attempted to call in-place operation" in message:
        op = re.search(r"in-place operation \((aten::[\w.]+)\)", message)
        return GradingError(
            f"LogSumExp.{phase} writes in place ({op[1] if op else 'an in-place op'}) into a "
            f"tensor it was handed or saved (x of shape {shape}, dim={inputs['dim']}): under "
            "torch.func transforms the tangent and the saved tensors belong to the caller; "
            "compute a new tensor instead", message, mistake="LogSumExp/jvp-writes-in-place")
    if "data pointer" in message or "doesn't have storage" in message:
        return GradingError(
            f"LogSumExp.{phase} reads a tensor's memory address (data_ptr() or its storage), "
            f"with x of shape {shape}, dim={inputs['dim']}: under torch.func transforms and "
            "torch.compile a tensor is a wrapper with no storage of its own; and a key built "
            "from an address is a cache kept between calls, state outside ctx: keep what one "
            "call needs on its ctx", message, mistake="LogSumExp/reads-data-pointer")
    if phase in ("backward", "jvp") and "must match the size of tensor" in message:
        given = "grad_output" if phase == "backward" else "the tangent it computes"
        return GradingError(
            f"LogSumExp.{phase} combines tensors whose shapes do not line up (x of shape "
            f"{shape}, dim={inputs['dim']}): {given} and x differ by the reduced dim, so which "
            "dim is put back, or summed over, must be dim as counted in x; a negative dim "
            "counted against another tensor's rank names a different dim",
            message, mistake="LogSumExp/dim-misplaced")
    if isinstance(error, RuntimeError):
        return _explain_runtime_error(LSE, phase, error, inputs)
    return GradingError(f"LogSumExp.{phase} raised {type(error).__name__} with x of shape "
                        f"{tuple(inputs['x'].shape)}, dim={inputs['dim']}: {message}", message)


def check_lse_jvp(function, values: dict) -> None:
    """torch.func.jvp through the learner's jvp against torch.logsumexp's."""
    x, dim = values["x"], values["dim"]
    tangent = sample(x.shape, x.device, seed=5, dtype=x.dtype)
    x, given = x.clone(), x.clone()
    try:
        out, got = torch.func.jvp(lambda t: function.apply(t, dim), (x,), (tangent,))
    except Exception as error:
        raise _transform_error("jvp", error, values) from error
    if not torch.equal(x, given):
        raise GradingError(
            f"LogSumExp.jvp wrote into x, which it reads from ctx.saved_tensors (x of shape "
            f"{tuple(x.shape)}, dim={dim}): the caller's x changed under torch.func.jvp "
            f"{rule_reference('unwritten')}", mistake="LogSumExp/jvp-writes-saved-input")
    _, expected = torch.func.jvp(lambda t: torch.logsumexp(t, dim), (x,), (tangent,))
    if isinstance(got, torch.Tensor) and got.is_floating_point() and got.dtype != x.dtype:
        raise _tangent_dtype_error(got.dtype, x.dtype,
                                   f"x of shape {tuple(x.shape)}, dim={dim}")
    if not (isinstance(got, torch.Tensor) and got.shape == expected.shape
            and torch.allclose(got, expected, rtol=1e-5, atol=1e-7)):
        raise GradingError("LogSumExp.jvp is wrong: its tangent differs from torch.logsumexp's; "
                           "check your forward-mode product against Hint 3's checkpoint before "
                           "Exercise 1 (at x = (0, 1, 2), tangent (1, 0, -1), y_dot = -0.57521)",
                           f"got {got}, not {expected}")


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
    if batched:  # a .data read kills the kernel under the batched check's legacy vmap
        try:
            check_backward_batches("LogSumExp", lambda t: function.apply(t, dim), (x,))
        except GradingError:
            check_lse_grad_output_kept(function, x, dim)
            raise
    try:
        torch.autograd.gradcheck(lambda t: function.apply(t, dim), (x,), eps=1e-6, atol=1e-5,
                                 check_forward_ad=True, check_batched_grad=batched)
    except GradcheckError as error:
        if "While computing batched gradients" in str(error):
            check_lse_grad_output_kept(function, x, dim)
            op = re.search(r"Batching rule not implemented for (aten::[\w.]+)", str(error))
            raise GradingError(
                f"gradcheck's batched check (check_batched_grad=True) failed for LogSumExp with "
                f"dim={dim}: run under torch's legacy vmap over a batch of grad_outputs, backward "
                f"calls {op[1] if op else 'an op'}, which that vmap cannot batch; the gradients "
                "themselves were not compared", str(error)) from error
        forward = "forward mode" in str(error)
        mode, where = ("forward", "jvp") if forward else ("reverse", "backward")
        raise GradingError(f"gradcheck (check_forward_ad=True) failed in {mode} mode for "
                           f"LogSumExp with dim={dim}: {where} differs from finite differences",
                           str(error)) from error
    except Exception as error:
        raise _transform_error("jvp", error, values) from error


def check_lse_tangent_dtype(function, device) -> None:
    """The tangent jvp returns has x's dtype, in float32 and float64. Unlike a gradient, which
    autograd casts to its input's dtype without a word, a tangent reaches the caller of
    torch.func.jvp and forward_ad as jvp returned it (torch 2.13): a float64 tangent for a
    float32 x is float64 there, where torch.logsumexp's is float32. A tangent computed wider
    and cast back before jvp returns it is right. An output of the wrong dtype is left to the
    checks of forward's output, which name it first."""
    for dtype in (torch.float32, torch.float64):
        x = 3 * sample((3, 4), device, seed=7, dtype=dtype)
        tangent = sample((3, 4), device, seed=8, dtype=dtype)
        try:
            out, got = torch.func.jvp(lambda t: function.apply(t, 1), (x,), (tangent,))
        except Exception:  # noqa: BLE001 - check_lse_jvp and the domain's cases name it
            return
        if not (isinstance(out, torch.Tensor) and isinstance(got, torch.Tensor)) \
                or not got.is_floating_point() or out.dtype != dtype or got.dtype == dtype:
            continue
        raise _tangent_dtype_error(got.dtype, dtype, f"x of shape (3, 4), dim=1, {_name(dtype)}")


def _name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _tangent_dtype_error(got: torch.dtype, dtype: torch.dtype, where: str) -> GradingError:
    """LogSumExp.jvp returned a tangent of dtype ``got`` for an x of dtype ``dtype``."""
    lost = ("after the precision was lost" if torch.finfo(got).eps > torch.finfo(dtype).eps
            else f"after the work (and the memory) of {_name(got)}")
    return GradingError(
        f"LogSumExp.jvp returned a tangent in {_name(got)} for a {_name(dtype)} x: nothing "
        f"casts a tangent back, so torch.func.jvp and forward_ad hand the caller {_name(got)} "
        f"where torch.logsumexp's tangent is {_name(dtype)} ({lost}); a tangent has its "
        f"output's dtype, {_name(dtype)} here, as a gradient has its input's "
        f"{rule_reference('gradients')}",
        f"{where}: jvp returned {_name(got)}", mistake="LogSumExp/wrong-tangent-dtype")
