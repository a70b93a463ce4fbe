"""Lesson 13: silu_mul, the custom operator autograd_course::silu_mul computing silu(a) * b with
a Triton forward kernel and a Triton backward kernel."""

import torch

from ...checks import case, make_inputs, run_forward
from ...contract import check_each_input_alone, covers
from ...domain import Case, Domain
from ...errors import GradingError
from ...exercise import Exercise, sample
from .kernel_checks import (Calls, check_compiled, check_in_kernels, check_opcheck,
                            check_operator, explain, kernel_battery)
from .kernel_domain import (KERNEL_MEMORY_CLAUSE, check_default_device_frozen,
                            check_frozen_inputs_get_none, kernel_operator)
from .kernel_interpreter import language_patched_once_per_launch
from .kernel_globals import check_no_global_rebound
from .kernel_kept import KEPT_DTYPES, check_no_tensor_kept, raise_if_stale
from .kernel_fakes import check_backward_fakes, check_ctx_tensors, check_output_fakes
from .kernel_unneeded import check_unneeded_not_stored
from .kernel_unwritten import poisoned_allocations
from ..shared.call_state import check_calls_of_two_sizes
from .silu_mul_precision import (check_bfloat16_range, check_float16_steps, check_float64_gates,
                                 check_half, check_large_activations, computed_in_float32)
from .silu_mul_spec import HALF, SILU_MUL, checked_call, silu_mul_values


def check_saves_inputs_only(silu_mul, device) -> None:
    """What setup_context saves for backward is a and b alone, their memory as given: the
    output y, any tensor forward made, or a contiguous copy of an input is an activation kept
    alive until backward. a and b are SwiGLU's halves, h.chunk(2, -1): not contiguous, so
    a.contiguous() is a copy."""
    covers("saves nothing beyond a and b")
    values = silu_mul_values((3, 5), device, seed=21)
    h = torch.cat((values["a"], values["b"]), -1).requires_grad_()
    inputs = dict(zip(("a", "b"), h.chunk(2, -1)))
    try:
        saved = run_forward(Calls(silu_mul), SILU_MUL, inputs).saved
    except Exception:  # noqa: BLE001 -- a probe: the checks before it name a failing call
        return
    extra = next((s for s in saved if s.tensor is not None and not s.role.startswith("input")),
                 None)
    if extra is None:
        return
    copied = next((n for n, v in inputs.items() if v.shape == extra.tensor.shape
                   and torch.equal(v.detach().to(extra.dtype), extra.tensor.detach())), None)
    if copied is not None:
        raise GradingError(
            f"silu_mul saves a copy of {copied} for backward ({extra.dtype}, shape "
            f"{extra.shape}, not {copied}'s memory), with a and b the halves of h.chunk(2, -1), "
            f"as SwiGLU splits its projection: {copied} is not contiguous there, so a "
            f"contiguous (or cast) copy of it is new memory. The caller keeps h alive anyway: "
            "the copy is a whole extra activation held until backward, where the contract "
            "keeps nothing beyond the inputs' own memory", mistake="silu_mul/saves-input-copy")
    what = "the output y" if extra.role == "output" else "a tensor that is neither a nor b"
    raise GradingError(
        f"silu_mul saves an extra tensor of shape {extra.shape} ({what}) for backward: the "
        "contract keeps nothing beyond the inputs' own memory, from which (with g) both "
        "gradients are computed; saving more keeps a whole extra activation in memory until "
        "backward runs", mistake="silu_mul/saves-extra-tensor")


