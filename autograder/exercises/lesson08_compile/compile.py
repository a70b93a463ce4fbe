"""Lesson 08: LogSumExp under vmap, jvp and forward-mode gradcheck (its checks at |x| = 1000 are
in ``lse_stability``; softplus, the custom operator, is in ``custom_op``)."""

import inspect
import re
import weakref
from types import SimpleNamespace

import torch
import torch.autograd.forward_ad as forward_ad
from torch.autograd.gradcheck import GradcheckError

from ...checks import Spec, case, check_is_function, check_values_and_gradients, run_forward
from ...contract import check_each_input_alone, covers
from ...diagnose import diagnose_gradient, diagnose_values
from ...domain import Case, Constant, Domain, sampled
from ...errors import GradingError
from ...function_contract import rule_reference
from ...explain import _explain_runtime_error
from ...failure import learner_frames
from ...exercise import Exercise, sample
from ...class_state import check_class_state, class_state
from ...by_hand import check_by_hand
from ...memory import survivors
from ...outside_ctx import check_no_state_outside_ctx
from .contracts import LSE_CLAUSES, LSE_RULES
from .lse_stability import check_lse_stable

LSE = Spec("LogSumExp", ("x", "dim"), lambda x, dim: torch.logsumexp(x, dim))
# (shape, dim): negative dims, 1-d to a 0-d result, a size-1 dim that is not reduced (a
# squeeze of every size-1 dim is wrong there), and a 0-size batch last
LSE_CASES = [((3, 5), 1), ((3, 5), 0), ((2, 3, 4), -1), ((2, 3, 4), -2), ((2, 3, 4), 0),
             ((6,), 0), ((6,), -1), ((3, 1, 4), -1), ((0, 4), -1), ((4, 4), 0), ((2, 3, 3), 1)]


def lse_values(shape, device, *, seed=0, dim=1, dtype=torch.float64) -> dict:
    return {"x": 3 * sample(shape, device, seed=seed, dtype=dtype), "dim": dim}


def check_lse_form(function) -> None:
    """The setup_context form: forward(x, dim) without ctx, setup_context, vmap rule, jvp."""
    base = torch.autograd.Function
    if function.setup_context is base.setup_context:
        raise GradingError(
            "LogSumExp has no setup_context: torch.func transforms need the setup_context form, "
            "forward(x, dim) without ctx plus setup_context(ctx, inputs, output) that saves",
            mistake="LogSumExp/no-setup-context")
    parameters = inspect.signature(function.forward).parameters.values()
    if not any(p.kind is p.VAR_POSITIONAL for p in parameters):
        names = [p.name for p in parameters]
        if len(names) != 2 or names[0] == "ctx":
            raise GradingError(
                f"LogSumExp.forward takes ({', '.join(names)}): with setup_context, forward "
                "takes no ctx, only (x, dim); saving happens in setup_context",
                mistake="LogSumExp/forward-takes-ctx")
    if not getattr(function, "generate_vmap_rule", False) and function.vmap is base.vmap:
        raise GradingError("LogSumExp does not set generate_vmap_rule = True: torch.vmap refuses "
                           "a Function without a vmap rule; add it as a class attribute",
                           mistake="LogSumExp/no-vmap-rule")
    if function.jvp is base.jvp:
        raise GradingError("LogSumExp has no jvp staticmethod: forward-mode AD (torch.func.jvp, "
                           "forward_ad) needs jvp(ctx, x_tangent, dim_tangent)",
                           mistake="LogSumExp/no-jvp")


def check_lse_class_state(function, device) -> None:
    """No class attribute set by forward or by setup_context, each named on its own (the
    per-call check, which runs later, sees them together as one call of apply)."""
    before = class_state(function)
    owner = SimpleNamespace(spec=LSE)
    x = lse_values((3, 4), device)["x"]
    for phase, call in (("forward", function.forward), ("setup_context", function.apply)):
        for dim in (0, 1):  # two dims: a value the class held already is still replaced
            try:
                with torch.no_grad():
                    call(x, dim)
            except Exception:  # noqa: BLE001 - the cases that follow report it
                pass
            check_class_state(owner, function, before, phase)


