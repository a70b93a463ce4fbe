"""Lesson 05: CheckpointFunction used as training uses it, beyond one chain of calls: one run_fn
(a shared, weight-tied block) checkpointed twice in one graph, and two checkpoints whose
backwards run in the order of their forwards (two losses backpropagated one after the other).
State kept on run_fn is named from what one forward sets there; state kept in a container on
the class or in a global (a stack, a dict keyed by run_fn) by the generic layer's probes of
those places (``class_state``, ``outside_ctx``), run on the failing answer."""

import torch

from ...checks import case
from ...class_state import class_state
from ...diagnose import diagnose_gradient
from ...errors import GradingError
from ...exercise import sample
from ...outside_ctx import check_no_state_outside_ctx
from .checkpoint_blocks import WIDTH, clear_grads, fork_rng, mlp_block
from .checkpoint_calls import _check_class_state


def _set_on_run_fn(function, run_fn, leaf) -> str | None:
    """The attribute one forward of ``function`` set on ``run_fn`` (new, or bound to another
    object), if any."""
    before = dict(vars(run_fn))
    try:
        function.apply(run_fn, leaf)
    except Exception:  # noqa: BLE001  (only a diagnosis: the failure is already proven)
        return None
    return next((key for key, value in vars(run_fn).items()
                 if key not in before or before[key] is not value), None)


def _name_state_off_ctx(function, run_fn, x, error: GradingError) -> None:
    """Raise where the failing answer kept its state off ctx, as far as one more call shows:
    on run_fn, on the class (a container forward fills) or in a module global."""
    name = _set_on_run_fn(function, run_fn, x.detach().requires_grad_())
    if name is not None:
        raise GradingError(
            f"CheckpointFunction.forward keeps its state on run_fn (run_fn.{name}), not on ctx: "
            "with one run_fn checkpointed twice in one graph (a shared block, tied weights) the "
            "second call overwrites it, and the first call's backward reads the second's "
            f"({error.hint}); keep it on ctx (ctx.{name} = ...), one per call", error.details,
            mistake="CheckpointFunction/state-on-run-fn") from error
    before = class_state(function)
    try:
        function.apply(run_fn, x.detach().requires_grad_())
    except Exception:  # noqa: BLE001  (only a diagnosis)
        return
    _check_class_state(function, before)
    check_no_state_outside_ctx(function, "CheckpointFunction", {"run_fn": run_fn, "x": x})


def _tied(apply, block, x, grad_output) -> list:
    """The same block (dropout inside) applied twice in a row, one backward."""
    leaf = x.detach().requires_grad_()
    clear_grads(block)
    torch.manual_seed(5)
    torch.rand(3, device=x.device)
    h = apply(block, leaf)
    torch.rand(2, device=x.device)
    h = apply(block, h)
    torch.rand(7, device=x.device)
    torch.autograd.backward(h, grad_output)
    return [leaf.grad] + [p.grad for p in block.parameters()]


def _in_forward_order(apply, blocks, x, grad_outputs) -> list:
    """Two blocks on one input, each output its own loss, backpropagated first to last."""
    leaf = x.detach().requires_grad_()
    clear_grads(blocks)
    torch.manual_seed(6)
    outputs = [apply(block, leaf) for block in blocks]
    for output, grad_output in zip(outputs, grad_outputs):
        torch.autograd.backward(output, grad_output)
    return [leaf.grad] + [p.grad for block in blocks for p in block.parameters()]


def _compared(run, names, function, situation: str, run_fn, x) -> None:
    truth = run(lambda f, *args: f(*args))
    got = run(function.apply)
    try:
        for name, grad, true in zip(names, got, truth):
            diagnose_gradient(name, grad, true)
    except GradingError as error:
        _name_state_off_ctx(function, run_fn, x, error)
        raise GradingError(
            f"CheckpointFunction is right for one call but not with {situation} "
            f"({error.hint}): one call read state another call left; keep the arguments and "
            "the random states on ctx, one per call, not on run_fn, on the class or in a global",
            error.details, mistake="CheckpointFunction/state-shared-between-calls") from error


def check_reuse(function, device, *, seed: int = 40) -> None:
    """One dropout block checkpointed twice in one graph; two checkpoints backpropagated in the
    order of their forwards. Each a few small matrix products."""
    x = sample((3, WIDTH), device, seed=seed)
    generator = torch.Generator().manual_seed(seed)
    grad_outputs = [torch.randn(3, WIDTH, generator=generator, dtype=torch.float64).to(device)
                    for _ in range(2)]
    tied = mlp_block(device, seed=seed + 1, dropout=0.5)
    situation = "the same run_fn checkpointed twice in one graph (h = apply(block, x); " \
                "apply(block, h))"
    with fork_rng(device), case(f"{situation}, dropout inside the block"):
        _compared(lambda apply: _tied(apply, tied, x, grad_outputs[0]),
                  ["x"] + [f"parameter {n}" for n, _ in tied.named_parameters()],
                  function, situation, tied, x)
    blocks = [mlp_block(device, seed=seed + 3 + 3 * k, dropout=0.5) for k in range(2)]
    situation = ("two checkpoints on one input, backpropagated in the order of their forwards "
                 "(two losses: first.backward(), then second.backward())")
    with fork_rng(device), case(f"{situation}, dropout inside each"):
        _compared(lambda apply: _in_forward_order(apply, blocks, x, grad_outputs),
                  ["x"] + [f"parameter {which}.{n}" for which, block in
                           zip(("first", "second"), blocks) for n, _ in block.named_parameters()],
                  function, situation, blocks[0], x)
