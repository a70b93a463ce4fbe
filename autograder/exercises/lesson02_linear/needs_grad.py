"""Lesson 02: backward skips every matrix product whose gradient nobody asked for (counted in
FLOPs) and reads no input that no wanted gradient depends on, for MyLinearFunction and
FusedLinearReLU."""

import itertools

import torch

from ...checks import Spec, case, make_inputs, run_backward, run_forward
from ...errors import GradingError
from ..shared.backward_reads import backward_reading, raise_unneeded_read
from .backward_work import _backward_flow
from .leading_dims import IN_FEATURES, OUT_FEATURES, linear_values

NEEDS = {"x": {"weight"}, "weight": {"x"}, "bias": set()}


def check_needs_input_grad(function, spec: Spec, device) -> None:
    """Backward must skip every matmul whose gradient nobody asked for (counted in FLOPs), and
    read no input that no wanted gradient depends on (products written without a matmul)."""
    values = linear_values((6,), device)
    matmul_flops = 2 * 6 * IN_FEATURES * OUT_FEATURES
    for count in (1, 2):
        for wanted in itertools.combinations(["x", "weight", "bias"], count):
            inputs = make_inputs(values, requires_grad=set(wanted))
            forward = run_forward(function, spec, inputs)
            grad_output = torch.ones_like(forward.output)
            if count == 1:  # one input alone: watch the inputs its gradient does not read
                backward, reads = backward_reading(spec, inputs, forward.output, grad_output,
                                                   NEEDS, count_flops=True)
            else:
                backward, reads = run_backward(spec, forward.output, inputs, grad_output,
                                               count_flops=True), []
            needed = matmul_flops * len({"x", "weight"} & set(wanted))
            # grad_bias may be a matmul too (grad_output.new_ones(rows) @ grad_output)
            allowed = needed + (2 * 6 * OUT_FEATURES if "bias" in wanted else 0)
            if backward.flops > allowed:
                products = _product_shapes(function, spec, values, wanted)
                raise GradingError(_extra_work_hint(spec, backward.flops, needed, wanted, reads,
                                                    matmul_flops, products, values),
                                   mistake=f"{spec.name}/ignores-needs-input-grad")
            with case(f"only {' and '.join(wanted)} requiring grad"):
                raise_unneeded_read(spec, inputs, backward, reads)


_PRODUCTS = {"mm", "bmm", "addmm", "baddbmm", "addbmm", "mv", "addmv", "dot"}


def _product_shapes(function, spec: Spec, values: dict, wanted: tuple) -> list[tuple]:
    """The shapes of the matrix products backward ran, size-1 dimensions dropped."""
    flow = _backward_flow(function, spec, make_inputs(values, requires_grad=set(wanted)))
    return [_squeezed(shape) for name, shape, *_ in flow.ops if name in _PRODUCTS]


def _squeezed(shape) -> tuple:
    return tuple(size for size in shape if size != 1)


def _extra_work_hint(spec: Spec, flops: int, needed: int, wanted: tuple, reads: list,
                     matmul_flops: int, products: list, values: dict) -> str:
    """What the extra FLOPs were: a product of the shape of a gradient nobody asked for (that
    gradient named), a wanted gradient's product run twice, or else a whole product for grad_x
    or grad_weight (with one input alone, what backward read tells which), or, when the extra
    is not a whole product of that size and the bias is frozen, a bias column's products (a
    grad_bias computed by a matrix product, or folded into grad_weight's as G^T @ [x, 1])."""
    extra = flops - needed
    skipped = [name for name in ("x", "weight") if name not in wanted]
    shapes = {n: _squeezed(values[n].shape) for n in ("x", "weight")}
    made = {n: sum(p in (shapes[n], shapes[n][::-1]) for p in products) for n in shapes}
    repeated = [n for n in wanted if made.get(n, 0) > 1]
    if repeated and not any(made[n] for n in skipped):
        n = repeated[0]
        return (f"backward did {flops} FLOPs where {needed} suffice: grad_{n} computed "
                f"{made[n]} times ({made[n]} matrix products of {n}'s shape "
                f"{tuple(values[n].shape)}), where one is needed. Which of your products "
                "repeats another?")
    read = {name for name, _ in reads}
    blamed = ([n for n in skipped if made[n]] or [n for n in skipped if NEEDS[n] & read]
              or (skipped if not read else []))
    if extra < matmul_flops or extra % matmul_flops:
        blamed = [n for n in blamed if extra >= matmul_flops]
        if "bias" not in wanted:
            blamed.append("bias")
    blamed = blamed or skipped or ["bias"]
    flags = " and ".join(f"ctx.needs_input_grad[{spec.input_names.index(n)}] is False for {n}"
                         for n in blamed)
    where = (f": the extra {extra} are products for a bias column, grad_bias's work, done "
             "although the bias is frozen" if blamed == ["bias"] else "")
    grads = " and ".join("grad_" + n for n in blamed)
    return (f"backward did {flops} FLOPs where {needed} suffice{where}: {flags}. Which of "
            f"your products is for {grads}, and what makes it run all the same?")
