"""Lesson 05: two CheckpointFunction calls in one graph, each with dropout and arguments that
differ in number, kind and order: each call's random state and arguments are its own (kept on
ctx), proven by each call alone being right."""

from types import SimpleNamespace

import torch

from ...checks import case
from ...diagnose import diagnose_gradient
from ...errors import GradingError
from ...exercise import sample
from ...probes import reachable
from ...class_state import changed_attributes, check_class_state, class_state
from .checkpoint_backward import CHECKPOINT
from .checkpoint_blocks import WIDTH, clear_grads, fork_rng, mlp_block


def _two_calls(device, seed: int = 20, dropouts=(0.5, 0.5)):
    """Two checkpoints, each with dropout, whose arguments differ in number, kind and order:
    the first ``(flag, a, shift, keep)``, the second ``(h, scale, b)`` with ``h`` the first's
    output (on the CPU, when ``device`` is a GPU: the first call's CUDA random state then
    matters, the second's CPU one); ``dropouts`` are the two blocks' dropout rates (0: a
    block that draws no random numbers)."""
    other = torch.device("cpu")
    blocks = [mlp_block(d, seed=seed + 3 * k, dropout=p)
              for k, (d, p) in enumerate(zip((device, other), dropouts))]
    keep = sample((3, WIDTH), device, seed=seed + 7) > -0.5

    def run_first(flag, a, shift, keep):
        return (blocks[0](a) + shift) * keep if flag else blocks[0](a)

    def run_second(h, scale, b):
        return blocks[1](h.to(other)) * scale + b

    return ((run_first, (True, -1.5, keep)), (run_second, (0.7,)), blocks,
            sample((3, WIDTH), device, seed=seed + 8), sample((3, WIDTH), other, seed=seed + 9))


def _chain(apply, calls, a, b, grad_outputs, *, graphs: int = 1) -> list:
    """The two calls as training runs them, with random numbers drawn before, between and
    after them; with ``graphs=2`` the first is differentiated before the second runs (on its
    output detached). The gradients of a, b and of both blocks' parameters."""
    (run_first, (flag, shift, keep)), (run_second, (scale,)), blocks = calls
    leaves = [a.detach().requires_grad_(), b.detach().requires_grad_()]
    parameters = [p for block in blocks for p in block.parameters()]
    clear_grads(list(blocks))
    torch.manual_seed(3)
    torch.rand(17, device=a.device)
    h = apply(run_first, flag, leaves[0], shift, keep)
    if graphs == 2:
        torch.autograd.backward(h, grad_outputs[0])
        h = h.detach()
    torch.rand(5, device=a.device)
    output = apply(run_second, h, scale, leaves[1])
    torch.rand(100, device=a.device)
    torch.autograd.backward(output, grad_outputs[1])
    return [leaf.grad for leaf in leaves] + [p.grad for p in parameters]


def _check_class_state(function, before: dict) -> None:
    """check_class_state, whose advice for a random state (uint8 tensors only) set on the class
    is the lesson's: keep it on ctx, as the solution does, not save_for_backward."""
    try:
        check_class_state(SimpleNamespace(spec=CHECKPOINT), function, before, "forward")
    except GradingError as error:
        after = class_state(function)
        changed = changed_attributes(before, after)
        tensors = [t for _, t in reachable(after[changed[0]], "")] if changed else []
        if not tensors or any(t.dtype != torch.uint8 for t in tensors):
            raise
        owner, attribute = changed[0]
        raise GradingError(
            f"{error.hint.split(';')[0]}; a random state is bookkeeping: keep it on ctx "
            f"(ctx.{attribute} = ...), one per call", error.details,
            mistake=error.mistake) from error


def check_two_calls(function, device) -> None:
    """Two checkpoints in one graph, each drawing its own dropout mask, then only the first
    drawing (a flag "run_fn drew random numbers" shared by the calls is the second's, False, by
    the time the first call's backward runs)."""
    _check_pair(function, device, (0.5, 0.5), "")
    _check_pair(function, device, (0.5, 0.0), ", only the first drawing random numbers")


def _check_pair(function, device, dropouts, drawing: str) -> None:
    """Two checkpoints in one graph, with arguments of other kinds: each call's backward must
    restore its own random state and read its own arguments (state kept in a global or on the
    class is the second call's by the time the first call's backward runs). Each call
    differentiated alone comes first, so that a failure of the pair is proven to come from
    state the calls share."""
    first, second, blocks, a, b = _two_calls(device, dropouts=dropouts)
    calls = (first, second, blocks)
    generator = torch.Generator().manual_seed(4)
    grad_outputs = [torch.randn(3, WIDTH, generator=generator, dtype=torch.float64).to(d)
                    for d in (a.device, b.device)]
    names = ["a", "b"] + [f"parameter {which}.{name}" for which, block in
                          zip(("first", "second"), blocks) for name, _ in block.named_parameters()]
    described = ("run_fn(flag, a, shift, keep), then run_fn(h, scale, b) on its output"
                 + drawing)

    def compared(graphs: int) -> None:
        truth = _chain(lambda run_fn, *args: run_fn(*args), calls, a, b, grad_outputs,
                       graphs=graphs)
        got = _chain(function.apply, calls, a, b, grad_outputs, graphs=graphs)
        for name, grad, true in zip(names, got, truth):
            diagnose_gradient(name, grad, true)

    before = class_state(function)  # a class attribute forward sets is told apart below
    with fork_rng(device):
        with case(f"two checkpoints with dropout, each differentiated alone: {described}"):
            compared(graphs=2)
        try:
            compared(graphs=1)
        except NotImplementedError:
            raise
        except Exception as error:  # noqa: BLE001  (each call alone was right)
            _check_class_state(function, before)
            raise GradingError(
                "CheckpointFunction is right for each call alone but not for two calls in one "
                f"graph ({described}): the second call's forward changed what the first call's "
                f"backward reads ({str(error).splitlines()[0]}); keep the arguments, where each "
                "tensor sat among them and the random states on ctx, one per call, not on the "
                "class or in a global", str(error),
                mistake="CheckpointFunction/state-shared-between-calls") from error
