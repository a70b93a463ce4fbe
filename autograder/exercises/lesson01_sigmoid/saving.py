"""Lesson 01: what forward saves and whether it leaves x untouched, judged on every call a
battery makes (``watch.Watch``: each exercise's judge below) and by the probes that set up the
calls the sizes and dtypes do not: x not a leaf, x needing no gradient, grad disabled."""

from types import SimpleNamespace

import torch

from ...checks import Spec, make_inputs, run_backward, run_forward
from ...errors import GradingError
from ...exercise import sample
from ...saved_output import check_output_itself
from .saved_copies import copy_of_output, derivative_of_output
from .watch import Call, Watch

# ops that compute an exponential (sigmoid and tanh among them): a backward that runs one
# recomputes what forward already did
EXPONENTIALS = frozenset({"exp", "exp2", "expm1", "sigmoid", "tanh", "softplus", "log_sigmoid",
                          "log_sigmoid_forward", "logsigmoid"})
# PyTorch's own sigmoid, as forward's ops show it: torch.sigmoid, Tensor.sigmoid,
# torch.special.expit and nn.Sigmoid run aten.sigmoid; F.logsigmoid runs log_sigmoid_forward;
# F.glu and F.silu run the sigmoid kernel inside their own (glu([1, x]) is sigmoid(x) bit for bit)
BUILTIN_SIGMOID = frozenset({"sigmoid", "sigmoid_", "log_sigmoid", "log_sigmoid_forward",
                             "glu", "silu", "silu_"})
# what a backward trace is where none was run: no ops, so nothing is said about them
NO_BACKWARD = SimpleNamespace(ops=())


def check_saves_only_output(spec: Spec, forward, backward=None) -> None:
    """Sigmoid's derivative is y * (1 - y): the output is all backward needs. ``backward``: its
    trace, which says whether backward computed an exponential again (only then is it said)."""
    if (roles := [saved.role for saved in forward.saved]) == ["output"]:
        check_output_itself(spec.name, forward)
        return
    again = backward is not None and any(op in EXPONENTIALS for op in backward.ops)
    if any(role.startswith("input") for role in roles):
        if "output" in roles:
            said = (f"{spec.name} saved its input x as well as its output y: backward needs "
                    "only y, since step 2 of the maths writes the derivative without x")
            said += ("; and your backward computes an exponential again, which y makes "
                     "unnecessary" if again else ": what does x add that y does not give?")
        elif again or backward is None:
            said = (f"{spec.name} saved its input x: its backward then computes an exponential "
                    "again, where step 2 of the maths writes the derivative without x")
        else:
            said = (f"{spec.name} saved its input x: step 2 of the maths writes the derivative "
                    "without x; which tensor does it read, and which of the two does the next "
                    "layer keep anyway?")
        raise GradingError(said, mistake=f"{spec.name}/saves-input")
    if not roles:
        raise GradingError(f"{spec.name} saved nothing with ctx.save_for_backward: which "
                           "tensor does your backward read, and where did forward keep it?",
                           mistake=f"{spec.name}/saves-nothing")
    if len(forward.saved) == 1 and (copy := copy_of_output(forward.saved[0],
                                                          getattr(forward, "output", None))):
        raise GradingError(f"{spec.name} saved {copy}, not y itself: step 2's derivative reads "
                           "y, and the very tensor forward returns costs no new memory where "
                           "the next layer keeps it; what does the copy add?",
                           mistake=f"{spec.name}/saves-more-than-output")
    if len(forward.saved) == 1 and (derivative := derivative_of_output(
            forward.saved[0], getattr(forward, "output", None), lambda y: y * (1 - y),
            "y * (1 - y)")):
        raise GradingError(f"{spec.name} saved {derivative}, where y alone costs no new "
                           "memory when the next layer keeps it, and backward makes the "
                           "derivative from y in one line; what does saving it save?",
                           mistake=f"{spec.name}/saves-more-than-output")
    raise GradingError(f"{spec.name} saved {len(roles)} tensor{'' if len(roles) == 1 else 's'} "
                       f"({', '.join(roles)}): step 2's derivative reads one tensor; which one, and "
                       "what does anything more you save cost?",
                       mistake=f"{spec.name}/saves-more-than-output")


