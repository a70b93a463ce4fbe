"""Lesson 05: CheckpointFunction used as training uses it, beyond one chain of calls: one run_fn
(a shared, weight-tied block) checkpointed twice in one graph, and two checkpoints whose
backwards run in the order of their forwards (two losses backpropagated one after the other).
State kept anywhere but on ctx (on run_fn, in a list on the class or in a global used as a
stack, a dict keyed by run_fn) is named from what one forward adds there, and its cause from
what a second forward on the same run_fn does there: overwrite the first call's entry, or add
its own (then the order the backwards take them in is the cause)."""

import inspect
from collections import deque

import torch

from ...checks import case
from ...diagnose import diagnose_gradient
from ...errors import GradingError
from ...exercise import sample
from .checkpoint_blocks import WIDTH, fork_rng, mlp_block

_CONTAINERS = (list, dict, set, deque)


def _contents(value):
    """A container's items as they are now (kept, so that identities stay meaningful)."""
    if isinstance(value, dict):
        return list(value.items())
    return list(value)


def _same(a, b) -> bool:
    return len(a) == len(b) and all(
        (x[0] is y[0] and x[1] is y[1]) if isinstance(x, tuple) and isinstance(y, tuple)
        and len(x) == 2 == len(y) else x is y for x, y in zip(a, b))


def _snapshot(function, run_fn) -> dict:
    """Where a call could keep state off ctx: the containers on the learner's classes and in
    the globals its forward reads, and run_fn's own attributes, each as it is now."""
    places = {}
    classes = [c for c in getattr(function, "__mro__", ())
               if c is not object and not c.__module__.startswith("torch")]
    for cls in classes:
        for key, value in vars(cls).items():
            if isinstance(value, _CONTAINERS):
                places[("class", f"{cls.__name__}.{key}")] = (value, _contents(value))
    forward = getattr(inspect.unwrap(getattr(function, "forward", None)), "__globals__", {})
    for key, value in list(forward.items()):
        if isinstance(value, _CONTAINERS) and not key.startswith("__") and key != "Out":
            places[("global", key)] = (value, _contents(value))
    for key, value in vars(run_fn).items():
        places[("run_fn", key)] = (value, None)
    return places


def state_off_ctx(function, run_fn, leaf) -> tuple | None:
    """Where one forward of ``function`` on ``run_fn`` kept state off ctx: ("run_fn", name,
    None, True) for an attribute it set on run_fn, ("class"/"global", name, container type,
    overwrote) for a container it changed, overwrote telling whether a second forward on the
    same run_fn left it no longer (it replaced the first call's entry); None where nothing
    changed."""
    before = _snapshot(function, run_fn)
    try:
        function.apply(run_fn, leaf)
    except Exception:  # noqa: BLE001  (only a diagnosis: the failure is already proven)
        return None
    for place, (value, contents) in _snapshot(function, run_fn).items():
        old = before.get(place)
        if place[0] == "run_fn":
            if old is None or old[0] is not value:
                return (*place, None, True)
        elif old is not None and old[0] is value and not _same(old[1], contents):
            try:
                function.apply(run_fn, leaf)
            except Exception:  # noqa: BLE001
                return (*place, type(value).__name__, False)
            return (*place, type(value).__name__, len(value) <= len(contents))
    return None


def _named(place, error: GradingError, situation: str, order: str):
    """The failure, named from where forward kept its state, or None where nothing was seen;
    its cause an overwritten entry, or else the order the backwards ran in (``order``)."""
    if place is None:
        return None
    kind, name, container, overwrote = place
    if kind == "run_fn":
        return GradingError(
            f"CheckpointFunction.forward keeps its state on run_fn (run_fn.{name}), not on ctx: "
            "with one run_fn checkpointed twice in one graph (a shared block, tied weights) the "
            "second call overwrites it, and the first call's backward reads the second's "
            f"({error.hint}); keep it on ctx (ctx.{name} = ...), one per call", error.details,
            mistake="CheckpointFunction/state-on-run-fn")
    where = (f"{name} (a {container} on the class)" if kind == "class"
             else f"the global {name} (a {container})")
    cause = ("the second forward overwrote the first call's entry there (both calls wrote to "
             "one place), so the first call's backward read the second call's state"
             if overwrote else f"{order}, so a call's backward took another call's entry")
    return GradingError(
        f"CheckpointFunction.forward keeps its state in {where}, not on ctx, for backward to "
        f"take back: with {situation} {cause} ({error.hint}); keep each call's state on ctx, "
        "where no other call can reach it", error.details,
        mistake="CheckpointFunction/state-in-shared-container")


def _tied(apply, block, x, grad_output) -> list:
    """The same block (dropout inside) applied twice in a row, one backward."""
    leaf = x.detach().requires_grad_()
    for parameter in block.parameters():
        parameter.grad = None
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
    for parameter in (p for block in blocks for p in block.parameters()):
        parameter.grad = None
    torch.manual_seed(6)
    outputs = [apply(block, leaf) for block in blocks]
    for output, grad_output in zip(outputs, grad_outputs):
        torch.autograd.backward(output, grad_output)
    return [leaf.grad] + [p.grad for block in blocks for p in block.parameters()]


def _compared(run, names, function, situation: str, order: str, run_fn, x) -> None:
    truth = run(lambda f, *args: f(*args))
    got = run(function.apply)
    try:
        for name, grad, true in zip(names, got, truth):
            diagnose_gradient(name, grad, true)
    except GradingError as error:
        named = _named(state_off_ctx(function, run_fn, x.detach().requires_grad_()), error,
                       situation, order)
        if named is not None:
            raise named from error
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
                  function, situation, "the second call's backward runs first, the reverse "
                  "of the forwards' order", tied, x)
    blocks = [mlp_block(device, seed=seed + 3 + 3 * k, dropout=0.5) for k in range(2)]
    situation = ("two checkpoints on one input, backpropagated in the order of their forwards "
                 "(two losses: first.backward(), then second.backward())")
    with fork_rng(device), case(f"{situation}, dropout inside each"):
        _compared(lambda apply: _in_forward_order(apply, blocks, x, grad_outputs),
                  ["x"] + [f"parameter {which}.{n}" for which, block in
                           zip(("first", "second"), blocks) for n, _ in block.named_parameters()],
                  function, situation, "the backwards run in the order of the forwards "
                  "(first loss first), not in reverse", blocks[0], x)