def check_non_contiguous(silu_mul, device) -> None:
    """A transposed a and a column-sliced b, in 2-D and in 3-D (a's leading dims swapped: no
    view of it flattens them): the kernel must not read them as flat memory."""
    covers("non-contiguous inputs")
    for where, values in [
            ("a transposed, b a strided slice",
             {"a": 2 * sample((7, 5), device, seed=3).t(), "b": sample((5, 14), device)[:, ::2]}),
            ("a of shape (2, 3, 4) with its first two dims swapped, b a strided slice",
             {"a": 2 * sample((3, 2, 4), device, seed=5).transpose(0, 1),
              "b": sample((2, 3, 8), device, seed=6)[..., ::2]})]:
        try:
            with case(where):
                checked_call(silu_mul, values)
        except GradingError as error:
            dense = {name: value.contiguous() for name, value in values.items()}
            try:
                checked_call(silu_mul, dense)
            except GradingError:
                raise error from None
            if (written := _written_flat(silu_mul, values)) is not None:
                raise GradingError(
                    f"silu_mul is right for contiguous inputs but wrong for the same values in "
                    f"a transposed or strided view, and its {written[0]} has strides "
                    f"{written[1]}, those of the input {written[2]}, while its memory read in "
                    f"flat order holds the right values: the kernel writes a contiguous "
                    f"result, but the tensor it writes into took {written[2]}'s layout "
                    f"(torch.empty_like keeps its argument's strides: was it made before "
                    f"{written[2]}.contiguous()?)", error.details, case=where,
                    mistake="silu_mul/output-takes-input-strides") from error
            raise GradingError(
                "silu_mul is right for contiguous inputs but wrong for the same values in a "
                "transposed or strided view: a kernel indexes flat memory, so make the inputs "
                "contiguous on the host (a.contiguous()) or pass their strides to the kernel",
                error.details, case=where, mistake="silu_mul/strided-read-as-flat") from error


def _written_flat(silu_mul, values: dict) -> tuple | None:
    """(what, its strides, the input whose strides it has) for the output or a gradient that
    is not contiguous, has an input's strides, and holds the right values when its memory is
    read in contiguous order (a kernel that writes flat into a buffer made like the input);
    None when no result is such."""
    leaves = {n: v.detach().clone().requires_grad_() for n, v in values.items()}
    try:
        y = silu_mul(*leaves.values())
        grads = torch.autograd.grad(y, tuple(leaves.values()), torch.ones_like(y))
    except Exception:  # noqa: BLE001 -- a probe: the battery's own message stands
        return None
    truth_y = SILU_MUL.reference(*leaves.values())
    truths = torch.autograd.grad(truth_y, tuple(leaves.values()), torch.ones_like(truth_y))
    for what, got, truth in [("output y", y, truth_y), *(
            (f"gradient for {n}", g, t) for n, g, t in zip(leaves, grads, truths))]:
        if not isinstance(got, torch.Tensor) or got.is_contiguous() or got.shape != truth.shape:
            continue
        like = next((n for n, v in values.items() if v.stride() == got.stride()), None)
        flat = torch.as_strided(got.detach(), got.shape, torch.empty_like(
            got, memory_format=torch.contiguous_format).stride(), got.storage_offset())
        if like is not None and torch.allclose(flat, truth.detach(), rtol=1e-6, atol=1e-9):
            return what, got.stride(), like
    return None


def check_zeros(silu_mul, device) -> None:
    """Zeros in a and in b, where silu(a) * b and its gradients are finite: what divides by a
    or b, to recover silu(a) or sigmoid(a) from a saved output, is not."""
    values = silu_mul_values((6,), device, seed=6)
    values["a"][::2], values["b"][:3] = 0, 0
    try:
        with case("a and b of shape (6,) with zero entries"):
            checked_call(silu_mul, values)
    except GradingError as error:
        if not (getattr(error, "mistake", "") or "").endswith(
                ("/non-finite-output", "/non-finite-gradient")):
            raise
        raise GradingError(
            "silu_mul's results are not finite where a or b is 0, though silu(a) * b and its "
            "gradients are: silu(a) or sigmoid(a) recovered from the saved output by dividing "
            "by b or a? Save a and b, and compute sigmoid(a) again in the backward kernel",
            error.details, case=error.case, mistake="silu_mul/not-finite-at-zero") from error


