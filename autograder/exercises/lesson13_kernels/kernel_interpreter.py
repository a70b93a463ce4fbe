"""Lesson 13 on a machine with a GPU: Triton compiles the learner's kernels there, and a compiled
kernel reads GPU memory only. The CPU run of the battery then interprets them, as
TRITON_INTERPRET=1 would, in this process and for that run only, so that the probes only the
interpreter has (memory outside a tensor, races, launches) grade every machine alike."""

import os
import sys
from contextlib import contextmanager

import torch
from torch._library.custom_ops import CustomOpDef

INTERPRET_VARIABLE = "TRITON_INTERPRET"


def interpreting() -> bool:
    """Whether @triton.jit kernels run in Triton's interpreter (TRITON_INTERPRET=1)."""
    from triton import knobs
    return bool(knobs.runtime.interpret)


def _namespaces(submission) -> list[dict]:
    """Where the learner's kernels live: the globals of the answer (its cell's namespace)
    and of the notebook."""
    function = submission._init_fn if isinstance(submission, CustomOpDef) else submission
    spaces = [getattr(function, "__globals__", None), getattr(sys.modules.get("__main__"),
                                                              "__dict__", None)]
    unique = {id(space): space for space in spaces if isinstance(space, dict)}
    return list(unique.values())


def _language_modules() -> list:
    """The modules of triton.language that hold Triton's own @triton.jit functions and builtins."""
    import triton.language as tl
    return [tl, tl.core, tl.standard, tl.math]


def _language_objects() -> list:
    """triton.language's modules and classes: what the interpreter patches while it runs."""
    modules = _language_modules()
    classes = {value for module in modules for value in vars(module).values()
               if isinstance(value, type) and value.__module__.startswith("triton.language")}
    return [*modules, *sorted(classes, key=lambda cls: cls.__qualname__)]


def _restore(objects_before: list) -> None:
    """Put back every attribute as it was (a device-function call of the interpreter patches
    triton.language and never restores it: the next compile on the GPU would then fail). Names
    the interpreter added stay: its cached rewrites of tl.sum and the rest look them up."""
    for owner, before in objects_before:
        now = dict(vars(owner))
        for key, value in before.items():
            if now.get(key, _restore) is not value:
                setattr(owner, key, value)


@contextmanager
def _interpreted(namespaces: list[dict]):
    """Every @triton.jit function in ``namespaces`` and in triton.language (tl.sum, x.sum(),
    tl.sigmoid) stands in as an interpreted function of the same Python source."""
    import triton.language as tl
    from triton import knobs
    from triton.runtime import interpreter
    from triton.runtime.jit import JITFunction

    def as_method(interpreted):  # x.sum(): a plain function binds x as self
        return lambda *args, **kwargs: interpreted(*args, **kwargs)

    language = [(owner, dict(vars(owner))) for owner in _language_objects()]
    spaces = [(space, dict(space)) for space in namespaces]
    for space in [*namespaces, *(vars(module) for module in _language_modules())]:
        for key, value in list(space.items()):
            if isinstance(value, JITFunction):
                space[key] = interpreter.InterpretedFunction(value.fn)
    for key, value in list(vars(tl.tensor).items()):
        if isinstance(value, JITFunction):
            setattr(tl.tensor, key, as_method(interpreter.InterpretedFunction(value.fn)))
    variable = os.environ.get(INTERPRET_VARIABLE)
    knobs.runtime.interpret = True  # triton.language reads it while a kernel runs
    try:
        yield
    finally:
        del knobs.runtime.interpret
        if variable is None:
            os.environ.pop(INTERPRET_VARIABLE, None)
        else:
            os.environ[INTERPRET_VARIABLE] = variable
        _restore(language)
        for space, before in spaces:  # the names the interpreter lends the cell stay, as
            space.update({key: value for key, value in before.items()  # its rewrites need them
                          if isinstance(value, JITFunction)})


@contextmanager
def kernels_on(device: torch.device, submission):
    """Run ``submission``'s Triton kernels on ``device``: compiled on CUDA, interpreted on
    CPU (already so where TRITON_INTERPRET=1, as on a machine without a GPU)."""
    if device.type == "cuda" or interpreting():
        yield
        return
    with _interpreted(_namespaces(submission)):
        yield