def check_lse_call_state_dies(function, device) -> None:
    """A forward-mode call keeps nothing alive once the caller drops its input and output:
    tensors jvp reads reach it through ctx.save_for_forward, which dies with the call, not
    through a global or a cache that setup_context fills (forward mode runs jvp right after
    setup_context, so values alone cannot tell the two apart)."""
    x = lse_values((3, 4), device, seed=13)["x"]
    tangent = sample((3, 4), device, seed=14, dtype=x.dtype)
    try:
        with forward_ad.dual_level():
            dual = forward_ad.make_dual(x, tangent)
            out = function.apply(dual, 1)
            refs = [weakref.ref(dual), weakref.ref(out)]
            del dual, out
    except Exception:  # noqa: BLE001 - the cases that follow report it with the learner's error
        return
    # a reference cycle, freed only by the collector, is no leak
    kept = survivors(lambda: [name for name, ref in zip(("input", "output"), refs)
                              if ref() is not None])
    if kept:
        raise GradingError(
            f"LogSumExp keeps a call's {' and '.join(kept)} alive after the call: once the "
            "caller has dropped them, something still holds them (a global, a class attribute "
            "or a cache that setup_context or jvp fills); jvp must read its tensors from ctx, "
            "kept with ctx.save_for_forward, which belong to one call and die with it",
            "checked with torch.autograd.forward_ad on x of shape (3, 4), dim=1",
            mistake="LogSumExp/jvp-state-outside-ctx")


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




def check_grad_output_layout_kept(given: torch.Tensor, pristine: torch.Tensor,
                                  name: str = "LogSumExp") -> None:
    """grad_output's shape and strides as handed to backward: an in-place view op on it
    (unsqueeze_, squeeze_, t_, as_strided_) changes them and leaves its values alone, so a check
    of its values sees nothing, and what backward computed from it looks like another mistake."""
    before = (tuple(pristine.shape), pristine.stride())
    after = (tuple(given.shape), given.stride())
    if after != before:
        raise GradingError(
            f"{name}'s backward changed grad_output's shape in place: it was handed a "
            f"grad_output of shape {before[0]} (strides {before[1]}) and left it of shape "
            f"{after[0]} (strides {after[1]}), as an in-place view op such as "
            "grad_output.unsqueeze_(dim) does; autograd may read grad_output again after your "
            "backward returns: make a new view instead (grad_output.unsqueeze(dim)) "
            + rule_reference("unwritten"),
            mistake=f"{name}/reshapes-grad-output")


def check_lse_grad_output_unsqueezed(function, device) -> None:
    """x of shape (4, 4), dim=1: a grad_output of shape (4,) broadcasts against x without an
    error, along the wrong dim, unless backward puts dim back first."""
    x = lse_values((4, 4), device, seed=11)["x"].requires_grad_()
    grad_output = sample((4,), device, seed=12, dtype=x.dtype)
    given = grad_output.clone()  # the one backward receives: its shape and strides are watched
    try:
        got, = torch.autograd.grad(function.apply(x, 1), x, given)
    except Exception:  # noqa: BLE001 - the cases that follow report it with the learner's error
        return
    check_grad_output_layout_kept(given, grad_output)
    weights = torch.softmax(x.detach(), 1)
    if (isinstance(got, torch.Tensor) and got.shape == x.shape
            and not torch.allclose(got, grad_output.unsqueeze(1) * weights)
            and torch.allclose(got, grad_output.unsqueeze(0) * weights)):
        raise GradingError(
            "LogSumExp's backward lines grad_output up with the wrong dim: with x of shape "
            "(4, 4) and dim=1, grad_output has shape (4,), and broadcasting matches it with x's "
            "last dim, silently here and with an error when x is not square; put dim back in "
            "grad_output before it meets x", mistake="LogSumExp/grad-output-not-unsqueezed")


