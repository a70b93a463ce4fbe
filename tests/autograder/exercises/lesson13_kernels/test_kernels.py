"""Lesson 13's kernel checks: the interpreter's memory guard, ulps, and the probe that looks
inside custom operators for arithmetic done on the host."""

import pytest
import torch

from autograder.errors import GradingError
from autograder.exercises.lesson13_kernels import kernel_checks
from autograder.exercises.lesson13_kernels.kernel_checks import (check_in_kernels, guarded_memory,
                                                                 interpreting, require_triton)
from autograder.exercises.lesson13_kernels.kernel_ulps import ulps

pytestmark = pytest.mark.lesson13
triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")

if not interpreting():
    pytest.skip("these tests run Triton's interpreter (no GPU here)", allow_module_level=True)


@triton.jit
def _double(x_ptr, y_ptr, n, BLOCK: tl.constexpr, MASKED: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if MASKED:
        x = tl.load(x_ptr + offsets, mask=offsets < n)
        tl.store(y_ptr + offsets, 2 * x, mask=offsets < n)
    else:
        x = tl.load(x_ptr + offsets)
        tl.store(y_ptr + offsets, 2 * x)


def test_the_guard_refuses_an_unmasked_tail_before_it_reads():
    """Is a load past the end of a 5-element tensor refused, and named as a missing mask?"""
    x, y = torch.arange(5.0), torch.zeros(5)
    with pytest.raises(GradingError, match="reads outside its tensors on lanes past the end"):
        with guarded_memory("double"):
            _double[(1,)](x, y, 5, BLOCK=8, MASKED=False)
    assert torch.equal(y, torch.zeros(5))


def test_the_guard_lets_masked_kernels_run_and_restores_the_interpreter():
    """Does a masked kernel run under the guard, and is the interpreter unpatched after it?"""
    from triton.runtime import interpreter

    store = interpreter.InterpreterBuilder.create_masked_store
    x, y = torch.arange(5.0), torch.zeros(5)
    with guarded_memory("double"):
        _double[(1,)](x, y, 5, BLOCK=8, MASKED=True)
    assert torch.equal(y, 2 * x)
    assert interpreter.InterpreterBuilder.create_masked_store is store


def test_ulps_counts_representable_steps():
    """Is the next float16 after 1.0 one ulp away, and 1.0 itself zero?"""
    one = torch.tensor([1.0, 1.0], dtype=torch.float16)
    step = torch.nextafter(one.float(), torch.tensor(2.0)).half()  # rounds back to 1.0
    assert ulps(one, one).tolist() == [0.0, 0.0]
    assert ulps(torch.tensor([1.0 + 2 ** -10], dtype=torch.float16), one[:1]).item() == 1.0
    assert ulps(step, one).max().item() == 0.0


@torch.library.custom_op("autograd_course::_probe_host_math", mutates_args=())
def _host_math(x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    _double[(1,)](torch.sigmoid(x), y, x.numel(), BLOCK=8, MASKED=True)
    return y


def test_the_probe_sees_host_arithmetic_inside_a_custom_operator():
    """Is a sigmoid computed on the host inside the operator named, though the operator is one
    node to the dispatcher?"""
    x = torch.ones(3)
    with pytest.raises(GradingError, match=r"computes with torch ops \(sigmoid\)"):
        check_in_kernels("op", "forward", lambda: _host_math(x))


def test_a_call_launching_no_kernel_is_refused():
    """Is an operator that launches no Triton kernel told so?"""
    with pytest.raises(GradingError, match="launched no Triton kernel"):
        check_in_kernels("op", "forward", lambda: torch.empty(3))


def test_triton_is_present_and_consistent():
    """Does the environment pass require_triton (interpreter chosen before triton's import)?"""
    require_triton()
    assert interpreting()


@pytest.mark.parametrize("name", ["silu_mul", "rms_norm_rows"])
def test_an_untouched_stub_is_told_it_is_not_implemented(name):
    """Does the released stub fail with 'not implemented yet', not with an error of the probes
    that run it inside a custom operator?"""
    from autograder.grading import verdict
    from tools.solutions import stub

    passed, message = verdict(name, stub(name))
    assert not passed
    assert message.splitlines()[0] == (f"{name} is not implemented yet: its stub still raises "
                                       "NotImplementedError")


@triton.jit
def _through_float64(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets, mask=offsets < n).to(tl.float64)
    tl.store(y_ptr + offsets, x.to(y_ptr.dtype.element_ty), mask=offsets < n)


def test_the_interpreters_float64_to_bfloat16_cast_is_counted_and_still_wrong():
    """Is a float64 -> bfloat16 conversion in a kernel counted, the interpreter restored after,
    and is the conversion still wrong (the lesson says so: update it when this fails)?"""
    from triton.runtime.interpreter import InterpreterBuilder

    from autograder.exercises.lesson13_kernels.kernel_interpreter import float64_to_bfloat16

    cast = InterpreterBuilder.cast_impl
    x, y = torch.tensor([0.5, 1.75, -3.0]), torch.empty(3, dtype=torch.bfloat16)
    with float64_to_bfloat16() as seen:
        _through_float64[(1,)](x, y, 3, BLOCK=4)
    assert seen and InterpreterBuilder.cast_impl is cast
    assert not torch.equal(y, x.to(torch.bfloat16))


@triton.jit
def _square(x_ptr, y_ptr, n, BLOCK: tl.constexpr, CONVERT: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets, mask=offsets < n)
    if CONVERT:
        x = x.to(tl.float32)
    tl.store(y_ptr + offsets, (x * x).to(y_ptr.dtype.element_ty), mask=offsets < n)


def test_the_interpreters_bfloat16_arithmetic_is_counted_and_still_wrong():
    """Is a product of two bfloat16 values in a kernel counted (and one converted to float32
    first not), the interpreter restored after, and is the product still garbage while float16's
    is right (the lesson says so: update it when this fails)?"""
    from triton.runtime.interpreter import InterpreterBuilder

    from autograder.exercises.lesson13_kernels.kernel_interpreter import bfloat16_steps

    binary = InterpreterBuilder.binary_op
    x = torch.tensor([1.5, -2.0, 16.0, 0.55])
    for dtype, convert, counted in [(torch.bfloat16, False, True), (torch.bfloat16, True, False),
                                    (torch.float16, False, False)]:
        y = torch.empty(4, dtype=dtype)
        with bfloat16_steps() as seen:
            _square[(1,)](x.to(dtype), y, 4, BLOCK=4, CONVERT=convert)
        assert bool(seen) == counted and InterpreterBuilder.binary_op is binary
        right = torch.allclose(y.float(), x.to(dtype).float() ** 2, rtol=1e-2)
        assert right == (not counted), (dtype, convert, y)


def test_a_float64_accumulator_stored_as_bfloat16_is_named():
    """Is a weight-gradient reduction accumulating in float64 (right when compiled) told that
    the interpreter converts float64 to bfloat16 wrongly, not that its formula is unstable?"""
    from autograder.grading import verdict
    from tools.catalogue import load
    from tools.catalogue.lesson13_kernels.rms_norm_rows import UNUSUAL

    second_kernel, = [e for e in UNUSUAL if "second Triton kernel" in e.name]
    code = second_kernel.code.replace(
        "    total = tl.load(partial_ptr + columns, mask=mask, other=0.0)  # float32, or float64",
        "    total = tl.load(partial_ptr + columns, mask=mask, other=0.0).to(tl.float64)")
    assert code != second_kernel.code
    passed, message = verdict("rms_norm_rows", load("rms_norm_rows", code))
    assert not passed
    assert "Triton 3.9's interpreter gets that conversion wrong" in message.splitlines()[0]


def test_the_guard_records_which_tensor_an_access_went_past_and_lets_a_proven_hint_through():
    """Is a refused load kept with the size of the tensor it lies just past, and does a hint
    with a mistake id raised after it stand instead of the guard's own?"""
    from autograder.exercises.lesson13_kernels.kernel_memory import refusals

    x, y = torch.arange(5.0), torch.zeros(8)
    with pytest.raises(GradingError) as raised:
        with guarded_memory("double"):
            with pytest.raises(Exception, match="reads outside its tensors"):
                _double[(2,)](x, y, 5, BLOCK=8, MASKED=False)
            assert [(r.what, r.past_numel) for r in refusals()] == [("reads", 5)]
            raise GradingError("a probe's hint", mistake="double/proven")
    assert raised.value.mistake == "double/proven" and refusals() == []


def test_a_ctx_tensor_is_found_behind_a_view_of_the_output():
    """Is a tensor kept on the ctx of a custom operator found when the output the learner
    returns is a view of the operator's, and is an operator that saves properly left alone?"""
    from autograder.exercises.lesson13_kernels.kernel_fakes import check_ctx_tensors

    @torch.library.custom_op("autograd_course::_probe_ctx", mutates_args=())
    def op(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    def setup_context(ctx, inputs, output):
        ctx.x = inputs[0]

    op.register_autograd(lambda ctx, grad: 2 * grad, setup_context=setup_context)
    x = torch.ones(2, 3, requires_grad=True)
    with pytest.raises(GradingError, match=r"keeps a tensor as ctx\.x") as raised:
        check_ctx_tensors("op", op(x).view(-1)[1:])
    assert raised.value.mistake == "op/tensor-on-ctx"
    check_ctx_tensors("op", _host_math(x.detach()).requires_grad_())
    check_ctx_tensors("op", (x * 2).view(-1))


_KEPT_BUFFERS = {}


def _doubled(x, keep):
    """(2 * x,) by _double, into a buffer kept in _KEPT_BUFFERS when ``keep``, then copied
    out."""
    y = _KEPT_BUFFERS.setdefault(x.numel(), torch.empty_like(x)) if keep else torch.empty_like(x)
    _double[(1,)](x, y, x.numel(), BLOCK=8, MASKED=True)
    return (y.clone(),)


@pytest.mark.parametrize("keep", [False, True])
def test_a_buffer_kept_between_calls_is_named_where_it_lives(keep):
    """Is a buffer a launch was handed and a module global still holds after the call named,
    with the global, and a buffer allocated in the call let through (the interpreter unpatched
    after either)?"""
    from triton.runtime import interpreter

    from autograder.exercises.lesson13_kernels.kernel_kept import check_no_tensor_kept

    init = interpreter.GridExecutor._init_args_hst
    calls = [("x of (5,)", lambda: _doubled(torch.arange(5.0), keep))]
    if keep:
        with pytest.raises(GradingError, match="^doubled keeps a buffer from one call to the next"
                           ".* in the module global _KEPT_BUFFERS"):
            check_no_tensor_kept("doubled", _doubled, calls)
    else:
        check_no_tensor_kept("doubled", _doubled, calls)
    assert interpreter.GridExecutor._init_args_hst is init
    _KEPT_BUFFERS.clear()
