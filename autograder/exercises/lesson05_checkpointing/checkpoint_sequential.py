"""Lesson 05: checkpoint_sequential, graded on stacks of layers against the plain stack."""

import torch
from torch import nn

from ...checks import Spec, case
from ...contract import EACH_INPUT_ALONE, covers
from ...diagnose import diagnose_gradient, diagnose_values
from ...domain import RECOMPUTES_CLAUSE, Constant, Domain, Operator
from ...errors import GradingError
from ...exercise import Exercise, sample
from .checkpoint_blocks import (WIDTH, AnyDtype, Residual, ResidualSequential, ThroughBackward,
                                clear_grads, custom_nodes, fork_rng, graph_nodes, layer_stack,
                                parameters_of, reference, refuse_reentry)
from .sequential_probes import (_run_layers, check_given_layers_ran, check_hooked_layers,
                                check_identity_layers, check_layers_left_as_given,
                                check_on_data, check_random_layers, float_bounds_note, holding)
from .sequential_causes import check_runs_given_layers, first_layers_note
from .segment_calls import (_outside_checkpoints, _recording_calls, _spans,
                            check_outside_checkpoints, check_runs_in_order, check_runs_once,
                            runs_of)

SEQUENTIAL = "checkpoint_sequential"
# stacks graded with every number of segments besides the first 7 layers: the three float cuts
# of _float_bounds each go wrong at some k of one of them (15: k = 7, 9, 11, 13, 14; 26: k = 23, 26)
SWEPT = (15, 26)
REENTERED = ("backward through checkpoint_sequential re-entered a CheckpointFunction's own "
             "backward while it ran, without end (the cell would hang): CheckpointFunction's "
             "backward must backpropagate only the output it recomputed from fresh leaves "
             "(t.detach()), never its saved output or a tensor computed from one; its own "
             "self-check names what it keeps")


def _forward_classes(output: torch.Tensor) -> list:
    """The Function class of each custom node (checkpointed segment) in the output's graph."""
    return [getattr(node, "_forward_cls", None) for node in custom_nodes([output])]


def _reaches(output: torch.Tensor, x: torch.Tensor) -> bool:
    """Whether backward from the output can reach x: its graph holds x's AccumulateGrad node."""
    return any(getattr(node, "variable", None) is x for node in graph_nodes([output]))


def _segment_sizes(order: list[int]) -> list[int]:
    """The sizes of the segments backward recomputed, first segment first: backward recomputes
    them last to first, each one's layers in order, so a segment ends wherever the next index
    is not one more than the last."""
    return [len(run) for run in sorted(runs_of(order))]