def check_lse_dim_from_shapes(function, device) -> None:
    """dim guessed from shapes (the first place x and the output differ, else the last): right
    for x of shape (3, 5) with dim=0, but for (4, 4) with dim=0 the guess is the last dim."""
    def grad(shape, dim, seed):
        x = lse_values(shape, device, seed=seed)["x"].requires_grad_()
        g = sample(shape[:dim] + shape[dim + 1:], device, seed=seed + 1, dtype=x.dtype)
        try:
            got, = torch.autograd.grad(function.apply(x, dim), x, g)
        except Exception:  # noqa: BLE001 - the cases that follow report it
            return None, x.detach(), g
        return got, x.detach(), g
    got, x, g = grad((3, 5), 0, 21)
    if got is None or not torch.allclose(got, g.unsqueeze(0) * torch.softmax(x, 0)):
        return
    got, x, g = grad((4, 4), 0, 23)
    if (got is not None and got.shape == x.shape
            and torch.allclose(got, g.unsqueeze(-1)
                               * (x - torch.logsumexp(x, 0).unsqueeze(-1)).exp())):
        raise GradingError(
            "LogSumExp's backward guesses dim from shapes: right for x of shape (3, 5) with "
            "dim=0, but for x of shape (4, 4) with dim=0 x and grad_output agree in their first "
            "size, so the guess is the last dim; keep dim itself (ctx.dim) from setup_context",
            mistake="LogSumExp/dim-guessed-from-shapes")


def check_lse_new_memory(function, device) -> None:
    """The output in memory of its own, as torch.logsumexp's is: a shortcut that returns a view
    of x (x.squeeze(dim) where dim has one entry) gives the right values, and writing into the
    output then writes into the caller's x."""
    for shape, dim in (((3, 1, 4), 1), ((3, 4), 1), ((1,), 0)):
        x = lse_values(shape, device, seed=31, dim=dim)["x"]
        try:
            with torch.no_grad():
                out = function.apply(x, dim)
        except Exception:  # noqa: BLE001 - the cases that follow report it with its case
            continue
        if (isinstance(out, torch.Tensor) and out.numel() and x.numel()
                and out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()):
            raise GradingError(
                f"LogSumExp's output shares memory with its input x (x of shape {shape}, "
                f"dim={dim}): writing into the output writes into the caller's x, where "
                "torch.logsumexp returns a tensor of its own " + rule_reference("values"),
                f"out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr(); "
                f"out has shape {tuple(out.shape)} and strides {out.stride()}",
                mistake="LogSumExp/output-shares-input-memory")


def check_lse_case(function, values: dict, **tolerances) -> None:
    """Values and gradients for one (shape, dim); a backward that fails only away from the last
    dimension gets the unsqueeze hint."""
    x, dim = values["x"], values["dim"]
    with case(f"x of shape {tuple(x.shape)}, dim={dim}"):
        try:
            check_values_and_gradients(function, LSE, values, **tolerances)
        except GradingError as error:
            cause = error.__cause__
            if (dim in (-1, x.dim() - 1) and isinstance(cause, RuntimeError) and "must match the size of tensor" in str(cause)
                    and error.hint.startswith("LogSumExp.backward raised")):
                raise GradingError(
                    f"LogSumExp.backward combines tensors whose shapes do not line up (x of "
                    f"shape {tuple(x.shape)}, dim={dim}): grad_output has x's shape with dim "
                    "removed, so the dim it gets back before it meets x must be dim as counted "
                    "in x (a dim normalised against grad_output's rank, one fewer, names "
                    "another dim)", str(cause), mistake="LogSumExp/dim-misplaced") from error
            phase = re.match(r"LogSumExp\.(\w+) raised", error.hint)
            if (phase and isinstance(cause, RuntimeError)
                    and "Expected reduction dim to be specified" in str(cause)):
                raise GradingError(
                    f"LogSumExp.{phase[1]} takes one max over the whole of x (a max with no "
                    f"dim), which raises for x of shape {tuple(x.shape)}, dim={dim}: x has no "
                    "elements, yet every sum along dim is well defined; and where it runs, what "
                    "does a single max for all of x do to a slice whose values all sit far below "
                    "x's largest? Which max does each sum along dim need?", str(cause),
                    mistake="LogSumExp/max-not-per-row") from error
            last = dim in (-1, x.dim() - 1)
            if last or not ("backward" in error.hint or "gradient" in error.hint):
                raise
            raise GradingError(
                f"LogSumExp's backward fails for dim={dim}, which is not the last dimension "
                "(the last one passed): every unsqueeze, softmax or sum in backward must use "
                "ctx.dim, not -1, so that grad_output and the output broadcast along dim",
                str(error), mistake="LogSumExp/backward-assumes-last-dim") from error