def check_gradients_own_memory(silu_mul, device) -> None:
    """The two gradients are tensors of their own: not rows of one (2, ...) buffer that the
    backward operator returned and the registered backward split (a.grad would keep b.grad's
    memory alive, and the reverse)."""
    covers("every output a new tensor of its own")
    a, b = (v.requires_grad_() for v in silu_mul_values((3, 5), device, seed=16).values())
    grad_a, grad_b = torch.autograd.grad(silu_mul(a, b), (a, b), torch.ones(3, 5, device=device,
                                                                          dtype=a.dtype))
    if grad_a.untyped_storage().data_ptr() == grad_b.untyped_storage().data_ptr():
        raise GradingError(
            "silu_mul's gradients for a and b are views of one buffer: both lie in the memory "
            f"of one allocation (grad_a at offset {grad_a.storage_offset()}, grad_b at "
            f"{grad_b.storage_offset()}), such as out[0] and out[1] of a (2, ...) tensor the "
            "backward operator returned. The contract asks for every output a tensor of its "
            "own: a.grad would keep b.grad's memory alive. What should the backward operator "
            "return, then, for two gradients?", mistake="silu_mul/gradients-share-a-buffer")


def _reads_one_gradient(silu_mul, device) -> bool:
    """Whether the backward used grad_output's first element for every element (a scalar
    load, as for a 0-d gradient): both gradients match that and not the true ones."""
    a, b = (v.requires_grad_() for v in silu_mul_values((3, 5), device, seed=11).values())
    grad_output = sample((3, 5), device, seed=12)
    try:
        got = torch.autograd.grad(silu_mul(a, b), (a, b), grad_output)
    except Exception:  # noqa: BLE001 -- a probe: the battery's own message stands
        return False
    reference = SILU_MUL.reference(a, b)
    first = torch.autograd.grad(reference, (a, b), grad_output.flatten()[0].expand(3, 5),
                                retain_graph=True)
    truth = torch.autograd.grad(reference, (a, b), grad_output)
    return all(torch.allclose(g, f) and not torch.allclose(g, t)
               for g, f, t in zip(got, first, truth))


def _held_fixed(silu_mul, device) -> str | None:
    """Which factor of silu(a) = a * sigmoid(a) the gradient for a held fixed ("a" or
    "sigmoid(a)"), when it matches g * b times the derivative of the other factor alone, and
    not the true gradient; None otherwise."""
    a, b = (v.requires_grad_() for v in silu_mul_values((3, 5), device, seed=14).values())
    grad_output = sample((3, 5), device, seed=15)
    try:
        got = torch.autograd.grad(silu_mul(a, b), (a, b), grad_output)[0]
    except Exception:  # noqa: BLE001 -- a probe: the battery's own message stands
        return None
    s = torch.sigmoid(a.detach())
    truth = torch.autograd.grad(SILU_MUL.reference(a, b), a, grad_output)[0]
    partial = {"sigmoid(a)": s, "a": a.detach() * s * (1 - s)}  # the other factor's derivative
    for fixed, derivative in partial.items():
        if (torch.allclose(got, grad_output * b.detach() * derivative)
                and not torch.allclose(got, truth)):
            return fixed
    return None


def check_kernels_do_the_work(silu_mul, device) -> None:
    """The arithmetic runs in the kernels, on 37 elements and on 4 elements and 0-d, where a
    host fast path for small tensors would hide. (One launch per pass is counted on the
    domain's large case, past 2**20 elements: kernel_domain.)"""
    covers("arithmetic in the learner's kernels")
    for shape in [(37,), (4,), ()]:
        a, b = (v.requires_grad_() for v in silu_mul_values(shape, device).values())
        with case(f"a and b of shape {shape}"):
            check_in_kernels("silu_mul", "forward", lambda: silu_mul(a, b))
            out = silu_mul(a, b)
            grad_output = torch.ones_like(out)
            check_in_kernels("silu_mul", "backward",
                             lambda: torch.autograd.grad(out, (a, b), grad_output))


