"""Lesson 13: checks shared by the Triton exercises (silu_mul, rms_norm_rows): the operator, the
memory a kernel touches (guarded in kernel_memory), where the arithmetic runs, opcheck and
torch.compile; half precision in ulps is kernel_ulps. Triton is imported only when a battery
runs: the rest of the course needs none."""

import re
from contextlib import contextmanager

import torch
from torch._library.custom_ops import CustomOpDef, _maybe_get_opdef
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from ...checks import case
from ...diagnose import diagnose_gradient, diagnose_values
from ...errors import GradingError
from ..shared.quiet import quiet
from .kernel_interpreter import interpreting, kernels_on
from .kernel_memory import guarded_memory

NAMESPACE = "autograd_course"
# What the host may do around the kernels: allocate, view, copy, cast, reduce partials, read sizes.
HOST_OPS = frozenset({
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros",
    "zeros_like", "new_zeros", "zero_", "fill_", "full", "full_like", "ones", "ones_like",
    "new_ones", "scalar_tensor", "set_", "copy_", "_to_copy", "clone",
    "contiguous", "view", "_unsafe_view", "reshape", "_reshape_alias", "as_strided", "expand",
    "detach", "alias", "t", "transpose", "permute", "select", "slice", "unsqueeze", "squeeze",
    "flatten", "lift_fresh", "lift_fresh_copy", "sum", "_local_scalar_dense", "resize_",
    "split", "unbind", "view_as", "_to_dtype", "to",
})


def require_triton():
    """Triton is there, and its own library kernels run the way ours do."""
    try:
        import triton.language as tl
    except ModuleNotFoundError as error:
        raise GradingError("lesson 13 needs Triton: pip install triton (then restart the "
                           "kernel)", str(error)) from error
    from triton.runtime.interpreter import InterpretedFunction
    if interpreting() != isinstance(tl.sum, InterpretedFunction):
        raise GradingError("TRITON_INTERPRET changed after triton was imported, so Triton's own "
                           "functions (tl.sum, tl.sigmoid) run the other way: restart the kernel "
                           "and run the lesson's first cell first")


@contextmanager
def kernel_battery(name: str, submission, device: torch.device):
    """A battery's run on ``device``: Triton there, the kernels compiled on CUDA and
    interpreted on CPU, and memory outside the kernel's tensors refused (interpreter)."""
    require_triton()
    with kernels_on(device, submission), guarded_memory(name):
        yield


class Calls:
    """``apply`` for the contract checks, which call a Function's ``apply``."""

    def __init__(self, call):
        self.apply = call


class _Launches(TorchDispatchMode):
    """Every aten op a call dispatches, looking inside the course's custom operators (run
    below the Python key with this mode still on), and the operators it called."""

    def __init__(self):
        super().__init__()
        self.aten, self.operators, self.calls = [], [], []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = str(func.overloadpacket)
        if func.namespace == NAMESPACE:
            self.operators.append(name)
            self.calls.append((func, args, kwargs))
            tensors = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
            cuda = any(t.device.type == "cuda" for t in tensors)
            keys = torch._C.DispatchKeySet(torch._C.DispatchKey.CUDA if cuda
                                           else torch._C.DispatchKey.CPU)
            with self:
                return func.redispatch(keys, *args, **kwargs)
        self.aten.append(name.removeprefix("aten."))
        return func(*args, **kwargs)


@contextmanager
def counting_launches():
    """The list of Triton kernels launched inside the block, by name."""
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    launched = []
    originals = {kind: kind.run for kind in (InterpretedFunction, JITFunction)}

    def counted(original):
        def run(self, *args, **kwargs):
            launched.append(getattr(getattr(self, "fn", None), "__name__", "a kernel"))
            return original(self, *args, **kwargs)
        return run

    for kind, original in originals.items():
        kind.run = counted(original)
    try:
        yield launched
    finally:
        for kind, original in originals.items():
            kind.run = original


def operators_called(call, *args) -> list[str]:
    with _Launches() as probe:
        call(*args)
    return probe.operators


def operator_calls(run) -> list[tuple]:
    """(operator, args, kwargs) of every call to the namespace's operators while ``run()``."""
    with _Launches() as probe:
        run()
    return probe.calls


