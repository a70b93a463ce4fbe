"""What forward saves costs no memory an input or the output already holds: a saved copy of
one (a ``.clone()``, a ``.contiguous()``, ``.reshape()`` or ``.flatten()`` of a strided input, a
cast) keeps a second set of
bytes for values the graph keeps anyway. The input itself, or the output, costs nothing. Nor
is a tensor saved cast wider than the inputs' dtype when that dtype holds all its values."""

import torch

from ...checks import Spec, make_inputs, run_forward
from ...comparison import floating_outputs
from ...errors import GradingError
from ...probes import ForwardTrace


def _held(forward: ForwardTrace, inputs: dict) -> dict:
    """The floating tensors the caller or the graph holds anyway, by what a learner calls them."""
    outputs = floating_outputs(forward.output)
    held = {name: value for name, value in inputs.items()
            if isinstance(value, torch.Tensor) and value.is_floating_point()}
    held.update({"the output": outputs[0]} if len(outputs) == 1
                else {f"output {i}": output for i, output in enumerate(outputs)})
    return held


def check_no_copy_saved(spec: Spec, forward: ForwardTrace, inputs: dict) -> None:
    """No saved tensor holds exactly the values of an input or of the output (in their shape,
    or reshaped: a flatten or reshape of a strided or expanded input copies), in their dtype or
    a wider one, without being that tensor or a view of it (a narrower copy
    loses digits: the exercises' precision checks name that); then nothing saved wider than it
    need be (``check_nothing_saved_wider``)."""
    held = _held(forward, inputs)
    for saved in forward.saved:
        if saved.role != "intermediate" or not saved.dtype.is_floating_point:
            continue
        for name, value in held.items():
            reshaped = tuple(value.shape) != saved.shape
            if ((value.numel() > 1 if reshaped else value.numel() > 0)
                    and value.numel() == saved.tensor.numel()
                    and torch.finfo(saved.dtype).bits >= torch.finfo(value.dtype).bits
                    and torch.equal(value.detach().reshape(-1).to(saved.dtype),
                                    saved.tensor.detach().reshape(-1))):
                how = ("a wider copy" if saved.dtype != value.dtype
                       else f"a copy, reshaped to {saved.shape}," if reshaped
                       else "a contiguous copy" if not value.is_contiguous() else "a copy")
                raise GradingError(
                    f"{spec.name}'s forward saved {how} of {name} ({saved.nbytes} bytes): the "
                    f"copy holds nothing {name} lacks, and is memory of its own, where saving "
                    f"{name} itself shares {name}'s memory ("
                    + ("the caller's tensor; once the caller drops it, ctx keeps it alive, "
                       "never a byte more" if name in inputs else "the graph holds it anyway")
                    + f"); save "
                    f"{name} as it is (a .clone(), .contiguous() or dtype cast before "
                    "save_for_backward makes the copy, and so does a reshape or flatten of a "
                    "strided or expanded tensor: reshape in backward instead)",
                    mistake=f"{spec.name}/saves-copy")
    check_nothing_saved_wider(spec, forward, inputs)


def _narrowest_input(inputs: dict):
    dtypes = [v.dtype for v in inputs.values()
              if isinstance(v, torch.Tensor) and v.is_floating_point()]
    return min(dtypes, key=lambda d: torch.finfo(d).bits, default=None)


def check_nothing_saved_wider(spec: Spec, forward: ForwardTrace, inputs: dict) -> None:
    """No tensor forward computed is saved cast to a dtype wider than the inputs' when the
    inputs' dtype holds its every value (a float64 softmax or mask for float32 inputs): the cast
    adds no digit and doubles the bytes."""
    dtype = _narrowest_input(inputs)
    if dtype is None:
        return
    for saved in forward.saved:
        if (saved.role == "intermediate" and saved.dtype.is_floating_point
                and torch.finfo(saved.dtype).bits > torch.finfo(dtype).bits
                and torch.equal(saved.tensor.detach().to(dtype).to(saved.dtype),
                                saved.tensor.detach())):
            wide, narrow = (str(d).removeprefix("torch.") for d in (saved.dtype, dtype))
            raise GradingError(
                f"{spec.name}'s forward saved a {wide} tensor of shape {saved.shape} for {narrow} "
                f"inputs, every value of which {narrow} holds exactly: the cast adds no digit and "
                f"takes {saved.nbytes} bytes where {narrow} takes "
                f"{saved.tensor.numel() * torch.finfo(dtype).bits // 8}; save it as computed "
                "(backward can cast it)", mistake=f"{spec.name}/saves-widened")


def check_no_copy_saved_strided(function, spec: Spec, values: dict, name: str) -> None:
    """``check_no_copy_saved`` with ``values[name]`` a transposed view, where ``.contiguous()``
    copies."""
    strided = dict(values, **{name: values[name].t().contiguous().t()})
    inputs = make_inputs(strided)
    check_no_copy_saved(spec, run_forward(function, spec, inputs), inputs)
