"""What a Function is given stays as it was given, on every call a battery makes.

The batteries look at grad_output and at the inputs on the calls they choose; a Function that
writes into them only on some calls (a large tensor, float32, an input that needs no gradient,
the second call) slipped past them. While an exercise runs, ``calls_watched`` puts wrappers in
front of the learner's forward, setup_context and backward that compare version counters
(bumped by every in-place op on a tensor or a view of it, and reading them costs no op or
allocation a probe could count) before and after each call:

- forward must leave its tensor inputs unchanged, except one it returns (``mark_dirty``'s
  in-place contract);
- backward must leave grad_output unchanged, and the forward's inputs too;
- forward returns no tensor input itself unless it marked it dirty, nor a view of one: the
  caller's output would share that input's memory, where the op returns a new tensor (rule 1);
- neither sets a Python attribute on a tensor it was given or returns (``x.calls = 1``,
  ``grad_output.seen = True``): state kept on a tensor outlives the call, where rule 4 wants it
  on ``ctx``; the tensors' ``__dict__`` are compared, key by key.

The first write seen is held to the end of the battery and raised then, or instead of a later
failure the battery does not name (the write's consequence) or, for a write into grad_output
or an input, names but not as a write (a probe that read the written values names a symptom);
an error the learner's forward or backward raises is marked with its call's inputs."""

import functools
import inspect
import weakref
from contextlib import contextmanager
from contextvars import ContextVar

import torch

from .errors import GradingError
from .explain import called_with
from .function_contract import rule_reference
from .mistakes import write_first


class _Watch:
    """One exercise's run: the first write seen, and each ctx's inputs (held weakly)."""

    def __init__(self, name: str, may_return_input: bool):
        self.name = name
        self.may_return_input = may_return_input  # the op's own value is an input (identity)
        self.found: GradingError | None = None
        self.inputs: dict = {}  # weakref(ctx) -> [(input name, weakref(tensor))]
        self.calls: dict = {}  # weakref(ctx) -> its forward's inputs described, for an error

    def note(self, hint: str, mistake: str) -> None:
        if self.found is None:
            self.found = GradingError(hint, mistake=f"{self.name}/{mistake}")

    def remember(self, ctx, named: list, call: dict) -> None:
        try:
            key = weakref.ref(ctx, self._forget)
        except TypeError:  # a stand-in ctx of a probe's direct forward call
            return
        self.inputs[key] = [(name, weakref.ref(t)) for name, t in named]
        self.calls[key] = [(name, value if value is None or isinstance(value, _PLAIN)
                            else _UNSAID) for name, value in call.items()]  # nothing repr'd

    def call_of(self, ctx) -> dict:
        """The inputs of ``ctx``'s forward, as far as they are known: its tensors (alive with
        ctx) and its plain numbers, flags and names."""
        tensors = dict(self.inputs_of(ctx))
        return {name: tensors.get(name, value) for name, value in self.calls.get(_key(ctx), [])
                if name in tensors or value is not _UNSAID}

    def _forget(self, key) -> None:
        self.inputs.pop(key, None)
        self.calls.pop(key, None)

    def inputs_of(self, ctx) -> list:
        return [(name, t) for name, ref in self.inputs.get(_key(ctx), [])
                if (t := ref()) is not None]


_PLAIN = (bool, int, float, str, torch.dtype)  # what a call's description quotes as it is
_UNSAID = object()  # a tensor (held weakly, by name) or a value not quoted


def _key(ctx):  # ctx's key in a watch's tables; None for a stand-in ctx (no weak reference)
    try:
        return weakref.ref(ctx)
    except TypeError:
        return None


_active: ContextVar[_Watch | None] = ContextVar("calls_watched", default=None)
# what a check says of the calls it makes ("every floating input all ones"), quoted by a note
_calls_described: ContextVar[str] = ContextVar("calls_described", default="")


@contextmanager
def calls_described(words: str):
    """Inside the block, a note of forward's returned input quotes ``words`` as its call."""
    token = _calls_described.set(words)
    try:
        yield
    finally:
        _calls_described.reset(token)


