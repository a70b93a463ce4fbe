"""Lesson 08: LogSumExp's probes that name a mistake before the cases report numbers: the
setup_context form, state set on the class, an output sharing x's memory, tensors kept as ctx
attributes (grad_output lined up along the wrong dim and dim guessed from shapes are
``reduced_dim``'s)."""

import inspect
from types import SimpleNamespace

import torch

from ...checks import case, run_forward
from ...class_state import check_class_state, class_state
from ...errors import GradingError
from ...function_contract import rule_reference
from ...outside_ctx import check_no_state_outside_ctx
from .lse_inputs import LSE, lse_values


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


def check_lse_ctx(function, values: dict) -> None:
    """No tensor kept as a ctx attribute: jvp's tensors go through save_for_forward."""
    inputs = {"x": values["x"].detach().clone().requires_grad_(), "dim": values["dim"]}
    forward = run_forward(function, LSE, inputs)
    if forward.ctx_tensor_attributes:
        raise GradingError(
            f"LogSumExp keeps a tensor as {forward.ctx_tensor_attributes[0]}: keep what jvp "
            "needs with ctx.save_for_forward and what backward needs with ctx.save_for_backward",
            mistake="LogSumExp/tensor-on-ctx")


def check_state_shared(function, device) -> None:
    """Probe, where a case got wrong numbers and no check named why: one fresh call, at a shape
    and dim no earlier check used, must leave no new or grown tensor or container outside ctx (a
    cache a later call reads back is how one call's weights end up in another's gradient)."""
    with case("one call, forward then backward, x of shape (2, 7), dim=1"):
        check_no_state_outside_ctx(function, "LogSumExp", lse_values((2, 7), device, seed=77))
