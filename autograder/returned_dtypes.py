"""Rule 2 of the Function contract, the dtype clause: each gradient backward returns has its
input's dtype. Autograd casts a gradient of any other dtype to the input's without a word, so
every check that reads gradients after the engine (``.grad``, ``torch.autograd.grad``) sees the
right dtype whatever backward returned: a backward that returns float64 for a float32 input
passes them all, after the work and the memory of float64.

What backward returns is recorded before the engine's cast, for every exercise: a Function's
backward through ``probes.record_returned_gradients``, and the backward registered for a custom
operator (``torch.library.register_autograd``) wrapped the same way, with the dtypes of the
inputs its ``setup_context`` was handed. Each dtype the domain names is tried once, every
floating input requiring grad; the checks that run backward on a path of its own (an empty
batch, a 0-d input, size-1 dimensions, a grad_output of zeros, a weight of 0) record what it
returns there in the same runs (``dtypes_watched``, ``check_dtypes_returned``). A gradient computed wider and cast back before it is returned
is correct: only the dtype of what is returned counts. One returned narrower lost digits that
the value checks may already have named (a held precision finding): that finding stands."""

from contextlib import contextmanager

import torch

from .checks import make_inputs
from .domain import Domain
from .errors import GradingError
from .function_contract import rule_reference
from .grad_outputs import grad_output_generator
from .narrowed import differentiable_outputs, floating_inputs, shapes_of
from .precision import finding_held
from .probes import record_returned_gradients