def check_lse_ctx(function, values: dict) -> None:
    """No tensor kept as a ctx attribute: jvp's tensors go through save_for_forward."""
    inputs = {"x": values["x"].detach().clone().requires_grad_(), "dim": values["dim"]}
    forward = run_forward(function, LSE, inputs)
    if forward.ctx_tensor_attributes:
        raise GradingError(
            f"LogSumExp keeps a tensor as {forward.ctx_tensor_attributes[0]}: keep what jvp "
            "needs with ctx.save_for_forward and what backward needs with ctx.save_for_backward",
            mistake="LogSumExp/tensor-on-ctx")


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


def check_lse_second_derivative(function, device) -> None:
    """backward differentiated once more (create_graph=True, as gradgradcheck and a
    Hessian-vector product do) agrees with torch.logsumexp's second derivative: backward must
    compute from tensors autograd can trace back to x, since forward and setup_context run
    without recording a graph."""
    # the last: a transposed x, where a copy of x saved for backward (x.contiguous()) is one
    for seed, (shape, dim) in enumerate([((3, 4), 1), ((2, 3, 4), -2), ((5,), 0), ((3, 4), 0)]):
        x = lse_values(shape[::-1] if seed == 3 else shape, device, seed=40 + seed,
                       dim=dim)["x"]
        x = (x.mT if seed == 3 else x).requires_grad_()
        out_shape = shape[:dim % len(shape)] + shape[dim % len(shape) + 1:]
        v = sample(out_shape, device, seed=50 + seed, dtype=x.dtype)
        u = sample(shape, device, seed=60 + seed, dtype=x.dtype)
        layout = ", transposed (not contiguous)" if seed == 3 else ""
        with case(f"a second derivative: x of shape {shape}{layout}, dim={dim}, backward run "
                  "with create_graph=True, then differentiated along a random direction"):
            try:
                first, = torch.autograd.grad(function.apply(x, dim), x, v, create_graph=True)
            except Exception as error:
                raise _transform_error("backward", error, {"x": x, "dim": dim}) from error
            if not first.requires_grad:
                raise GradingError(
                    "LogSumExp's backward cannot be differentiated again: run with "
                    "create_graph=True (a second derivative, as in lesson 04), its gradient for "
                    "x has no graph back to x, so autograd takes it for a constant and the "
                    "second derivative comes out 0; forward and setup_context record no graph, "
                    "so a tensor computed there (the weights themselves?) is a constant to "
                    "autograd: which tensors could setup_context keep that autograd can trace "
                    "back to x, for backward to compute its weights from?",
                    mistake="LogSumExp/second-derivative-lost")
            try:
                got, = torch.autograd.grad(first, x, u, allow_unused=True)
            except Exception as error:
                raise _transform_error("backward", error, {"x": x, "dim": dim}) from error
            reference = x.detach().clone().requires_grad_()
            want, = torch.autograd.grad(torch.autograd.grad(
                torch.logsumexp(reference, dim), reference, v, create_graph=True)[0],
                reference, u)
            if got is None:
                got = torch.zeros_like(want)
            # loose: a float32 step is a precision mistake, which the dtype checks after the
            # battery name; a second derivative with a term missing is off by O(1)
            if not torch.allclose(got, want, rtol=1e-4, atol=1e-6):
                raise GradingError(
                    "LogSumExp's second derivative is wrong: backward, run with "
                    "create_graph=True and differentiated again (as gradgradcheck and a "
                    "Hessian-vector product do, lesson 04), does not give torch.logsumexp's; "
                    "part of what backward computes from has no graph back to x (computed in "
                    "forward or setup_context, or detached), so autograd misses how it moves "
                    "with x", f"got {got.detach()}, expected {want}",
                    mistake="LogSumExp/second-derivative-wrong")


