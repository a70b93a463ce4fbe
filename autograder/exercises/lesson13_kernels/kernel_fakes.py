"""Lesson 13: the registrations behind an exercise's autograd. The fake implementation of the
exercise's operator against its real output; of each operator its backward calls, against what
that operator really returns, for saved inputs that are transposed views; and of each operator
its forward calls, every output (opcheck's fake-tensor test, without opcheck's other runs); and
the tensors setup_context keeps, which go through save_for_backward, never onto ctx."""

import torch
from torch.utils._pytree import tree_leaves, tree_map

from ...errors import GradingError
from ...probes import reachable
from .kernel_checks import explain, operator_calls


def _layout(t: torch.Tensor) -> tuple:
    return tuple(t.shape), t.dtype, t.stride()


def _grad_outputs(out: torch.Tensor) -> dict:
    """grad_output in the layouts autograd hands a backward: dense, transposed (every dim
    reversed: dense with other strides), and expanded from one element (y.sum().backward())."""
    dense = torch.ones_like(out, memory_format=torch.contiguous_format)
    layouts = {"contiguous": dense}
    if out.dim() > 1:
        dims = tuple(reversed(range(out.dim())))
        layouts["transposed"] = torch.ones(tuple(out.shape[d] for d in dims), dtype=out.dtype,
                                           device=out.device).permute(dims)
    if out.numel() > 1:
        layouts["expanded from one element (stride 0), as y.sum().backward() hands over"] = (
            torch.ones((), dtype=out.dtype, device=out.device).expand_as(out))
    return layouts


def check_backward_fakes(name: str, function, args: tuple, names: tuple = ()) -> None:
    """Every operator the backward of ``function(*args)`` calls that its forward does not,
    called again on fake copies of its arguments: the same shapes, dtypes and strides, with
    grad_output contiguous, transposed and expanded (a fake returning grad's layout is wrong
    for the last two when the real operator returns a contiguous gradient); then, grad_output
    contiguous, with each floating input (named by ``names``) frozen in turn: the operator
    told that a gradient is not needed, whose fake must say what the real one returns then."""
    floating = [i for i, a in enumerate(args)
                if isinstance(a, torch.Tensor) and a.is_floating_point()]
    for frozen in [None, *(floating if len(floating) > 1 else ())]:
        leaves = [a.detach().clone().requires_grad_(a.is_floating_point() and i != frozen)
                  if isinstance(a, torch.Tensor) else a for i, a in enumerate(args)]
        forward = {op for op, _, _ in operator_calls(lambda: function(*leaves))}
        out = function(*leaves)
        wanted = [a for a in leaves if isinstance(a, torch.Tensor) and a.requires_grad]
        layouts = _grad_outputs(out)
        if frozen is not None:
            what = names[frozen] if frozen < len(names) else f"input {frozen}"
            layouts = {f"contiguous, {what} requiring no grad": layouts["contiguous"]}
        for layout, grad_output in layouts.items():
            calls = operator_calls(lambda: torch.autograd.grad(out, wanted, grad_output,
                                                               retain_graph=True))
            for operator, op_args, op_kwargs in calls:
                if operator not in forward:
                    _compare_fake(name, operator, op_args, op_kwargs, layout)


def _compare_fake(name: str, operator, op_args, op_kwargs, layout: str) -> None:
    real = operator(*op_args, **op_kwargs)
    fake = _fake_outputs(name, operator, op_args, op_kwargs)
    for index, (mine, truth) in enumerate(zip(tree_leaves(fake), tree_leaves(real))):
        if isinstance(truth, torch.Tensor) and _layout(mine) != _layout(truth):
            shape, dtype, strides = _layout(mine)
            raise GradingError(
                f"{name}'s backward operator {operator}: its fake implementation gives "
                f"output {index} shape {shape}, {dtype}, strides {strides}, but the "
                f"operator returns shape {_layout(truth)[0]}, {_layout(truth)[1]}, strides "
                f"{_layout(truth)[2]} (the saved inputs here are transposed views, grad_output "
                f"{layout}): the register_fake of the operator called in backward must describe "
                "its real outputs whatever layout grad_output arrives in and whichever "
                "gradients are needed, strides included (opcheck of that operator fails on it)"
                + ("" if mine.shape != truth.shape else
                   ": return the layout it returns (empty_like(t) alone keeps t's strides)"),
                mistake=f"{name}/backward-fake-mismatch")