class _AlreadyPatched:
    """What a device-function call inside a launch gets: the launch's patch stands."""

    def restore(self) -> None:
        pass


@contextmanager
def language_patched_once_per_launch():
    """Triton's interpreter patches triton.language when a launch starts and again at every
    call of a @triton.jit device function inside it (tl.sigmoid, tl.sum, a learner's helper:
    once per program each), never undoing the inner patches; each patch walks the language's
    modules with inspect.getmembers, a third of an interpreted battery's time. Here a launch
    patches tl and tl.core, the two modules a device function may reach them by, once; its
    device-function calls find them patched; the launch's end undoes it all. A call outside a
    launch, and a Triton whose interpreter patches some other way, are left to Triton."""
    try:
        import triton.language as tl
        from triton.runtime import interpreter
    except ModuleNotFoundError:  # the battery says that lesson 13 needs Triton
        yield
        return
    patch_lang, grid_call = interpreter._patch_lang, interpreter.GridExecutor.__call__
    if not hasattr(interpreter, "_LangPatchScope") or getattr(patch_lang, "once_per_launch",
                                                              False):
        yield
        return
    launches: list[bool] = []  # per launch running: is the language patched for it yet?
    both = type("Languages", (), {"__globals__": {"tl": tl, "core": tl.core}})

    def patched(fn):
        if not launches:
            return patch_lang(fn)
        if launches[-1]:
            return _AlreadyPatched()
        if not any(value is tl or value is tl.core for value in fn.__globals__.values()):
            return patch_lang(fn)  # Triton's own error: triton.language must be visible
        launches[-1] = True
        return patch_lang(both)

    def launch(self, *args, **kwargs):
        launches.append(False)
        try:
            return grid_call(self, *args, **kwargs)
        finally:
            launches.pop()

    patched.once_per_launch = True
    interpreter._patch_lang, interpreter.GridExecutor.__call__ = patched, launch
    try:
        yield
    finally:
        interpreter._patch_lang, interpreter.GridExecutor.__call__ = patch_lang, grid_call


@contextmanager
def float64_to_bfloat16():
    """The interpreter's float64 -> bfloat16 conversions inside the block, counted: Triton 3.9's
    interpreter makes them with a NumPy astype to the uint16 it keeps bfloat16 in (its
    InterpreterBuilder.cast_impl), so 0.55 becomes 0 and 1.7 a denormal."""
    import triton.language as tl
    from triton.runtime.interpreter import InterpreterBuilder

    seen, cast = [], InterpreterBuilder.cast_impl

    def counted(self, src, dst_type):
        if src.dtype.scalar == tl.float64 and dst_type.scalar == tl.bfloat16:
            seen.append(dst_type)
        return cast(self, src, dst_type)

    InterpreterBuilder.cast_impl = counted
    try:
        yield seen
    finally:
        InterpreterBuilder.cast_impl = cast


@contextmanager
def bfloat16_steps():
    """The interpreter's arithmetic on bfloat16 operands inside the block, counted (binary and
    unary ops, reductions and scans): Triton 3.9's interpreter keeps bfloat16 as the uint16 of
    its bits and computes on those integers, so 1.5 * 1.5 gives 2.5e-29."""
    import triton.language as tl
    from triton.runtime.interpreter import InterpreterBuilder, ReduceScanOpInterface

    seen = []
    binary, unary, reduce = (InterpreterBuilder.binary_op, InterpreterBuilder.unary_op,
                             ReduceScanOpInterface.apply)

    def note(*operands):
        seen.extend(o for o in operands if getattr(o.dtype, "scalar", o.dtype) == tl.bfloat16)

    def counted_binary(self, lhs, rhs, op):
        note(lhs, rhs)
        return binary(self, lhs, rhs, op)

    def counted_unary(self, arg, op):
        note(arg)
        return unary(self, arg, op)

    def counted_reduce(self, input):
        note(*(input if isinstance(input, tuple) else (input,)))
        return reduce(self, input)

    InterpreterBuilder.binary_op, InterpreterBuilder.unary_op = counted_binary, counted_unary
    ReduceScanOpInterface.apply = counted_reduce
    try:
        yield seen
    finally:
        InterpreterBuilder.binary_op, InterpreterBuilder.unary_op = binary, unary
        ReduceScanOpInterface.apply = reduce