def check_segment_sizes(where: str, n: int, segments: int, order: list[int]) -> None:
    """Exactly ``segments`` consecutive groups, every layer in one, the longest no longer than
    ceil(n / k) (a spread remainder; torch's split, n // k each and the remainder last, is
    longer); the last group may run without a checkpoint, as torch.utils.checkpoint's does, and
    is then not recomputed, but its length still counts."""
    sizes = _segment_sizes(order)
    prefix = sorted(set(order)) == list(range(sum(sizes)))  # the first layers, each once
    ceil = -(-n // segments)
    if prefix and (len(sizes) == segments and sum(sizes) == n or
                   len(sizes) == segments - 1 and sum(sizes) < n):
        longest = max(sizes + [n - sum(sizes)])
        if longest <= ceil:
            return
        raise GradingError(
            f"{where} made a segment of {longest} layers ({sizes} recomputed"
            f"{f', {n - sum(sizes)} run plainly' if sum(sizes) < n else ''}), where no segment "
            f"needs more than {ceil}: backward rebuilds one segment at a time, with all its "
            f"activations alive at once; which sizes of {segments} groups cover {n} layers with "
            f"none longer than {ceil}?",
            mistake="checkpoint_sequential/remainder-in-one-segment")
    recomputed = sorted(set(order))
    if (len(sizes) == segments - 1 and recomputed and recomputed[0] > 0
            and recomputed == list(range(recomputed[0], n))):
        raise GradingError(
            f"{where}: the first group ran without a checkpoint (backward recomputed layers "
            f"{recomputed[0]} to {n - 1}, never layers 0 to {recomputed[0] - 1}); only the last "
            "may: its activations are the first backward needs, while the first group's would "
            "be kept for the whole step", mistake="checkpoint_sequential/first-group-plain")
    by_ceil = [min(ceil, n - start) for start in range(0, n, ceil)]
    if note := float_bounds_note(n, segments, sizes=sizes):
        raise GradingError(f"{where} recomputed segments of {sizes} layers, not {segments} "
                           f"groups none longer than {ceil}: {note}",
                           mistake="checkpoint_sequential/float-bounds")
    why = (f"ceil(n / k) layers per segment ({ceil} here) makes {len(by_ceil)} segments, not "
           f"{segments}" if len(by_ceil) != segments and sizes in (by_ceil, by_ceil[:-1])
           else "the segments are not the ones asked for")
    raise GradingError(
        f"{where} recomputed segments of {sizes} layers: {why}; "
        + (f"{n} layers do not split evenly into {segments} segments: which {segments} "
           f"lengths add up to {n} with the longest as short as it can be?"
           if n % segments
           else f"how many layers does each of the {segments} segments get from {n}?"),
        mistake="checkpoint_sequential/uneven-segments")


def check_recomputation(where: str, calls: list[int]) -> None:
    """In backward each layer runs at most once (its segment's recomputation): a layer run
    several times means the recomputation ran different code than forward."""
    repeated = [i for i, n in enumerate(calls) if n > 1]
    if repeated:
        never = [i for i, n in enumerate(calls) if n == 0]
        raise GradingError(
            f"{where}: the recomputation ran different code than forward (in backward layer "
            f"{repeated[0]} ran {calls[repeated[0]]} times"
            f"{f' and layer {never[0]} never' if never else ''}): which layers does the function "
            "each segment hands to CheckpointFunction run when backward calls it, after your "
            "loop has finished?", mistake="checkpoint_sequential/recomputes-other-layers")


def check_all_recomputed(where: str, n: int, segments: int, checkpointed: int, order: list[int],
                         error: GradingError) -> None:
    """A wrong gradient where backward recomputed fewer layers than forward ran: named, unless
    the layers never recomputed are the last group run plainly (which torch's also does)."""
    never = [i for i in range(n) if i not in order]
    if not never or checkpointed == segments - 1 and never == list(range(never[0], n)):
        return
    what = ("none of them ran again in backward" if len(never) == n
            else f"layer{'s' if len(never) > 1 else ''} {_spans(never)} never ran again in "
            "backward")
    raise GradingError(
        f"{where}: forward ran all {n} layers, but {what}, so the gradient is wrong "
        f"({error.hint}): which layers does the function "
        "each segment hands to CheckpointFunction run when backward calls it, after your loop "
        "has finished (what do the loop's variables hold then)?", error.details,
        mistake="checkpoint_sequential/recomputes-fewer-layers") from error


def check_sequential(checkpoint_sequential, layers, segments: int, x_value: torch.Tensor) -> None:
    """Output and every gradient equal the plain stack; exactly ``segments`` checkpoints (or
    one fewer, when the last segment runs plainly as torch.utils.checkpoint's does)."""
    n = len(layers)
    where = f"checkpoint_sequential(layers, segments={segments}, x) with {n} layers"
    parameters = parameters_of(list(layers))
    expected, grad_output, truth, parameter_truth = reference(
        lambda x: _run_layers(layers, x), {"x": x_value}, {"x"}, parameters)
    clear_grads(list(layers))
    x = x_value.detach().clone().requires_grad_()
    given = list(layers) if isinstance(layers, list) else layers  # a fresh list on each call
    inner = [module for layer in layers if isinstance(layer, nn.Module)
             for module in layer.modules() if module is not layer]
    try:
        with _recording_calls(list(layers)) as forward_calls, \
                _recording_calls(inner) as inner_calls:
            output = checkpoint_sequential(given, segments, x)
    except (NotImplementedError, GradingError):
        raise
    except TypeError as error:  # its own message first: "'list' object is not callable"
        why = str(error).splitlines()[0] if str(error) else "TypeError"
        raise GradingError(f"calling {where} raised TypeError, {why}: " + (
            "layers may be a plain list of modules, which cannot be called, as well as an "
            "nn.Sequential" if "not callable" in why else "it should take (layers, segments, x)"),
            str(error), mistake="checkpoint_sequential/calls-a-list" * ("not callable" in why)
        ) from error
    except RuntimeError as error:
        raise GradingError(f"{where} raised RuntimeError: {str(error).splitlines()[0]}",
                           str(error)) from error
    if isinstance(layers, list) and (len(given) != n or any(
            a is not b for a, b in zip(given, layers))):
        raise GradingError(
            f"{where} changed the caller's list of layers: it held {n} layers, and after the "
            f"call it holds {len(given)}{'' if len(given) != n else ', in another order'}; "
            "the caller runs the same stack again (the next step, the next segment count), so "
            "it must find the list as it gave it",
            mistake="checkpoint_sequential/mutates-layers")
    check_given_layers_ran(where, layers, forward_calls, output, x, inner_calls)
    check_runs_once(where, n, forward_calls)
    check_runs_in_order(where, n, forward_calls)
    if isinstance(output, torch.Tensor) and output.shape == expected.shape and not torch.allclose(
            output.detach(), expected):
        for k in range(n):
            if torch.allclose(output.detach(), _run_layers(list(layers)[:k], x_value).detach()):
                if note := float_bounds_note(n, segments, ran=k):
                    raise GradingError(f"{where} ran only the first {k} layers: {note}",
                                       mistake="checkpoint_sequential/float-bounds")
                why, mistake = first_layers_note(checkpoint_sequential, layers, segments, k, x)
                raise GradingError(f"{where} ran only the first {k} layers: {why}",
                                   mistake=mistake)
    diagnose_values(f"{where}: the output", output, expected)
    classes = _forward_classes(output)
    if any(getattr(c, "__module__", "").startswith("torch.") for c in classes):
        raise GradingError(f"{where} checkpointed its segments with PyTorch's own Function "
                           "(torch.utils.checkpoint, use_reentrant=True): the exercise builds it "
                           "on your CheckpointFunction",
                           mistake="checkpoint_sequential/uses-torch-checkpoint")
    checkpointed = len(classes)
    if checkpointed and not _reaches(output, x):  # before the segment checks it would trip
        raise GradingError(
            f"{where}: the output's graph does not reach x, so x.grad stays None (backward "
            f"from the output goes through {checkpointed} checkpointed "
            f"segment{'s' if checkpointed > 1 else ''} of {segments}, then stops): a segment was "
            "fed a tensor cut from the graph before it",
            mistake="checkpoint_sequential/cuts-graph")
    order = None
    if checkpointed == 0:  # no Function node: no checkpoint, or torch's non-reentrant one
        order = _backward(where, output, grad_output, layers)
        if order:
            raise GradingError(
                f"{where} recomputed layers in backward with no Function node in the graph: "
                "that is PyTorch's non-reentrant checkpoint (torch.utils.checkpoint.checkpoint, "
                "use_reentrant=False), not yours; the exercise builds checkpoint_sequential on "
                "your CheckpointFunction",
                mistake="checkpoint_sequential/uses-torch-checkpoint-non-reentrant")
    if segments > 1 and checkpointed == 0:
        raise GradingError(f"{where} checkpointed nothing: no CheckpointFunction node is in "
                           "the output's graph, so no segment went through your checkpoint",
                           mistake="checkpoint_sequential/checkpoints-nothing")
    if checkpointed not in (segments - 1, segments):
        if checkpointed < segments - 1 and all(isinstance(layer, nn.Module) for layer in layers):
            try:
                recomputed = _backward(where, output, grad_output, layers)
            except GradingError:
                recomputed = None
            if recomputed is not None:
                check_outside_checkpoints(where, n, segments, checkpointed,
                                          _outside_checkpoints(forward_calls, recomputed))
        raise GradingError(f"{where} made {checkpointed} checkpointed segments: split the layers "
                           f"into exactly {segments} consecutive groups",
                           mistake="checkpoint_sequential/wrong-segment-count")
    if order is None:
        order = _backward(where, output, grad_output, layers)
    check_recomputation(where, [order.count(i) for i in range(n)])
    if all(isinstance(layer, nn.Module) for layer in layers):
        check_outside_checkpoints(where, n, segments, checkpointed,
                                  _outside_checkpoints(forward_calls, order))
        check_segment_sizes(where, n, segments, order)
    with case(f"{where}, x of shape {tuple(x_value.shape)}"):
        try:
            diagnose_gradient("x", x.grad, truth["x"])
        except GradingError as error:
            if all(isinstance(layer, nn.Module) for layer in layers):
                check_all_recomputed(where, n, segments, checkpointed, order, error)
            raise
    for name, parameter in parameters.items():
        if parameter.grad is None:
            raise GradingError(
                f"after {where} the parameters got no gradient: CheckpointFunction's backward "
                "must accumulate into their .grad (torch.autograd.backward, not "
                "torch.autograd.grad)")
        diagnose_gradient(f"parameter {name}", parameter.grad, parameter_truth[name])


def check_blocks(checkpoint_sequential, device) -> None:
    """An nn.Sequential of residual blocks, each a module with a Linear of its own: its layers
    are its children, the blocks. Flat stacks passed before this runs, so a failure here comes
    from how the answer finds the layers."""
    covers("layers made of layers (residual blocks)")
    stack = nn.Sequential(Residual(device, 40), ResidualSequential(device, 42),
                          Residual(device, 44), ResidualSequential(device, 46))
    try:
        check_sequential(checkpoint_sequential, stack, 2, sample((3, WIDTH), device, seed=10))
    except GradingError as error:
        if error.mistake:  # a cause already proved, as on flat stacks
            raise
        raise GradingError(
            f"{error.hint.splitlines()[0]}; the stack's 4 layers are residual blocks (x + "
            "tanh(linear(x)), each with a Linear of its own, two of them nn.Sequential "
            "subclasses with a forward of their own), and stacks of plain layers passed: which "
            "modules are the layers of an nn.Sequential, and which does your function run? "
            "(.modules() walks into each block, and flattening a block drops its skip)",
            error.details,
            mistake="checkpoint_sequential/walks-into-blocks") from error


def _backward(where: str, output, grad_output, layers) -> list[int]:
    """Backpropagate through the output, returning the index of each layer as backward ran it."""
    try:
        with _recording_calls(list(layers)) as order, refuse_reentry(custom_nodes([output]),
                                                                     REENTERED):
            output.backward(grad_output)
    except RuntimeError as error:
        raise GradingError(f"backward through {where} raised RuntimeError: "
                           f"{str(error).splitlines()[0]}", str(error)) from error
    return [i for i, _ in order]


def _must_be_callable(checkpoint_sequential) -> None:
    if not callable(checkpoint_sequential):
        raise GradingError(f"{SEQUENTIAL} must be a function, got "
                           f"{type(checkpoint_sequential).__name__}")


def sequential_full(checkpoint_sequential, device) -> None:
    _must_be_callable(checkpoint_sequential)
    checkpoint_sequential = holding(checkpoint_sequential)
    with fork_rng(torch.device(device)):
        check_runs_given_layers(checkpoint_sequential, device)
        layers = layer_stack(device, 7)
        for segments in range(1, len(layers) + 1):
            check_sequential(checkpoint_sequential, layers, segments,
                             sample((3, WIDTH), device, seed=segments))
        for n in SWEPT:  # every k: a float cut drops a layer or a group at some (n, k) only
            stack = layer_stack(device, n, seed=n)
            for segments in range(1, n + 1):
                check_sequential(checkpoint_sequential, stack, segments,
                                 sample((2, WIDTH), device, seed=segments))
        covers("every segment count from 1 to the number of layers")
        check_sequential(checkpoint_sequential, nn.Sequential(*layer_stack(device, 5, seed=3)), 2,
                         sample((2, 4, WIDTH), device, seed=9))
        covers("an nn.Sequential")
        # another stack as long as the first: its own layers must run, not the first one's
        check_sequential(checkpoint_sequential, layer_stack(device, 7, seed=11), 3,
                         sample((3, WIDTH), device, seed=12))
        check_on_data(checkpoint_sequential, device)
        check_layers_left_as_given(checkpoint_sequential, device)
        check_random_layers(checkpoint_sequential, device)
        check_blocks(checkpoint_sequential, device)
        check_identity_layers(checkpoint_sequential, device, check_sequential)
        check_hooked_layers(checkpoint_sequential, device, check_sequential)
    # x is the only tensor input, and check_sequential runs it alone requiring grad, through
    # .backward() as the contract asks (check_each_input_alone's autograd.grad under the FLOP
    # counter's module hooks would reject a correct CheckpointFunction built on autograd.grad)
    covers(EACH_INPUT_ALONE)


SPEC = Spec(SEQUENTIAL, ("layers", "segments", "x"), lambda layers, segments, x:
            _run_layers(layers, x))
N_LAYERS = 4  # in the generated checks: segments from 1 to 4


def _domain_values(device, dtype=torch.float64, seed: int = 0, segments: int = 2) -> dict:
    """Four layers of their own per seed, in any dtype, and x of shape (3, 5)."""
    layers = [AnyDtype(device, seed + 2 * i, activation) for i, activation in
              enumerate((torch.tanh, torch.sigmoid, nn.functional.softplus, torch.tanh))]
    return {"layers": layers, "segments": segments,
            "x": sample((3, WIDTH), device, seed=seed, dtype=dtype)}


def _through_backward(checkpoint_sequential) -> Operator:
    """Graded through .backward(), as checkpointing is used (checkpoint_blocks.ThroughBackward)."""
    _must_be_callable(checkpoint_sequential)
    operator = Operator(lambda layers, segments, x: ThroughBackward.apply(
        checkpoint_sequential, None, layers, segments, x), plain=checkpoint_sequential)
    operator.__name__ = SEQUENTIAL
    return operator


LATER_IN_LESSON = True  # after the lesson's other module's exercises
EXERCISES = [
    Exercise("checkpoint_sequential", "05_checkpointing", sequential_full,
             contract=("every segment count from 1 to the number of layers", "an nn.Sequential",
                       "layers made of layers (residual blocks)"),
             domain=Domain(SPEC, _domain_values, prepare=_through_backward,
                           second_backward_may_raise=True, by_hand=False,
                           by_hand_clause=RECOMPUTES_CLAUSE, constants={
                 "segments": Constant(1, N_LAYERS, "segments from 1 to the number of layers",
                                      integer=True)})),
]
