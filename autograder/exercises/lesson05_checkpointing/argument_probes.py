"""Lesson 05: CheckpointFunction with tensor arguments an ordinary block rarely gets: one that
run_fn ignores (the lesson's dummy input), and one tensor passed in two positions, whose two
positions are two inputs of apply, each with its own gradient."""

import torch

from ...checks import case
from ...diagnose import diagnose_gradient
from ...errors import GradingError
from ...exercise import sample
from .checkpoint_blocks import WIDTH, _linear, mlp_block


def check_ignored_input(function, device) -> None:
    """The lesson's dummy input ("A first block on data"): a tensor argument that requires grad
    and that run_fn ignores. Backward runs, x's gradient is right, and the dummy's is None."""
    block = mlp_block(device, seed=5)
    x = sample((4, WIDTH), device, seed=5).requires_grad_()
    dummy = torch.ones((), device=device, dtype=x.dtype, requires_grad=True)
    output = function.apply(lambda h, _: block(h), x, dummy)
    grad_output = sample(tuple(output.shape), device, seed=99)
    plain = x.detach().requires_grad_()
    expected = torch.autograd.grad(block(plain), plain, grad_output)[0]
    try:
        output.backward(grad_output)
    except RuntimeError as error:
        raise GradingError(
            "CheckpointFunction's backward raised RuntimeError when run_fn ignores a tensor "
            "argument that requires grad (the lesson's dummy input, run_fn = lambda h, _: "
            f"body(h)): {str(error).splitlines()[0]}", str(error)) from error
    diagnose_gradient("x", x.grad, expected)
    check_ignored_gets_none("CheckpointFunction", "an argument run_fn ignores (the lesson's "
                            "dummy input)", dummy)


def check_ignored_gets_none(who: str, what: str, dummy, mistake: str | None = None) -> None:
    """A plain run leaves an argument it never used, which requires grad, a .grad of None: a
    tensor there (zeros included) is not the plain run's result."""
    if dummy.grad is None:
        return
    zeros = not bool(dummy.grad.detach().abs().max() > 0)
    raise GradingError(
        f"{who} gave {'zeros' if zeros else 'a gradient'} to {what}, which requires grad: run_fn "
        "run plainly leaves its .grad None, and the gradients must be a plain run's; an "
        "optimizer treats None and zeros differently (weight decay and momentum step a zero "
        ".grad); what does a fresh leaf that run_fn never used hold after backward?",
        mistake="CheckpointFunction/zeros-for-unused-argument" if zeros else mistake)


def _scaled_tanh(a, b):
    return a * torch.tanh(b)  # a's gradient is not b's: the two positions differ


def _positions(got: list, a_part, b_part, whole) -> bool:
    """Did backward return, for both positions, x's whole gradient rather than its own?"""
    return (len(got) == 2 and all(g is not None and g.shape == whole.shape for g in got)
            and not torch.allclose(a_part, b_part)
            and all(torch.allclose(g, whole) for g in got))


def check_repeated_argument(function, device) -> None:
    """apply(run_fn, x, x) with x a leaf, then with x a non-leaf (h = 1.5 * y): the caller's
    leaf gets the sum of the two positions' gradients, each position its own (one fresh leaf
    made for both gives each the sum: twice the true gradient)."""
    value = sample((3, WIDTH), device, seed=31)
    grad_output = sample((3, WIDTH), device, seed=32)
    for kind, scale in (("a leaf", 1.0), ("a non-leaf (h = 1.5 * y)", 1.5)):
        a, b = (value * scale).requires_grad_(), (value * scale).requires_grad_()
        torch.autograd.backward(_scaled_tanh(a, b), grad_output)
        leaf = value.detach().requires_grad_()
        x = leaf if scale == 1.0 else leaf * scale
        returned = []
        where = f"CheckpointFunction.apply(run_fn, x, x), run_fn(a, b) = a * tanh(b), x {kind}"
        output = function.apply(_scaled_tanh, x, x)
        node = getattr(output, "grad_fn", None)
        handle = (node.register_hook(lambda given, _: returned.append(given))
                  if isinstance(node, torch.autograd.function.BackwardCFunction) else None)
        try:
            output.backward(grad_output)
        except RuntimeError as error:
            raise GradingError(f"{where}: backward raised RuntimeError: "
                               f"{str(error).splitlines()[0]}", str(error)) from error
        finally:
            if handle is not None:
                handle.remove()
        got = [g for g in (returned[0] if returned else ()) if g is not None]
        if _positions(got, a.grad, b.grad, a.grad + b.grad):
            raise GradingError(
                f"{where}: backward returned x's whole gradient for each of the two positions, "
                "so the caller's x got it twice: the recomputation fed one fresh leaf to both "
                "positions; each position is an input of apply of its own and gets its own "
                "gradient (autograd adds them up for x)",
                mistake="CheckpointFunction/one-leaf-for-repeated-tensor")
        diagnose_gradient(f"the caller's x ({kind}), passed in two positions",
                          leaf.grad, scale * (a.grad + b.grad))