def check_state_shared(function, device) -> None:
    """Probe, where a case got wrong numbers and no check named why: one fresh call, at a shape
    and dim no earlier check used, must leave no new or grown tensor or container outside ctx (a
    cache a later call reads back is how one call's weights end up in another's gradient)."""
    with case("one call, forward then backward, x of shape (2, 7), dim=1"):
        check_no_state_outside_ctx(function, "LogSumExp", lse_values((2, 7), device, seed=77))


def lse_full(LogSumExp, device) -> None:
    function = check_is_function(LogSumExp, LSE)
    check_lse_form(function)
    check_lse_class_state(function, device)
    check_lse_call_state_dies(function, device)
    check_lse_grad_output_unsqueezed(function, device)
    check_lse_dim_from_shapes(function, device)
    check_lse_new_memory(function, device)
    # rule 3 before the transforms: a backward that asks autograd (torch.autograd.grad,
    # torch.func.vjp) is named as such, not by the error torch.vmap raises inside it
    check_by_hand(LSE_DOMAIN, function, device)
    for seed, (shape, dim) in enumerate(LSE_CASES):
        values = lse_values(shape, device, seed=seed, dim=dim)
        try:
            check_lse_case(function, values)
            check_lse_ctx(function, values)
            check_lse_jvp(function, values)
            if 0 not in shape:
                check_lse_vmap(function, values)
        except GradingError as error:
            if not error.mistake:  # wrong numbers, no cause proven: is it state shared by calls?
                check_state_shared(function, device)
            raise
    for edge in ("a dim other than the last", "negative dim", "1-D x", "torch.func.jvp",
                 "torch.vmap with per-sample gradients"):
        covers(edge)
    check_each_input_alone(function, LSE, lse_values((3, 4), device, dim=0))
    # before the |x| = 1000 checks, which run forward twice before one backward: a tensor kept
    # outside ctx (a global softmax) is named where it lives, not by the gradient it spoils
    with case("one call, forward then backward"):
        check_no_state_outside_ctx(function, "LogSumExp", lse_values((3, 4), device))
    check_lse_stable(function, device, LSE, _transform_error)
    covers("|x| = 1000: values, gradients and jvp")
    for shape, dim in [((2, 3), 1), ((2, 3, 2), -2), ((4,), 0)]:
        check_lse_gradcheck(function, lse_values(shape, device, dim=dim), batched=True)
    covers("gradcheck with check_forward_ad=True")
    check_lse_second_derivative(function, device)
    covers("a second derivative through backward")


def _rows_apart(device, dtype) -> dict:
    """Rows near 1000 beside rows near 0: a shift by the whole tensor's maximum underflows."""
    x = torch.tensor([[1000.0, 999.0, 998.5], [0.5, -1.0, 0.0], [-1000.0, -999.5, -1001.0]],
                     dtype=dtype, device=device)
    return {"x": x, "dim": 1}


# float32 (the dtype any tensor op takes) and every layout come from the domain
LSE_DOMAIN = Domain(LSE, sampled(LSE, {"x": (3, 4)}, {"dim": 1}, scale=3.0),
                    constants={"dim": Constant(-2, 1, "dim a Python int, negative allowed",
                                               integer=True, also=(0,))},
                    rows_apart=Case(_rows_apart, "stable for |x| up to 1000, each slice on its "
                                    "own"))

EXERCISES = [
    Exercise("LogSumExp", "08_compile", lse_full,
             example=lambda: (3 * sample((3, 4), "cpu"), 1), domain=LSE_DOMAIN,
             clauses=LSE_CLAUSES, rules=LSE_RULES,
             contract=("a dim other than the last", "negative dim", "1-D x", "torch.func.jvp",
                       "torch.vmap with per-sample gradients",
                       "|x| = 1000: values, gradients and jvp",
                       "gradcheck with check_forward_ad=True",
                       "a second derivative through backward")),
]
