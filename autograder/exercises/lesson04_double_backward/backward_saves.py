"""Lesson 04, NumpyTanh: what the Function its backward calls saves. Its forward runs inside
NumpyTanh's backward, so the forward checks never see it; with create_graph=True its
save_for_backward is what double backward keeps. It keeps grad_output and y (or x) as they
came: a copy costs memory the graph already holds, and a narrower copy loses the digits the
second derivative needs."""

import torch
from torch.autograd.graph import saved_tensors_hooks

from ...checks import make_inputs
from ...errors import GradingError
from ...exercise import sample
from ...probes import _shares_memory
from .constant_grad_output import first_derivatives


def _copy_of(saved: torch.Tensor, held: dict):
    """The name of the tensor of ``held`` whose values ``saved`` holds without sharing its
    memory, or None."""
    for name, value in held.items():
        if (saved.is_floating_point() and saved.shape == value.shape and value.numel() > 0
                and not _shares_memory(saved, value)
                and torch.equal(value.detach().to(saved.dtype), saved.detach())):
            return name
    return None


def _name_unguarded_alias(packed: list, held: dict) -> None:
    """A saved tensor made from grad_output's, y's or x's memory (``torch.from_numpy`` of its
    ``.numpy()``, its ``.data``) shares the numbers but not autograd's version counter: an
    in-place change to the tensor between the first and the second pass then goes unseen. The
    probe bumps each tensor's counter (``add_(0)``, values unchanged) and watches the saved one."""
    for saved in packed:
        for name, value in held.items():
            if saved is value or not (_shares_memory(saved, value)
                                      or saved.data_ptr() == value.data_ptr()):
                continue
            before = saved._version
            try:
                with torch.no_grad():
                    value.add_(0)
            except RuntimeError:
                continue
            if saved._version == before:
                raise GradingError(
                    f"the Function NumpyTanh's backward calls saves a tensor made from {name}'s "
                    f"memory that is not {name} (a torch.from_numpy of its .numpy(), or its "
                    ".data): it shares the numbers but not autograd's version counter, so an "
                    f"in-place change to {name} between the first and the second pass is not "
                    "detected through it: the second derivative can use the changed values "
                    "silently instead of raising autograd's \"modified by an inplace "
                    "operation\" error; what does save_for_backward guard, and which tensor "
                    "should it be handed?",
                    f"{name}'s version counter went up; the saved tensor's stayed at {before}",
                    mistake="NumpyTanh/inner-saves-unguarded-alias")


def check_backward_saves_no_copy(function, values: dict) -> None:
    """Every tensor saved while NumPyTanh's backward runs with create_graph=True is grad_output,
    y or x themselves (or views), never a copy, a wider copy or a narrower one; x and
    grad_output are transposed where x is 2-D."""
    shape = values["x"].shape  # x and grad_output transposed where 2-D: .contiguous() copies
    transposed = len(shape) == 2
    inputs = make_inputs({"x": values["x"].t().contiguous().t()} if transposed else values)
    x = inputs["x"]
    forward_saved = []  # what NumpyTanh's own forward saves: a copy made there is its fault

    def keep(tensor):
        forward_saved.append(tensor)
        return tensor

    with saved_tensors_hooks(keep, lambda tensor: tensor):
        output = function.apply(x)
    grad_output = (sample(shape[::-1], "cpu", seed=43).t() if transposed
                   else sample(shape, "cpu", seed=43)).to(x.dtype).requires_grad_()
    packed = []

    def pack(tensor):
        packed.append(tensor)
        return tensor

    with saved_tensors_hooks(pack, lambda tensor: tensor):
        torch.autograd.grad(output, x, grad_output, create_graph=True)
    held = {"grad_output": grad_output, "y": output, "x": x}
    _name_unguarded_alias(packed, held)
    for saved in packed:
        name = _copy_of(saved, held)
        if name is None:
            continue
        kept = str(saved.dtype).removeprefix("torch.")
        if torch.finfo(saved.dtype).bits < torch.finfo(held[name].dtype).bits:
            raise GradingError(
                f"the Function NumpyTanh's backward calls saves {name} as {kept} for "
                f"{str(held[name].dtype).removeprefix('torch.')} x: the second derivative "
                "through it then has float32's digits only; save it as it came",
                mistake="NumpyTanh/inner-saves-narrower")
        how = "a wider copy" if saved.dtype != held[name].dtype else "a copy"
        if any(_shares_memory(saved, kept_there) for kept_there in forward_saved):
            raise GradingError(
                f"NumpyTanh's forward saves {how} of {name} ({kept}; x is transposed here), "
                "which the Function its backward calls saves again: the graph keeps "
                f"{name} anyway; save {name} as it came (a .clone(), .contiguous() "
                "or dtype cast before save_for_backward makes the copy)",
                mistake="NumpyTanh/saves-copy")
        raise GradingError(
            f"the Function NumpyTanh's backward calls saves {how} of {name} ({kept}): the graph "
            f"keeps {name} anyway, so the copy is memory for nothing; save {name} as it came "
            "(a .clone(), .contiguous() or dtype cast before save_for_backward makes the copy)",
            mistake="NumpyTanh/inner-saves-copy")


def check_hessian_vector_product(function, values: dict) -> None:
    """A second derivative with grad_output not requiring grad (a Hessian-vector product, as a
    second-order optimiser takes it): the Function backward calls then has one input that needs
    no gradient, and a backward that tests the wrong needs_input_grad entry drops x's."""
    inputs = make_inputs(values)
    x = inputs["x"]
    grad_output = sample(values["x"].shape, "cpu", seed=44).to(x.dtype)
    direction = sample(values["x"].shape, "cpu", seed=45).to(x.dtype)
    first, = first_derivatives("NumpyTanh", function.apply, (x,), grad_output)
    second, = torch.autograd.grad(first, x, direction, allow_unused=True)
    y = torch.tanh(values["x"])
    expected = -2 * y * (1 - y * y) * grad_output * direction  # d/dx of g (1 - tanh(x)^2)
    if second is None or not torch.allclose(second, expected, rtol=1e-7, atol=1e-9):
        raise GradingError(
            "the second derivative through NumpyTanh with respect to x is wrong when grad_output "
            "does not require grad (a Hessian-vector product): the Function your backward calls "
            "then gets needs_input_grad False for grad_output and True for y (or x); does its "
            "backward test the right entry for each gradient?",
            mistake="NumpyTanh/hessian-vector-product-wrong")