def check_operator(submission, name: str, example: tuple) -> None:
    """The submission calls a custom operator of the namespace, and is its current definition."""
    operator = f"{NAMESPACE}::{name}"
    if isinstance(submission, type) and issubclass(submission, torch.autograd.Function):
        raise GradingError(f"{name} is an autograd.Function: define it as the custom operator "
                           f"{operator} with @torch.library.custom_op",
                           mistake=f"{name}/function-not-operator")
    if isinstance(submission, CustomOpDef) and _maybe_get_opdef(
            submission._qualname) is not submission:
        raise GradingError(f"{name} is an older definition: {submission._qualname} was defined "
                           f"again after it, and an old handle must not be called: re-run the "
                           f"cell defining {name}", mistake=f"{name}/stale-operator")
    if isinstance(submission, CustomOpDef):  # before a GPU machine runs it outside the interpreter
        _refuse_triton_op(name, [submission._qualname.replace("::", ".", 1)])
    called = operators_called(submission, *example)
    if not any(op.startswith(f"{NAMESPACE}.") for op in called):
        raise GradingError(f"{name} calls no custom operator of the {NAMESPACE} namespace: "
                           f'define it with @torch.library.custom_op("{operator}", '
                           "mutates_args=())", mistake=f"{name}/not-a-custom-op")
    ours = [op for op in dict.fromkeys(called) if op.startswith(f"{NAMESPACE}.")]
    if not any(op.split(".")[1] == name for op in ours):
        raise GradingError(f"{name} calls {', '.join(ours)}, but not {operator}, the operator "
                           "the exercise names: its checks (opcheck, torch.compile) look it up "
                           "by that name", mistake=f"{name}/operator-misnamed")
    _refuse_triton_op(name, list(dict.fromkeys(called)))


def _refuse_triton_op(name: str, operators: list[str]) -> None:
    """None of ``operators`` ("ns.name") is a triton_op."""
    traced = [op for op in operators if _is_triton_op(op)]
    if traced:
        raise GradingError(
            f"{traced[0]} is a torch.library.triton_op: the contract asks for "
            "@torch.library.custom_op with register_fake (triton_op needs a GPU: its fake-tensor "
            "tracing runs the interpreted kernel on fake tensors, so opcheck fails on CPU, as "
            "\"triton_op: letting the compiler see into the kernel\" shows)",
            mistake=f"{name}/triton-op")


def _is_triton_op(op: str) -> bool:
    """Whether the namespace's operator ``op`` ("ns.name") is, as now defined, a triton_op
    (which registers a FunctionalTensorMode rule that a custom_op has not)."""
    from torch._subclasses.functional_tensor import FunctionalTensorMode

    definition = _maybe_get_opdef(op.replace(".", "::", 1))
    return FunctionalTensorMode in getattr(definition, "_torch_dispatch_fns", {})


def check_in_kernels(name: str, phase: str, run) -> list[str]:
    """``run()`` launches Triton kernels and does no arithmetic in torch ops on the host; the
    names of the kernels it launched, once per launch."""
    with counting_launches() as launched, _Launches() as probe:
        run()
    arithmetic = sorted({op.split(".")[0] for op in probe.aten} - HOST_OPS)
    if arithmetic:
        raise GradingError(
            f"{name}'s {phase} computes with torch ops ({', '.join(arithmetic)}) instead of in "
            "your Triton kernels: the host may only allocate, view, copy and cast (and sum "
            "per-program partials); move the arithmetic into the kernel",
            mistake=f"{name}/host-arithmetic")
    if not launched:
        raise GradingError(f"{name}'s {phase} launched no Triton kernel: launch your "
                           "@triton.jit kernel with kernel[grid](...)",
                           mistake=f"{name}/no-kernel-launched")
    return launched