def sigmoid_watch(spec: Spec) -> Watch:
    """MySigmoid's calls: forward saves only y, and is the learner's formula, not PyTorch's."""
    def judge(call: Call) -> None:
        if builtin := sorted(BUILTIN_SIGMOID.intersection(call.ops)):
            raise GradingError(
                f"{spec.name}.forward runs PyTorch's own sigmoid (aten.{builtin[0]}; "
                "torch.sigmoid, torch.special.expit and nn.Sigmoid run aten.sigmoid, "
                "F.logsigmoid runs log_sigmoid_forward, F.glu and F.silu run the sigmoid "
                "kernel inside theirs): the contract's forward is a formula of "
                "your own, one whose exponentials you have bounded yourself",
                mistake=f"{spec.name}/builtin-forward")
        if call.saved is not None:
            check_saves_only_output(spec, SimpleNamespace(saved=call.saved, output=call.output),
                                    NO_BACKWARD)
    return Watch(spec, judge, ops=True)


def softplus_watch(spec: Spec, check_saved) -> Watch:
    """Softplus's calls: forward saves only y (``check_saved``, the battery's own check)."""
    def judge(call: Call) -> None:
        if call.saved is not None:
            check_saved(SimpleNamespace(saved=call.saved, output=call.output))
    return Watch(spec, judge)


def _kept(saved) -> str:
    """One saved tensor in words: 'its input x', 'its output y', 'a float32 tensor of its own'."""
    if saved.role.startswith("input"):
        return "its input x"
    if saved.role == "output":
        return "its output y"
    return f"a {str(saved.dtype).removeprefix('torch.')} tensor of its own"