def _version(tensor: torch.Tensor) -> int | None:
    """The version counter, where the tensor has one (not a functorch wrapper's)."""
    try:
        return tensor._version
    except (RuntimeError, NotImplementedError):
        return None


def _described(tensor: torch.Tensor, *, an_input: bool = True) -> str:
    said = [f"of shape {tuple(tensor.shape)}", str(tensor.dtype).removeprefix("torch.")]
    if not tensor.is_contiguous():
        said.append("not contiguous")
    if an_input and tensor.is_leaf and not tensor.requires_grad:
        said.append("needing no gradient")
    return ", ".join(said)


def _versions(named: list) -> list:
    return [(name, t, _version(t)) for name, t in named]


def _written(before: list) -> list:
    return [(name, t) for name, t, version in before
            if version is not None and _version(t) != version]


def _attributes(named: list) -> list:
    """(name, tensor, its Python attributes by identity) for each tensor."""
    return [(name, t, _own_attributes(t)) for name, t in named]


def _own_attributes(tensor: torch.Tensor) -> dict:
    """A plain tensor's Python attributes (its ``__dict__``), by identity; torch's own
    (dynamo's marks) left out. A tensor subclass (a probe's stand-in device) keeps what it
    wraps there, its own business."""
    if type(tensor) not in (torch.Tensor, torch.nn.Parameter):
        return {}
    try:
        found = vars(tensor)
    except TypeError:
        return {}
    return {key: id(value) for key, value in list(found.items())
            if not key.startswith(_TORCH_ATTRIBUTES)}


_TORCH_ATTRIBUTES = ("_dynamo", "_torchdynamo")


def _attribute_set(before: list) -> tuple[str, str] | None:
    """(tensor name, attribute) of the first attribute added or rebound since ``before``."""
    for name, tensor, was in before:
        now = _own_attributes(tensor)
        for key, identity in now.items():
            if was.get(key) != identity:
                return name, key
    return None


def _note_attribute(watch, function: type, phase: str, found, role: str) -> None:
    """Rule 4: state kept as an attribute of a tensor ``phase`` was given or returned."""
    if found is None:
        return
    name, key = found
    where = (f"{name}.{key} on {role} {name}" if role == "its input"
             else f"the attribute {key} on {role}")
    watch.note(f"{function.__name__}.{phase} set {where}: keep state on ctx, not on a "
               "tensor, where it outlives the call and every later call given that tensor sees "
               f"it (not even a flag or a call counter) {rule_reference('ctx')}",
               "state-on-tensor")


def _watching() -> _Watch | None:
    watch = _active.get()
    return None if watch is None or torch.compiler.is_compiling() else watch


def _input_names(function: type) -> list[str]:
    """forward's parameter names, ctx left out."""
    try:
        names = list(inspect.signature(function.forward).parameters)
    except (TypeError, ValueError):
        return []
    return names if _defines(function, "setup_context") else names[1:]


def _tensors(names: list[str], args: tuple) -> list:
    return [(names[i] if i < len(names) else f"argument {i}", a)
            for i, a in enumerate(args) if isinstance(a, torch.Tensor)]


