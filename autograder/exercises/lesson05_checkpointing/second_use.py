"""Lesson 05: what happens to a checkpoint's graph after forward: CheckpointFunction's
backward run twice on one graph (``retain_graph=True``) gives the same gradients each time
(leaves kept on ctx from the first run accumulate into the same .grad: the second run returns
twice the first), and, for both exercises, a tensor forward saved, changed in place before
backward, makes backward raise PyTorch's in-place error (an alias autograd's version counter
does not watch, such as ``t.data``, lets backward run on values forward never saw). Tiny
probes: a few small products."""

import torch

from ...checks import case
from ...errors import GradingError
from ...exercise import sample
from ...probes import reachable
from .checkpoint_blocks import WIDTH, fork_rng, graph_nodes, mlp_block, parameters_of

INPLACE = "modified by an inplace operation"


def _grads(leaves: dict, parameters: dict) -> dict:
    """Each leaf's and parameter's .grad, copied (a later backward may add into the same
    tensor), and reset to None for the next run."""
    grads = {}
    for key, tensor in {**leaves, **{f"parameter {n}": p for n, p in parameters.items()}}.items():
        grads[key] = None if tensor.grad is None else tensor.grad.detach().clone()
        tensor.grad = None
    return grads


def _compare_runs(name: str, first: dict, second: dict, situation: str) -> None:
    for tensor, one in first.items():
        two = second[tensor]
        if one is None or two is None or torch.allclose(one, two, rtol=1e-6, atol=1e-12):
            continue
        if torch.allclose(two, 2 * one, rtol=1e-6, atol=1e-12):
            raise GradingError(
                f"{name}'s gradient for {tensor} doubled when backward ran a second time on one "
                f"graph ({situation}): backward reused fresh leaves kept on ctx from its first "
                "run, whose .grad already held that run's gradient, and autograd added the new "
                "one to it; make new leaves (and recompute) in every backward, and keep on ctx "
                "only what forward put there",
                mistake=f"{name}/reuses-leaves-across-backwards")
        raise GradingError(
            f"{name}'s gradient for {tensor} changes when backward runs a second time on one graph "
            f"({situation}): backward changes state it reads between runs (an attribute of "
            "ctx, a list it pops); leave ctx as forward left it",
            mistake=f"{name}/backward-changes-state-it-reads")


def _activations_alive(tensor, skip: set) -> int:
    """Bytes the graph behind ``tensor`` still saves (not freed by a backward), its own storage
    and ``skip`` (the parameters' and inputs' storages) left out."""
    held = {}
    skip = skip | {tensor.untyped_storage().data_ptr()}
    for node in graph_nodes([tensor], limit=200):
        for attribute in (a for a in dir(node) if a.startswith("_saved_")):
            try:
                value = getattr(node, attribute)
            except RuntimeError:  # freed by a backward
                continue
            for saved in value if isinstance(value, (tuple, list)) else [value]:
                if isinstance(saved, torch.Tensor):
                    storage = saved.untyped_storage()
                    if storage.data_ptr() not in skip:
                        held[storage.data_ptr()] = storage.nbytes()
    return sum(held.values())


def _ctx_tensors(node) -> list:
    """(path, tensor) for each tensor ctx (the output's grad_fn, after a backward) holds,
    however wrapped."""
    try:
        attributes = dict(vars(node))
    except TypeError:
        return []
    return [(path, tensor) for attribute, value in attributes.items()
            for path, tensor in reachable(value, f"ctx.{attribute}")]


def _left_on_ctx(name: str, node, skip: set = frozenset(), *, made_by_backward: bool) -> None:
    """After a backward: does ctx (the output's grad_fn) hold a tensor of a recorded graph, or,
    with ``made_by_backward``, any tensor backward made (a fresh leaf, a gradient)? Forward may
    leave only random states (uint8 tensors) on it."""
    for path, tensor in _ctx_tensors(node):
        if not made_by_backward and tensor.grad_fn is not None:
            alive = _activations_alive(tensor, skip)
            what = (f"a tensor of the graph it rebuilt (its grad_fn: "
                    f"{type(tensor.grad_fn).__name__})")
            also = (f", and {alive} bytes of activations its graph saved and no backward "
                    "freed," if alive else "")
            question, mistake = "", "keeps-rebuilt-graph"
        elif made_by_backward and tensor.dtype != torch.uint8:
            what = ("a fresh leaf of the graph it rebuilt (it requires grad)"
                    if tensor.requires_grad else "a tensor it computed")
            grad = tensor.grad if tensor.requires_grad else None
            also = "" if grad is None else f", and its .grad's {grad.nbytes} bytes"
            question = ("; what does a second backward need that forward did not already "
                        "keep?")
            mistake = "keeps-backward-tensors"
        else:
            continue
        raise GradingError(
            f"{name}'s backward left {path} on ctx, {what}: its "
            f"{tensor.untyped_storage().nbytes()} bytes{also} stay in memory after backward, "
            f"for as long as the caller holds the output{question}",
            mistake=f"{name}/{mistake}")