def explain(name: str, phase: str, error: Exception) -> GradingError:
    """A hint for an operator's error, from its message."""
    message = str(error)
    if "no fake impl" in message or "no fake" in message.lower():
        return GradingError(f"{name} has an operator without a fake implementation: add "
                            "@op.register_fake returning empty tensors of the output's shape "
                            "and dtype; torch.compile and opcheck need it", message,
                            mistake=f"{name}/no-fake")
    if "no autograd formula" in message or "does not require grad" in message:
        return GradingError(f"{name}'s operator has no autograd registration: call "
                            "op.register_autograd(backward, setup_context=setup_context)",
                            message, mistake=f"{name}/no-autograd")
    if "data pointer" in message or "data_ptr" in message:
        return GradingError(
            f"{name} launched a Triton kernel on a fake tensor during {phase}: torch.compile "
            "and opcheck trace the backward with fake tensors, so a kernel launched directly in "
            "the registered backward (or in register_fake) cannot run; put the backward kernel "
            "behind its own custom operator with register_fake, and call that in backward",
            message, mistake=f"{name}/kernel-on-fake-tensor")
    if ("FakeTensor' is not an instance of 'sequence'" in message
            or ("Unable to cast (FakeTensor" in message and "to Tensor" in message)):
        return GradingError(f"{name}: a fake implementation returns one tensor where its "
                            "operator returns a tuple, or a tuple where it returns one tensor: "
                            "register_fake must return what the annotation says", message,
                            mistake=f"{name}/fake-output-structure")
    if "Expected dtype ['fp32', 'fp64']" in message:
        return GradingError(f"{name}: tl.exp and Triton's other math functions take float32 or "
                            "float64, and a half-precision load is float16 or bfloat16: convert "
                            "after loading (.to(tl.float32)) and cast back when storing", message,
                            mistake=f"{name}/half-not-converted")
    first = message.splitlines()[0] if message else ""
    if seen := re.search(r"numel \(\d+\) exceeds triton maximum tensor numel \(\d+\)",
                         message):
        return GradingError(
            f"{name}'s {phase} raised Triton's \"{seen.group(0)}\": a kernel's block "
            "(tl.arange) spans more than 2**20 elements, the most Triton accepts, so a block "
            "sized to the whole input or to a whole row fails once that is longer", message)
    return GradingError(f"{name}'s {phase} raised {type(error).__name__}: {first}", message)


def _root(error: BaseException) -> BaseException:
    while error.__cause__ is not None:
        error = error.__cause__
    return error


def _check_fresh_outputs(name: str, operator, args: tuple, kwargs: dict) -> None:
    """Two calls of the operator return different tensor objects (opcheck's own complaint at
    a tensor returned again is about requires_grad, which names nothing)."""
    try:
        with torch.no_grad(), quiet():
            first, second = (tree_leaves(operator(*args, **kwargs)) for _ in range(2))
    except Exception:  # noqa: BLE001 -- a probe: opcheck's own failure is explained below
        return
    if any(isinstance(a, torch.Tensor) and a is b and a.numel() for a, b in zip(first, second)):
        raise GradingError(
            f"{name}'s operator {operator} returns the same tensor object on two calls: the "
            "second call writes its result over the first's (a buffer kept between calls); "
            "each call must return fresh tensors: allocate every output in the call",
            mistake=f"{name}/same-output-every-call")


def check_opcheck(name: str, operator, args: tuple, kwargs=None) -> None:
    """torch.library.opcheck on the operator (an overload, or its name in the namespace):
    schema, fake tensor, autograd registration, AOT dispatch."""
    if isinstance(operator, str):
        operator = getattr(getattr(torch.ops, NAMESPACE), operator).default
    _check_fresh_outputs(name, operator, args, kwargs or {})
    try:
        with quiet():
            torch.library.opcheck(operator, args, kwargs or {})
    except GradingError:
        raise
    except Exception as error:
        raise explain(name, "opcheck", _root(error)) from error


def check_compiled(name: str, call, args: tuple, *, rtol=1e-9, atol=1e-10) -> None:
    """torch.compile(fullgraph=True) of a function around the operator matches eager."""
    backend = "inductor" if args[0].device.type == "cuda" else "aot_eager"
    scope = {"call": call, "torch": torch}  # fresh code: no stale compile cache
    around = eval(compile("lambda x, *rest: torch.sin(call(x * 2, *rest)) * 3",  # noqa: S307
                          f"<{name} under torch.compile>", "eval"), scope)
    eager, compiled = ([a.detach().clone().requires_grad_(a.is_floating_point())
                        if isinstance(a, torch.Tensor) else a for a in args] for _ in range(2))
    (expected := around(*eager)).sum().backward()
    torch._dynamo.reset()
    try:
        with quiet():
            got = torch.compile(around, fullgraph=True, backend=backend)(*compiled)
            got.sum().backward()
    except GradingError:
        raise
    except Exception as error:
        hint = explain(name, "compiled call", _root(error))
        raise GradingError(f"torch.compile(fullgraph=True, backend={backend!r}) failed on a "
                           f"function calling {name}: {hint.hint}", str(error),
                           mistake=hint.mistake) from error
    with case(f"under torch.compile(fullgraph=True, backend={backend!r})"):
        diagnose_values(f"{name}'s output", got, expected, rtol=rtol, atol=atol)
        for index, (e, c) in enumerate(zip(eager, compiled)):
            if isinstance(e, torch.Tensor) and e.grad is not None:
                diagnose_gradient(f"input {index}", c.grad, e.grad, rtol=rtol, atol=atol)