def _forward(function: type, forward):
    names, with_ctx = _input_names(function), not _defines(function, "setup_context")

    @functools.wraps(forward)
    def watched(*args, **kwargs):
        watch = _watching()
        if watch is None:
            return forward(*args, **kwargs)
        ctx, inputs = (args[0], args[1:]) if with_ctx else (None, args)
        named, call = _tensors(names, inputs), {**dict(zip(names, inputs)), **kwargs}
        before, attributes = _versions(named), _attributes(named)
        try:
            output = forward(*args, **kwargs)
        except Exception as error:  # the learner's own, said with the call's inputs
            raise called_with(error, "forward", call)
        returned = output if isinstance(output, tuple) else (output,)
        _note_attribute(watch, function, "forward", _attribute_set(attributes), "its input")
        _note_attribute(watch, function, "forward", _attribute_set(
            [("output", t, {}) for t in returned if isinstance(t, torch.Tensor)
             and not any(t is given for _, given in named)]), "its output")
        for name, tensor in _written(before):
            if not any(tensor is out for out in returned):
                watch.note(f"{function.__name__}.forward modified its input {name} in place on "
                           f"one of the grader's calls ({name} {_described(tensor)}): inputs must "
                           "come back unchanged on every call, whether they need a gradient "
                           "or not; compute a new tensor instead "
                           f"{rule_reference('unwritten')}", "writes-input")
        if ctx is not None:
            _note_returned_input(watch, function, named, returned, ctx)
            watch.remember(ctx, named, call)
        return output

    return watched


# Exercises whose op may return its input as it came, where a Function returning it is the op:
# an identity forward (autograd's view of x is x.view_as(x)), a checkpoint of a function that
# returns its input
OP_MAY_RETURN_INPUT = frozenset({"GradientReversal", "ClipGradientNorm", "CheckpointFunction",
                                 "checkpoint_sequential"})


def _note_returned_input(watch, function: type, named: list, returned: tuple, ctx) -> None:
    """Rule 1: forward returned one of its tensor inputs itself, not marked dirty (lesson 07's
    in-place contract), or a view of one (x.view_as(x), x.unsqueeze(0), x[...]). Either way the
    caller's output shares that input's memory, where the op returns a new tensor."""
    if watch.name in OP_MAY_RETURN_INPUT or watch.may_return_input:
        return
    dirty = getattr(ctx, "dirty_tensors", None) or ()
    for name, tensor in named:
        if any(tensor is marked for marked in dirty):
            continue
        call = f"{name} {_described(tensor)}" + (f"; {said}" if (said := _calls_described.get())
                                                 else "")
        if any(tensor is out for out in returned):
            watch.note(f"{function.__name__}.forward returned its input {name} itself on one of "
                       f"the grader's calls ({call}): autograd then hands "
                       f"the caller a view of {name}, sharing its memory, where the op returns a "
                       "new tensor "
                       f"{rule_reference('values')}", "returns-input")
            return
        if any(isinstance(out, torch.Tensor) and shares_memory(out, tensor) for out in returned):
            watch.note(f"{function.__name__}.forward returned a view of its input {name} on one "
                       f"of the grader's calls ({call}): a view "
                       f"({name}.view_as({name}), a reshape, an unsqueeze, an index) shares "
                       f"{name}'s memory, so a write into the caller's output changes {name}, "
                       "where the op returns a new tensor whatever the arguments "
                       f"{rule_reference('values')}", "returns-input-view")
            return


def shares_memory(one: torch.Tensor, other: torch.Tensor) -> bool:
    """``one`` and ``other`` are views of the same memory (neither empty)."""
    if one.device != other.device:
        return False
    try:
        storage = one.untyped_storage()
        return (storage.nbytes() > 0 and storage.data_ptr() != 0
                and storage.data_ptr() == other.untyped_storage().data_ptr())
    except (RuntimeError, NotImplementedError, TypeError):  # no storage: a functorch wrapper
        return False


def _setup_context(function: type, setup_context):
    names = _input_names(function)

    @functools.wraps(setup_context)
    def watched(ctx, inputs, output):
        result = setup_context(ctx, inputs, output)
        if (watch := _watching()) is not None:
            named = _tensors(names, tuple(inputs))
            _note_returned_input(watch, function, named,
                                 output if isinstance(output, tuple) else (output,), ctx)
            watch.remember(ctx, named, dict(zip(names, inputs)))
        return result

    return watched