def _twice(name: str, run, leaves: dict, parameters: dict, situation: str, node) -> None:
    """``run(retain)`` builds nothing: it backpropagates the one graph; twice, each run's
    gradients read alone. A second run that raises is left to the clause that allows it. On
    ``node`` (the output's grad_fn, its ctx; None reads as no ctx) nothing of a recorded graph
    is left after the first run, and nothing backward made after the second."""
    _grads(leaves, parameters)
    run(True)
    _left_on_ctx(name, node, {t.untyped_storage().data_ptr() for t in (
        *leaves.values(), *parameters.values())}, made_by_backward=False)
    first = _grads(leaves, parameters)
    try:
        run(False)
    except RuntimeError:  # refusing a second backward is allowed; other gradients are not
        _left_on_ctx(name, node, made_by_backward=True)
        return
    except Exception as error:  # noqa: BLE001  (the learner's backward broke on the rerun)
        raise GradingError(
            f"{name}'s backward raised {type(error).__name__} when it ran a second time on one "
            f"graph ({situation}), though the first run passed: the first backward changed "
            f"something the second reads ({(str(error).splitlines() or [''])[0]}); leave ctx "
            "as forward left it", str(error),
            mistake=f"{name}/backward-changes-state-it-reads") from error
    _compare_runs(name, first, _grads(leaves, parameters), situation)
    _left_on_ctx(name, node, made_by_backward=True)


def _check_inplace_refused(name: str, edited: str, run) -> None:
    """``run()`` backpropagates after ``edited``, a tensor forward saved, was changed in place:
    it must raise PyTorch's in-place error."""
    try:
        run()
    except RuntimeError as error:
        if INPLACE in str(error):
            return
        raise GradingError(
            f"{name}'s backward raised {type(error).__name__} after {edited} was changed in "
            f"place between forward and backward, not PyTorch's in-place error "
            f"('{INPLACE}'): {(str(error).splitlines() or [''])[0]}", str(error),
            mistake=f"{name}/saves-unversioned-alias") from error
    raise GradingError(
        f"{name}'s backward ran without error although {edited} was changed in place after "
        f"forward ({edited}.add_(1) between forward and backward), so it gave gradients of "
        "values forward never computed, silently: what forward saved is an alias autograd's "
        f"version counter does not watch (t.data?); the contract asks for PyTorch's in-place "
        "error here: which tensors does autograd's version counter watch?",
        mistake=f"{name}/saves-unversioned-alias")


def check_checkpoint_second_use(function, device, *, seed: int = 60) -> None:
    """CheckpointFunction: a dropout block's backward twice on one graph; then each kind of
    tensor argument (requiring grad, and not) changed in place before backward."""
    block = mlp_block(device, seed=seed, dropout=0.5)
    parameters = parameters_of(block)
    x = sample((3, WIDTH), device, seed=seed).requires_grad_()
    grad_output = sample((3, WIDTH), device, seed=seed + 1)
    situation = "loss.backward(retain_graph=True), then loss.backward()"
    with fork_rng(device), case(f"a dropout block, {situation}"):
        torch.manual_seed(seed)
        output = function.apply(block, x)
        _twice("CheckpointFunction", lambda retain: torch.autograd.backward(
            output, grad_output, retain_graph=retain), {"x": x}, parameters, situation,
            getattr(output, "grad_fn", None))

    def run_fn(a, b):
        return torch.tanh(a) * b + a

    for edited in ("a", "b"):
        leaf = sample((3, WIDTH), device, seed=seed + 2).requires_grad_()
        values = {"a": leaf * 1, "b": sample((3, WIDTH), device, seed=seed + 3)}
        with case(f"run_fn(a, b) = tanh(a) * b + a, a requiring grad, b not, {edited} changed "
                  "in place between forward and backward"):
            output = function.apply(run_fn, *values.values())
            with torch.no_grad():
                values[edited].add_(1)
            _check_inplace_refused(
                "CheckpointFunction", edited,
                lambda: torch.autograd.backward(output, torch.ones_like(output)))


def check_coupling_second_use(function, rebuild) -> None:
    """ReversibleCoupling: y1, and y2, changed in place before backward, ``rebuild()`` giving
    fresh values each time (backward run twice on one graph, and what it leaves on ctx, are
    the generic layer's: ``autograder.twice``, ``autograder.outside_ctx``)."""
    for k, edited in enumerate(("y1", "y2")):
        fresh = rebuild()
        x1, x2 = (fresh[n].detach().clone().requires_grad_() for n in ("x1", "x2"))
        grad_outputs = [sample(x1.shape, x1.device, seed=70 + j) for j in range(2)]
        with case(f"{edited} changed in place between forward and backward"):
            outputs = function.apply(x1, x2, fresh["f"], fresh["g"])
            with torch.no_grad():
                outputs[k].add_(1)
            _check_inplace_refused(
                "ReversibleCoupling", edited,
                lambda: torch.autograd.backward(list(outputs), grad_outputs))