def check_output_fakes(name: str, function, cases: list, layout_hint: str) -> None:
    """``function(*args)`` under fake tensors, for each ``(where, args)`` of ``cases``, against
    its real output: the same shape, dtype and strides (opcheck's test_faketensor fails on a
    stride mismatch). ``layout_hint`` says which layout the real output has."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    for where, args in cases:
        real = function(*args)
        try:
            with FakeTensorMode() as mode:
                fake = function(*(mode.from_tensor(a) if isinstance(a, torch.Tensor) else a
                                  for a in args))
        except Exception as error:
            raise explain(name, "fake implementation", error) from error
        if (fake.shape, fake.dtype) != (real.shape, real.dtype):
            raise GradingError(f"{name}'s fake implementation returns shape "
                               f"{tuple(fake.shape)}, {fake.dtype}{where}, but the operator "
                               f"returns {tuple(real.shape)}, {real.dtype}: register_fake must "
                               "describe the real output", mistake=f"{name}/fake-mismatch")
        if fake.stride() != real.stride():
            raise GradingError(
                f"{name}'s fake implementation gives strides {fake.stride()}{where}, but the "
                f"operator returns strides {real.stride()}: register_fake must describe the "
                f"real output, strides included (opcheck fails on it); {layout_hint} "
                "(empty_like(t) alone keeps t's strides)", mistake=f"{name}/fake-strides")


def check_forward_fakes(name: str, function, args: tuple) -> None:
    """Every operator the forward of ``function(*args)`` calls, its fake against its real
    outputs, every one of them (an output the exercise's function keeps to itself, a saved
    statistic, included): shape and dtype."""
    for operator, op_args, op_kwargs in operator_calls(lambda: function(*args)):
        check_operator_fake(name, operator, op_args, op_kwargs, args[0].dtype)


def check_operator_fake(name: str, operator, op_args, op_kwargs, dtype) -> None:
    """One call of ``operator``: its fake's outputs against its real ones, shape and dtype
    (``dtype``: x's, to say which input the mismatch shows on)."""
    real = operator(*op_args, **op_kwargs)
    fake = _fake_outputs(name, operator, op_args, op_kwargs)
    for index, (mine, truth) in enumerate(zip(tree_leaves(fake), tree_leaves(real))):
        if isinstance(truth, torch.Tensor) and _layout(mine)[:2] != _layout(truth)[:2]:
            raise GradingError(
                f"{name}'s operator {operator}: for a {dtype} x its fake "
                f"implementation gives output {index} shape {tuple(mine.shape)}, "
                f"{mine.dtype}, but the operator returns {tuple(truth.shape)}, "
                f"{truth.dtype}: register_fake must describe every real output, whatever "
                "the input's dtype (torch.compile plans with it)",
                mistake=f"{name}/forward-fake-mismatch")


def _fake_outputs(name: str, operator, op_args, op_kwargs):
    from torch._subclasses.fake_tensor import FakeTensorMode

    try:
        with FakeTensorMode() as mode:
            fake_args, fake_kwargs = tree_map(
                lambda t: mode.from_tensor(t) if isinstance(t, torch.Tensor) else t,
                (op_args, op_kwargs))
            return operator(*fake_args, **fake_kwargs)
    except Exception as error:
        raise explain(name, f"fake implementation of {operator}", error) from error


def check_ctx_tensors(name: str, output: torch.Tensor) -> None:
    """No tensor kept as a ctx attribute by setup_context: the ctx of a registered backward is
    the first node behind ``output`` with Python attributes (views on the way are skipped)."""
    nodes, seen = [output.grad_fn], set()
    while nodes:
        node = nodes.pop(0)
        if node is None or node in seen:
            continue
        seen.add(node)
        if not hasattr(node, "__dict__"):
            nodes.extend(next_node for next_node, _ in node.next_functions)
            continue
        kept = [(path, value) for key, item in vars(node).items()
                for path, value in reachable(item, f"ctx.{key}")]
        if kept:
            outputs = [path for path, value in kept if value.grad_fn is node]
            cycle = (f"; {outputs[0]} is an output of the operator, whose grad_fn is ctx: a "
                     "reference cycle that holds its memory until Python's garbage collector "
                     "runs" if outputs else "")
            raise GradingError(
                f"{name}'s setup_context keeps a tensor as {kept[0][0]}: save it with "
                "ctx.save_for_backward and read it back from ctx.saved_tensors, so that "
                f"autograd checks it for in-place changes and saved-tensor hooks see it{cycle}",
                mistake=f"{name}/tensor-on-ctx")
        return