def _dtype(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _narrower(dtype: torch.dtype, than: torch.dtype) -> bool:
    """Does a floating ``dtype`` keep fewer significant bits than ``than``?"""
    return (dtype.is_floating_point and than.is_floating_point
            and torch.finfo(dtype).eps > torch.finfo(than).eps)


def returned_dtype_hint(who: str, name: str, got: torch.dtype, want: torch.dtype) -> str:
    """The first line: what ``who`` (``MySigmoid.backward``) returned for input ``name``."""
    said = f"{who} returned grad_{name} in {_dtype(got)} for a {_dtype(want)} {name}: "
    if _narrower(got, want):
        said += (f"autograd casts it back to {_dtype(want)} without a word, after the "
                 f"precision was lost; keep the input's dtype (compute in {_dtype(want)} or "
                 f"wider)")
    else:
        said += (f"autograd casts it back without a word, after the work (and the memory) of "
                 f"{_dtype(got)}; keep the input's dtype (a gradient computed wider is cast "
                 f"back before backward returns it)")
    return f"{said} {rule_reference('gradients')}"


def _run(apply, values: dict) -> bool:
    """One call of ``apply`` on fresh leaves, every floating input requiring grad, then its
    backward; False where it raised (other checks name that)."""
    inputs = make_inputs(values, requires_grad=set(floating_inputs(values)))
    try:
        outputs = differentiable_outputs(apply(*inputs.values()))
        if not outputs:
            return False
        generator = grad_output_generator(5)
        grad_outputs = [torch.randn(o.shape, generator=generator, dtype=torch.float64).to(o)
                        for o in outputs]
        wanted = [v for v in inputs.values() if isinstance(v, torch.Tensor) and v.requires_grad]
        torch.autograd.grad(outputs, wanted, grad_outputs, allow_unused=True)
    except Exception:  # noqa: BLE001 - a probe: the battery names what raised
        return False
    return True


def _first_mismatch(returned) -> tuple | None:
    """The first (name, returned dtype, input dtype) where a tensor returned for a floating
    input has another dtype than that input, of (name, input dtype or None, returned) triples."""
    for name, dtype, grad in returned:
        if (isinstance(dtype, torch.dtype) and dtype.is_floating_point
                and isinstance(grad, torch.Tensor) and grad.dtype != dtype):
            return name, grad.dtype, dtype
    return None


@contextmanager
def registered_backwards():
    """Inside the block, each call of a backward registered with ``register_autograd`` (of any
    custom operator defined with ``torch.library.custom_op``) is recorded, before the engine's
    cast: yields a list of (operator name, argument names, input dtypes or None, returned)."""
    try:
        from torch._library.custom_ops import OPDEFS
    except ImportError:  # an older torch: nothing to wrap
        yield []
        return
    ops = [op for op in list(OPDEFS.values()) if getattr(op, "_backward_fn", None) is not None]
    calls: list = []
    dtypes: dict = {}  # id(ctx) -> (ctx, input dtypes), from setup_context

    def setting_up(setup_context):
        def wrapper(*args, **kwargs):
            ctx, inputs = kwargs.get("ctx"), kwargs.get("inputs")
            if ctx is not None and inputs is not None:
                dtypes[id(ctx)] = (ctx, tuple(getattr(i, "dtype", None) for i in inputs))
            return setup_context(*args, **kwargs)
        return wrapper

    def recording(op, backward):
        names = [argument.name for argument in op._opoverload._schema.arguments]

        def wrapper(ctx, *grads):
            result = backward(ctx, *grads)
            kept = dtypes.get(id(ctx))
            calls.append((op._name, names, kept[1] if kept and kept[0] is ctx else None,
                          result if isinstance(result, tuple) else (result,)))
            return result
        return wrapper

    originals = [(op, op._backward_fn, op._setup_context_fn) for op in ops]
    for op, backward, setup_context in originals:
        op._backward_fn = recording(op, backward)
        if setup_context is not None:
            op._setup_context_fn = setting_up(setup_context)
    try:
        yield calls
    finally:
        for op, backward, setup_context in originals:
            op._backward_fn, op._setup_context_fn = backward, setup_context
        dtypes.clear()


def check_dtypes_returned(name: str, who: str, values: dict, returned: dict) -> None:
    """Rule 2's dtype on one recorded call: ``returned`` (input name -> what backward returned)
    against the dtypes of ``values``, for exercise ``name``; ``who`` as in the first line."""
    found = _first_mismatch((n, getattr(values.get(n), "dtype", None), g)
                            for n, g in returned.items())
    error = found and _error(name, who, found, values)
    if error is not None:
        raise error


@contextmanager
def dtypes_watched(name: str, function, values: dict):
    """Yields what to run in ``function``'s place on ``values``; where the block ends without an
    error, each gradient backward returned in it for a floating input has that input's dtype
    (the first line as ``check_returned_dtypes``'s). A custom operator's registered backward is
    watched as there. Only where every floating input is float64: there a gradient of another
    dtype is a narrower one made on a path of its own (``torch.zeros(shape)`` is float32); a 0-d
    float32 input's gradient times a 0-d float64 constant is settled at the typical inputs."""
    if any(values[n].dtype != torch.float64 for n in floating_inputs(values)):
        yield function
        return
    if isinstance(function, type) and issubclass(function, torch.autograd.Function):
        recorder, calls = record_returned_gradients(function)
        yield recorder
        for returned in calls:
            check_dtypes_returned(name, f"{function.__name__}.backward", values,
                                  dict(zip(values, returned)))
        return
    with registered_backwards() as calls:
        yield function
    for op_name, names, input_dtypes, returned in calls:
        if input_dtypes is not None:
            found = _first_mismatch(zip(names, input_dtypes, returned))
            error = found and _error(name, f"the backward registered for {op_name}", found,
                                     values)
            if error is not None:
                raise error


def check_returned_dtypes(domain: Domain, function, device: torch.device) -> None:
    """Each gradient backward returns for a floating input has that input's dtype, in every
    dtype the domain names, recorded before the engine casts it."""
    name = domain.spec.name
    for dtype in domain.dtypes:
        values = domain.values(device, dtype=dtype)
        if not floating_inputs(values):
            continue
        if isinstance(function, type) and issubclass(function, torch.autograd.Function):
            recorder, calls = record_returned_gradients(function)
            if not _run(recorder.apply, values):
                continue
            for returned in calls:
                found = _first_mismatch((n, getattr(values[n], "dtype", None), g)
                                        for n, g in zip(values, returned))
                error = found and _error(name, f"{function.__name__}.backward", found, values)
                if error is not None:
                    raise error
            continue
        with registered_backwards() as calls:
            ran = _run(function.apply, values)
        if not ran:
            continue
        for op_name, names, input_dtypes, returned in calls:
            if input_dtypes is None:
                continue  # no setup_context to read the inputs from
            found = _first_mismatch(zip(names, input_dtypes, returned))
            error = found and _error(name, f"the backward registered for {op_name}", found,
                                     values)
            if error is not None:
                raise error


def _error(name: str, who: str, found: tuple, values: dict) -> GradingError | None:
    """The failure for exercise ``name`` (None where a precision finding says why)."""
    input_name, got, want = found
    if _narrower(got, want) and finding_held():
        return None
    return GradingError(returned_dtype_hint(who, input_name, got, want),
                        f"inputs: {shapes_of(values)}, {_dtype(want)}",
                        mistake=f"{name}/wrong-gradient-dtype")
