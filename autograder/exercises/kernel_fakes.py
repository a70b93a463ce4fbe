"""Lesson 13: the fake implementation of each operator an exercise's backward calls, against
what that operator really returns, for saved inputs that are transposed views (opcheck's
fake-tensor test, without opcheck's other runs)."""

import torch
from torch.utils._pytree import tree_leaves, tree_map

from ..errors import GradingError
from .kernel_checks import explain, operator_calls


def _layout(t: torch.Tensor) -> tuple:
    return tuple(t.shape), t.dtype, t.stride()


def check_backward_fakes(name: str, function, args: tuple) -> None:
    """Every operator the backward of ``function(*args)`` calls that its forward does not,
    called again on fake copies of its arguments: the same shapes, dtypes and strides."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    leaves = [a.detach().clone().requires_grad_(a.is_floating_point())
              if isinstance(a, torch.Tensor) else a for a in args]
    forward = {op for op, _, _ in operator_calls(lambda: function(*leaves))}
    out = function(*leaves)
    wanted = [a for a in leaves if isinstance(a, torch.Tensor) and a.requires_grad]
    calls = operator_calls(lambda: torch.autograd.grad(out, wanted, torch.ones_like(out)))
    for operator, op_args, op_kwargs in calls:
        if operator in forward:
            continue
        real = operator(*op_args, **op_kwargs)
        try:
            with FakeTensorMode() as mode:
                fake_args, fake_kwargs = tree_map(
                    lambda t: mode.from_tensor(t) if isinstance(t, torch.Tensor) else t,
                    (op_args, op_kwargs))
                fake = operator(*fake_args, **fake_kwargs)
        except Exception as error:
            raise explain(name, f"fake implementation of {operator}", error) from error
        for index, (mine, truth) in enumerate(zip(tree_leaves(fake), tree_leaves(real))):
            if isinstance(truth, torch.Tensor) and _layout(mine) != _layout(truth):
                shape, dtype, strides = _layout(mine)
                raise GradingError(
                    f"{name}'s backward operator {operator}: its fake implementation gives "
                    f"output {index} shape {shape}, {dtype}, strides {strides}, but the "
                    f"operator returns shape {_layout(truth)[0]}, {_layout(truth)[1]}, strides "
                    f"{_layout(truth)[2]} (the saved inputs here are transposed views): the "
                    "register_fake of the operator called in backward must describe its real "
                    "outputs too, strides included (opcheck of that operator fails on it): "
                    "return the layout it returns (memory_format=torch.contiguous_format for "
                    "contiguous gradients)")
