"""Lesson 13: checks shared by the Triton exercises (silu_mul, rms_norm_rows): the operator, the
memory a kernel touches (guarded in kernel_memory), where the arithmetic runs, half precision in ulps, opcheck and
torch.compile. Triton is imported only when a battery runs: the rest of the course needs none."""

import logging
import warnings
from contextlib import contextmanager

import torch
from torch._library.custom_ops import CustomOpDef, _maybe_get_opdef
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from ...checks import case
from ...diagnose import diagnose_gradient, diagnose_values
from ...errors import GradingError
from .kernel_interpreter import bfloat16_steps, float64_to_bfloat16, interpreting, kernels_on
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
    called = operators_called(submission, *example)
    if not any(op.startswith(f"{NAMESPACE}.") for op in called):
        raise GradingError(f"{name} calls no custom operator of the {NAMESPACE} namespace: "
                           f'define it with @torch.library.custom_op("{operator}", '
                           "mutates_args=())", mistake=f"{name}/not-a-custom-op")
    traced = [op for op in dict.fromkeys(called) if _is_triton_op(op)]
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


def ulps(got: torch.Tensor, expected: torch.Tensor) -> torch.Tensor:
    """|got - expected| in units in the last place of ``expected``'s dtype at ``expected``;
    a result that cancels to far below the tensor's largest is measured with float32's spacing
    at that largest (float32 arithmetic, in any order, cannot resolve it better)."""
    info = torch.finfo(expected.dtype)
    exponent = torch.frexp(expected.float().abs()).exponent
    spacing = torch.ldexp(torch.ones_like(expected, dtype=torch.float32), exponent - 1)
    largest = expected.float().abs().max() if expected.numel() else torch.tensor(0.0)
    floor = max(info.smallest_normal * info.eps, 4 * torch.finfo(torch.float32).eps
                * largest.item())
    spacing = (spacing * info.eps).clamp(min=floor)
    return (got.float() - expected.float()).abs() / spacing


def check_within_ulps(name: str, what: str, got, expected: torch.Tensor, *, ulp=2.0,
                      right_from_float32=False) -> None:
    """Half precision: within ``ulp`` of the float32-computed reference cast to the dtype
    (``name``: the exercise's)."""
    diagnose_values(what, got, expected, rtol=0.0, atol=float("inf"))
    worst = ulps(got.detach(), expected)
    if worst.numel() and worst.max().item() > ulp:
        index = tuple(int(i) for i in torch.unravel_index(torch.argmax(worst), worst.shape))
        first = (f"{what} loses precision in {expected.dtype}: the same values computed from "
                 f"float32 inputs are right, so a step uses a value rounded to {expected.dtype}: "
                 "a half accumulator, or a half tensor read back (such as the saved output)"
                 if right_from_float32 else f"{what} is off by more than {ulp:g} ulp in "
                 f"{expected.dtype}")
        raise GradingError(f"{first}: {worst.max().item():.3g} ulp at index {index} (got "
                           f"{got[index].item()!r}, expected {expected[index].item()!r})",
                           mistake=f"{name}/half-rounded-step" if right_from_float32 else "")


def name_bfloat16_failure(name: str, run, error: GradingError) -> None:
    """A bfloat16 failure in the interpreter (float16, checked first, passed), named from what
    the interpreter did while ``run()`` repeats the bfloat16 call: arithmetic on bfloat16
    operands, or a float64 value converted to bfloat16 (both wrong in Triton 3.9's)."""
    if not interpreting():
        return
    with float64_to_bfloat16() as converted, bfloat16_steps() as steps:
        try:
            run()
        except Exception:  # noqa: BLE001 -- a probe: the battery's own message stands
            pass
    if steps:
        raise GradingError(
            f"{name} computes a step in bfloat16 inside a kernel (float16 passed), and Triton "
            "3.9's interpreter computes on the raw bits of bfloat16 values, not on the numbers "
            "(1.5 * 1.5 gives 2.5e-29): convert after loading (.to(tl.float32)) and cast back "
            "only when storing", error.details, case=error.case,
            mistake=f"{name}/bfloat16-step-in-interpreter") from error
    if converted:
        raise GradingError(
            f"{name} converts a float64 value to bfloat16 inside a kernel, and Triton 3.9's "
            "interpreter gets that conversion wrong (0.55 becomes 0): convert to float32 first, "
            "value.to(tl.float32).to(tl.bfloat16), or keep float64 for float64 input only",
            error.details, case=error.case,
            mistake=f"{name}/float64-to-bfloat16-in-interpreter") from error


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
    return GradingError(f"{name}'s {phase} raised {type(error).__name__}: {first}", message)


@contextmanager
def quiet():
    """Silence dynamo's and opcheck's logging of a failure about to become a hint."""
    logger, level = logging.getLogger("torch"), logging.getLogger("torch").level
    logger.setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings(action="ignore"):
            yield
    finally:
        logger.setLevel(level)


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