def _per_element(nbytes: int, elements: int) -> str:
    """Bytes an element of x in words: '8 bytes', '1 byte', 'one bit (1/8 byte)' for bits
    packed eight to a byte (the last byte padded)."""
    elements = max(elements, 1)
    if nbytes % elements == 0:
        each = nbytes // elements
        return f"{each} byte{'' if each == 1 else 's'}"
    if nbytes == -(-elements // 8):
        return "one bit (1/8 byte)"
    return f"{nbytes / elements:.2g} byte{'' if nbytes < elements else 's'}"


def _cost(saved, elements: int | None = None) -> str:
    """What one saved tensor costs in a network, in words: bytes an element of x (``elements``,
    x's size; the saved tensor's own where unknown), new or not."""
    size = torch.empty((), dtype=saved.dtype).element_size()
    each = (f"{_per_element(saved.nbytes, elements)} an element" if elements
            else f"{size} byte{'' if size == 1 else 's'} an element")
    if saved.role.startswith("input"):
        return f"{each}, new wherever nothing else keeps x (after a linear layer, nothing does)"
    if saved.role == "output":
        return f"{each}, new only where nothing else keeps y"
    return f"{each}, all of it new"


def judge_mask_or_output(saved: list, output=None) -> None:
    """The contract: forward saves one tensor adding at most one byte an element of new memory
    where a linear layer follows. Graded: the output y itself (free where the next layer keeps
    y anyway), or a tensor of its own of at most one byte an element of x (a bool, uint8 or
    int8 mask; bits packed 8 to a byte); not x, not a copy, not a float mask, not an alias of
    y (``output``: what forward returned). A failure says what was saved and what it costs,
    and asks."""
    if len(saved) == 1 and saved[0].role == "output":
        check_output_itself("MyReLU", SimpleNamespace(saved=saved, output=output))
        return
    elements = output.numel() if isinstance(output, torch.Tensor) else None
    if (len(saved) == 1 and saved[0].role == "intermediate" and elements is not None
            and saved[0].nbytes <= max(elements, 1)):
        return
    cost = lambda s: _cost(s, elements)  # noqa: E731 - what each saved tensor costs, in words
    if not saved:
        said = ("MyReLU saved nothing: what does backward need to know about x, and which "
                "tensor can carry it?")
    elif len(saved) > 1:
        said = (f"MyReLU saved {len(saved)} tensors, {' and '.join(map(_kept, saved))} "
                f"({'; '.join(map(cost, saved))}): backward needs to know one thing about x; "
                "which one tensor tells it, for at most one byte an element of new memory?")
    elif copy := copy_of_output(saved[0], output):
        said = (f"MyReLU saved {copy}, where the contract allows at most one byte an element "
                "of new memory: y itself costs none where the next layer keeps it, and a mask "
                "one byte an element; which does backward need?")
    else:
        said = (f"MyReLU saved {_kept(saved[0])} ({cost(saved[0])}): the contract allows at "
                "most one byte an element of new memory: what does backward need to know about "
                "each entry of x, and which tensor carries that for less?")
    raise GradingError(said, mistake="MyReLU/saves-not-mask-or-output")


def relu_watch(spec: Spec) -> Watch:
    """MyReLU's calls: one tensor saved, the output or one of at most a byte an element."""
    def judge(call: Call) -> None:
        if call.saved is not None:
            judge_mask_or_output(call.saved, call.output)
    return Watch(spec, judge)


def check_saves_mask_or_output(function, spec: Spec, device) -> None:
    """What MyReLU saves on a small float64 leaf x."""
    inputs = make_inputs({"x": sample((3, 4), device, seed=5, away_from_zero=0.1)})
    forward = run_forward(function, spec, inputs)
    judge_mask_or_output(forward.saved, forward.output)


# (the state in words, x a leaf, x requiring grad, grad enabled)
STATES = (("x is not a leaf (the output of an earlier op, as in a network)", False, True, True),
          ("x needs no gradient (requires_grad=False: a data tensor, a frozen feature)",
           True, False, True),
          ("grad is disabled (torch.no_grad(): inference)", True, True, False))


def check_input_untouched(function, spec: Spec, *values: dict) -> None:
    """Forward leaves x as it was however it is called: on an x that is not a leaf, on one that
    needs no gradient, and under torch.no_grad(), for each of ``values`` (a small x and one
    of 8192 entries, say: a forward that writes into x only past some size is caught too). A
    forward that works in x's memory only where nothing differentiates it passes every call
    made on leaves that need a gradient. A call that raises is left to the battery."""
    for each in values:
        rest = list(each.values())[1:]
        for state, leaf, requires_grad, grad_enabled in STATES:
            x = each["x"].detach().clone().requires_grad_(requires_grad)
            x = x if leaf else x * 1.0
            before, version = x.detach().clone(), x._version
            try:
                with torch.set_grad_enabled(grad_enabled):
                    function.apply(x, *rest)
            except Exception:  # noqa: BLE001 - the battery reports it
                return
            if x._version != version or not torch.equal(x.detach(), before):
                raise GradingError(
                    f"{spec.name}.forward modified its input x in place: inputs must stay "
                    f"untouched, leaf or not, needing a gradient or not (here {state}, x of "
                    f"{x.numel()} entries, {str(x.dtype).removeprefix('torch.')})",
                    mistake=f"{spec.name}/writes-input")


HUGE = (256, 512)  # 2^17 entries: the largest call, as the contracts state (each costs grading time)


def check_huge_call(function, spec: Spec, values: dict) -> None:
    """One call of ``values`` (x of 2^17 entries) on a leaf that needs a gradient, forward and
    backward, for the watch to judge (what forward saves, grad_output untouched), then
    ``check_input_untouched`` on it: x not a leaf, needing no gradient, grad disabled. An error
    here is named as any call's is (a backward that runs out of memory, a Jacobian built as a
    matrix, by rule 3), never passed over."""
    inputs = make_inputs(values)
    forward = run_forward(function, spec, inputs)
    if isinstance(forward.output, torch.Tensor):  # anything else: named by the battery
        run_backward(spec, forward.output, inputs, torch.ones_like(forward.output))
    check_input_untouched(function, spec, values)