def check_recompute_dtypes(dtypes: list, error: GradingError | None = None,
                           grad_dtype: torch.dtype | None = None) -> None:
    """The dtypes of run_fn's tensor arguments at each call (forward's first, the recomputation
    last): a recomputation on copies in another dtype (.float(), .to(...)) is named, before the
    failure it causes (a dtype mismatch in a layer, or gradients of float32 precision); a cast
    to ``grad_dtype`` (grad_output's) is named as that."""
    if len(dtypes) < 2 or dtypes[-1] == dtypes[0]:
        return
    changed = [(old, new) for old, new in zip(dtypes[0], dtypes[-1]) if old != new]
    old, new = changed[0] if changed else (dtypes[0], dtypes[-1])
    new_name = str(new).removeprefix('torch.')
    why = (f" ({new_name} is grad_output's dtype, the output's, not the arguments')"
           if new == grad_dtype else "")
    raise GradingError(
        f"CheckpointFunction's backward recomputed run_fn on {new_name} "
        f"copies of arguments that were {str(old).removeprefix('torch.')} in forward{why}: the "
        "recomputation changed the dtype, so it is not the computation forward ran (a layer "
        "refuses the mix, or the gradients are not a plain run's); where did a fresh leaf "
        "change dtype on its way from the saved tensor?",
        error.details if error is not None else "",
        mistake="CheckpointFunction/recomputes-in-another-dtype")


def _precision_edge(a, b):
    """float64 a and float32 b in, float32 out: (a - 1)² is only exact in a's float64."""
    return ((a - 1.0) ** 2).float() * torch.tanh(b)


def _to_bfloat16(x):
    return (torch.tanh(x) * x).bfloat16()


def _recomputed(function, block, inputs: dict, grad_output, when: str) -> dict:
    """``apply(run_fn, *inputs)`` then backward, run_fn being ``block`` recording the dtypes of
    its tensor arguments at each call: a recomputation on copies in another dtype is named
    first (check_recompute_dtypes), before the error or the gradients it causes. The true
    gradients (``block`` run plainly), by input name."""
    seen = []  # the dtypes of run_fn's tensor arguments at each call

    def run_fn(*args):
        seen.append([a.dtype for a in args if torch.is_tensor(a)])
        return block(*args)

    plain = [x.detach().requires_grad_() for x in inputs.values()]
    expected = torch.autograd.grad(block(*plain), plain, grad_output)
    output = function.apply(run_fn, *inputs.values())
    try:
        output.backward(grad_output)
    except RuntimeError as error:
        raised = GradingError(f"CheckpointFunction's backward raised RuntimeError when {when}: "
                              f"{str(error).splitlines()[0]}", str(error))
        check_recompute_dtypes(seen, raised, grad_output.dtype)
        raise raised from error
    check_recompute_dtypes(seen, None, grad_output.dtype)
    return dict(zip(inputs, expected))