def _backward(function: type, backward):
    @functools.wraps(backward)
    def watched(ctx, *grad_outputs):
        watch = _watching()
        if watch is None:
            return backward(ctx, *grad_outputs)
        one = len(grad_outputs) == 1
        before = _versions([("grad_output" if one else f"grad_output {i}", g)
                            for i, g in enumerate(grad_outputs) if isinstance(g, torch.Tensor)])
        inputs_before = _versions(watch.inputs_of(ctx))
        attributes = _attributes([(name, t) for name, t, _ in before + inputs_before])
        try:
            result = backward(ctx, *grad_outputs)
        except Exception as error:
            raise called_with(error, "backward", watch.call_of(ctx))
        found = _attribute_set(attributes)
        _note_attribute(watch, function, "backward", found, "its input" if found and any(
            found[0] == name for name, _, _ in inputs_before) else "grad_output")
        for which, tensor in _written(before):
            described = _described(tensor, an_input=False)
            watch.note(f"{function.__name__}.backward modified {which} in place on one of the "
                       f"grader's calls ({which} {described}): grad_output is the caller's tensor "
                       "and must come back unchanged on every call, whatever its size, dtype or "
                       "layout and whichever inputs need a gradient; compute a new tensor "
                       f"instead {rule_reference('unwritten')}", "writes-grad-output")
        for name, tensor in _written(inputs_before):
            watch.note(f"{function.__name__}.backward modified its input {name} in place on one of "
                       f"the grader's calls ({name} {_described(tensor)}): the caller's tensors "
                       "must come back unchanged; compute a new tensor instead "
                       f"{rule_reference('unwritten')}", "writes-input")
        return result

    return watched


def _defines(function: type, method: str) -> bool:
    """Whether ``function`` (or a class between it and Function) defines ``method``."""
    return getattr(function, method, None) is not getattr(torch.autograd.Function, method)


def functions_of(submission) -> list[type]:
    """The autograd.Functions a submission is or uses: itself, or those its code names (a
    function calling ``LinearCrossEntropy.apply``, a module whose forward does), found through
    the globals of the functions it defines."""
    if isinstance(submission, type) and issubclass(submission, torch.autograd.Function):
        return [submission]
    codes = ([submission] if inspect.isfunction(submission) else
             [f for f in vars(submission).values() if inspect.isfunction(f)]
             if isinstance(submission, type) else [])
    found = []
    for code in codes:
        for name in inspect.unwrap(code).__code__.co_names:
            value = code.__globals__.get(name)
            if (isinstance(value, type) and issubclass(value, torch.autograd.Function)
                    and value.__module__ != "torch" and not value.__module__.startswith("torch.")
                    and value not in found):
                found.append(value)
    return found


@contextmanager
def calls_watched(name: str, submission, *, may_return_input: bool = False):
    """While the block runs, every call of the autograd.Functions ``submission`` is or uses is
    watched for writes into what it was given; the first is raised at the end of the block.
    ``may_return_input``: the op returns an input as it is (an identity forward), so forward
    may too."""
    watch = _Watch(name, may_return_input)
    token = _active.set(watch)
    restore = [_patch(function) for function in functions_of(submission)]
    try:
        yield
    except Exception as error:
        if watch.found is not None and write_first(name, watch.found, error):
            raise watch.found from error  # an attribute set on x, then x.scale missing
        raise
    finally:
        _active.reset(token)
        for put_back in reversed(restore):
            put_back()
    if watch.found is not None:
        raise watch.found


def _patch(function: type):
    """Put the watching wrappers in front of ``function``'s methods; returns what undoes it."""
    wrappers = {"forward": lambda f: _forward(function, f),
                "backward": lambda f: _backward(function, f),
                "setup_context": lambda f: _setup_context(function, f)}
    patched = {method: vars(function).get(method) for method in wrappers
               if _defines(function, method) and callable(getattr(function, method))}
    for method in patched:  # resolved before any is replaced: _input_names reads forward
        wrappers[method] = wrappers[method](getattr(function, method))
    for method in patched:
        setattr(function, method, staticmethod(wrappers[method]))

    def put_back():
        for method, own in patched.items():  # as it was, inherited or not
            if own is None:
                delattr(function, method)
            else:
                setattr(function, method, own)

    return put_back