def check_fake(silu_mul, device) -> None:
    """The fake output against the real one, in float32 and for a transposed float64 a and b,
    and the fake outputs of the operator called in backward."""
    a, b = silu_mul_values((3, 5), device, dtype=torch.float32).values()
    a64, b64 = silu_mul_values((3, 5), device).values()
    check_output_fakes("silu_mul", silu_mul, [("", (a, b)),
                                              (" for a transposed a and b", (a64.t(), b64.t()))],
                       "the kernel writes a contiguous output, so return one")
    check_backward_fakes("silu_mul", silu_mul, (a64.t(), b64.t()), ("a", "b"))


def silu_mul_full(silu_mul, device) -> None:
    with kernel_battery("silu_mul", silu_mul, device):
        check_operator(silu_mul, "silu_mul", tuple(silu_mul_values((4,), device).values()))
        try:
            for seed, shape in enumerate([(3, 5), (1031,), (2, 3, 7), (1024,)]):
                with case(f"a and b of shape {shape}"):
                    checked_call(silu_mul, silu_mul_values(shape, device, seed=seed))
        except GradingError as error:
            if fixed := _held_fixed(silu_mul, device):
                raise GradingError(
                    f"silu_mul's gradient for a is g * b times the derivative of silu(a) = "
                    f"a * sigmoid(a) with {fixed} held fixed: both factors move with a. What "
                    "does the product rule add? my_dy_da, above the exercise's answer cell, "
                    "checks one entry of it against autograd",
                    error.details, case=error.case,
                    mistake="silu_mul/product-rule-one-factor") from error
            if not _reads_one_gradient(silu_mul, device):
                raise
            raise GradingError(
                "silu_mul's backward uses grad_output's first element for every element: its "
                "gradients match grad_output[0] broadcast, not grad_output. Here grad_output "
                "is a tensor like y (a 0-d gradient is loaded once; this one is loaded per "
                "element, with the offsets and mask of a and b)",
                error.details, case=error.case,
                mistake="silu_mul/grad-output-read-once") from error
        check_zeros(silu_mul, device)
        check_gradients_own_memory(silu_mul, device)
        a, b = (v.requires_grad_() for v in silu_mul_values((3, 5), device).values())
        check_ctx_tensors("silu_mul", silu_mul(a, b))
        covers("sizes not a multiple of the block")
        covers("0-d and empty inputs")
        for shape in [(), (0, 3)]:
            with case(f"a and b of shape {shape}"):
                checked_call(silu_mul, silu_mul_values(shape, device, seed=9))
        check_each_input_alone(Calls(silu_mul), SILU_MUL, silu_mul_values((6, 5), device, seed=2))
        covers("each call's own state")  # past any block a learner picks (4096), then 3
        with case("a call on 4099 elements, then one on 3"), poisoned_allocations():
            check_calls_of_two_sizes(Calls(silu_mul), SILU_MUL,
                                     silu_mul_values((4099,), device, seed=17),
                                     silu_mul_values((3,), device, seed=18))
        covers("gradcheck in float64")
        a, b = (v.requires_grad_() for v in silu_mul_values((6,), device, seed=5).values())
        if not torch.autograd.gradcheck(silu_mul, (a, b), raise_exception=False):
            raise_if_stale("silu_mul", silu_mul, {"a": a, "b": b})
            if computed_in_float32(silu_mul, a, b):
                raise GradingError("silu_mul computes float64 inputs in float32: its float64 "
                                   "results agree with the float32 computation, not with float64 "
                                   "(gradcheck fails); convert only float16 and bfloat16 to "
                                   "float32 and keep float64 in float64",
                                   mistake="silu_mul/float64-in-float32")
            raise GradingError("gradcheck failed for silu_mul: the analytic Jacobian differs "
                               "from the numerical one")
        check_kernels_do_the_work(silu_mul, device)  # before the dtypes: names host arithmetic
        check_non_contiguous(silu_mul, device)
        check_large_activations(silu_mul, device)
        check_float64_gates(silu_mul, device)
        check_half(silu_mul, device)
        check_float16_steps(silu_mul, device)
        check_bfloat16_range(silu_mul, device)
        check_fake(silu_mul, device)
        covers("opcheck")
        check_opcheck("silu_mul", "silu_mul",
                      tuple(v.requires_grad_() for v in silu_mul_values((5, 3), device).values()))
        covers("torch.compile without graph breaks")
        check_compiled("silu_mul", silu_mul, tuple(silu_mul_values((4, 3), device, seed=4).values()))
        covers("None for an input that needs no gradient")
        check_frozen_inputs_get_none("silu_mul", silu_mul, tuple(
            silu_mul_values((4, 7), device, seed=33, dtype=torch.float32).values()))
        check_unneeded_not_stored("silu_mul", silu_mul, silu_mul_values(
            (4, 7), device, seed=33, dtype=torch.float32), ("a", "b"))
        check_default_device_frozen(SILU_MUL, silu_mul, silu_mul_values(
            (4, 7), torch.device(device), seed=33, dtype=torch.float32), torch.device(device))
        check_saves_inputs_only(silu_mul, device)
        check_no_global_rebound("silu_mul", silu_mul, _one_call(silu_mul, device, torch.float32))
        # last: a kept output or a stale one is named by the checks above
        check_no_tensor_kept("silu_mul", silu_mul, [
            (f"{str(dtype).removeprefix('torch.')} a and b of shape (5, 7)",
             _one_call(silu_mul, device, dtype)) for dtype in KEPT_DTYPES])
        check_no_global_rebound("silu_mul", silu_mul,  # a size no check before it called
                                _one_call(silu_mul, device, torch.float32, (3, 11)))