def check_full_precision(name: str, got, expected, out_dtype: torch.dtype) -> None:
    """An argument wider than the output (float64 under a float32 output, float32 under a
    bfloat16 one): a plain run gives its gradient in its own precision. One rounded to the
    output's dtype (returned in grad_output's dtype; autograd casts it back) is named."""
    if got is None or not torch.is_tensor(got) or got.shape != expected.shape:
        return
    tight = 64 * torch.finfo(expected.dtype).eps
    if torch.allclose(got, expected, rtol=tight, atol=0):
        return
    rounded = expected.to(out_dtype).to(expected.dtype)
    if not torch.allclose(got.to(expected.dtype), rounded, rtol=tight, atol=0):
        return
    wide, narrow = (str(t).removeprefix("torch.") for t in (expected.dtype, out_dtype))
    raise GradingError(
        f"CheckpointFunction returned {name}'s gradient rounded to {narrow}, the dtype of "
        f"grad_output (the output's), where {name} is {wide}: a plain run gives it in {wide} "
        f"precision (autograd casts yours back to {wide}, but the digits are lost); in which "
        "dtype is the gradient a fresh leaf receives?",
        mistake="CheckpointFunction/gradient-in-output-dtype")


def _half_blocks(dtype, device) -> dict:
    """An element-wise block and a Linear block, computing in ``dtype``."""
    layer = _linear(WIDTH, WIDTH, device, 53).to(dtype)
    return {"run_fn(x) = tanh(x) * x * x, element-wise": lambda h: torch.tanh(h) * h * h,
            f"run_fn = a {str(dtype).removeprefix('torch.')} Linear(5, 5), then tanh":
                lambda h: torch.tanh(layer(h))}


def _dtype_cases(device) -> list[tuple]:
    """(case, run_fn's block, its inputs, grad_output, when, the input wider than the output):
    run_fn(a, b) with a float64, b float32 and a float32 output; a float32 x under a bfloat16
    output; then a bfloat16 x and a float16 x, each through an element-wise block and a Linear
    in x's dtype."""
    cases = [
        ("run_fn(a, b) with a float64, b float32, its output float32 (grad_output too)",
         _precision_edge,
         {"a": (1.0 + 1e-4 * sample((3, WIDTH), device, seed=41)).requires_grad_(),
          "b": sample((3, WIDTH), device, seed=42, dtype=torch.float32).requires_grad_()},
         sample((3, WIDTH), device, seed=43, dtype=torch.float32),
         "run_fn takes a float64 a and a float32 b and returns float32", "a"),
        ("run_fn(x) = tanh(x) * x, then .bfloat16(): x float32 of shape (3, 5), its output "
         "(grad_output too) bfloat16", _to_bfloat16,
         {"x": sample((3, WIDTH), device, seed=44, dtype=torch.float32).requires_grad_()},
         sample((3, WIDTH), device, seed=45, dtype=torch.bfloat16),
         "run_fn takes a float32 x and returns bfloat16", "x")]
    for dtype in (torch.bfloat16, torch.float16):
        name = str(dtype).removeprefix("torch.")
        cases += [(f"{label}, x {name} of shape (3, 5), grad_output {name}", block,
                   {"x": sample((3, WIDTH), device, seed=51, dtype=dtype).requires_grad_()},
                   sample((3, WIDTH), device, seed=52, dtype=dtype), f"run_fn takes a {name} x",
                   None) for label, block in _half_blocks(dtype, device).items()]
    return cases


def check_argument_dtypes(function, device) -> None:
    """Each of _dtype_cases: the recomputation must see every argument in its own dtype (one
    cast for every leaf, to grad_output's dtype, to float64, to float32 or the default dtype,
    changes one, and is named before the gradient it spoils or a layer's dtype error), and an
    argument wider than the output keeps its gradient's precision."""
    for label, block, inputs, grad_output, when, wide in _dtype_cases(device):
        with case(label):
            expected = _recomputed(function, block, inputs, grad_output, when)
            if wide is not None:
                check_full_precision(wide, inputs[wide].grad, expected[wide], grad_output.dtype)
            for name, x in inputs.items():
                diagnose_gradient(f"{name} ({str(x.dtype).removeprefix('torch.')})", x.grad,
                                  expected[name])