def _one_call(silu_mul, device, dtype, shape=(5, 7)):
    """One forward and backward on fresh inputs: the output and the gradients."""
    def call():
        a, b = (v.requires_grad_() for v in silu_mul_values(shape, device, 31, dtype).values())
        y = silu_mul(a, b)
        return (y.detach(), *torch.autograd.grad(y, (a, b), torch.ones_like(y)))
    return call


# Triton refuses a block of more than 2**20 elements: one program over the whole tensor
# (BLOCK = triton.next_power_of_2(n)), or one per row of the last dimension (Liger-Kernel's
# SwiGLU layout, BLOCK = next_power_of_2(shape[-1])), fails here; "any shape" includes these
LARGE = (2**20 + 1,)  # one row of 1,048,577 elements


def _large(device, dtype) -> dict:
    return silu_mul_values(LARGE, device, seed=13, dtype=dtype)


EXERCISES = [
    Exercise("silu_mul", "13_kernels", silu_mul_full,
             within=language_patched_once_per_launch,
             example=lambda: tuple(silu_mul_values((3, 4), "cpu").values()),
             contract=("sizes not a multiple of the block", "0-d and empty inputs",
                       "gradcheck in float64", "non-contiguous inputs",
                       "large activations in float32", "float16 and bfloat16 within 2 ulp",
                       "arithmetic in the learner's kernels",
                       "opcheck", "torch.compile without graph breaks",
                       "every output a new tensor of its own",
                       "float16 past float16's normal range", "each call's own state",
                       "float64 gates up to 300", "saves nothing beyond a and b"),
             domain=Domain(SILU_MUL, lambda device, dtype=torch.float64, seed=0: silu_mul_values(
                               (3, 5), device, seed=seed, dtype=dtype),
                           prepare=kernel_operator("silu_mul", launches_counted_past=2**20),
                           dtypes=(torch.float64, torch.float32, *HALF),
                           dtype_clause="float32 and float64, and float16/bfloat16 computing in "
                                        "float32 and returning the input dtype",
                           accumulates={dtype: torch.float32 for dtype in HALF},
                           layout_clause="any shape, non-contiguous inputs made contiguous",
                           large=Case(_large, f"any shape: a and b of shape {LARGE}, past "
                                      "2**20 elements, the largest block Triton accepts",
                                      dtype=torch.float32),
                           linear_memory=False, linear_memory_clause=KERNEL_MEMORY_CLAUSE)),
]
