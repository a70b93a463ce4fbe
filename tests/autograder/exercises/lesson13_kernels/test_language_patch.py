"""Triton's interpreter patching triton.language once per launch (kernel_interpreter): the
same results as Triton's own patch at every device-function call, a fraction of the work, and
the language as it was once the launch ends."""

import pytest
import torch

from autograder.exercises.lesson13_kernels.kernel_interpreter import (
    interpreting, language_patched_once_per_launch)

pytestmark = pytest.mark.lesson13
triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")

if not interpreting():
    pytest.skip("these tests run Triton's interpreter (no GPU here)", allow_module_level=True)


@triton.jit
def _scaled(x):
    return 3 * x


@triton.jit
def _silu_row_sums(x_ptr, y_ptr, sums_ptr, D, BLOCK: tl.constexpr):
    """Device functions inside a launch: Triton's (tl.sigmoid, tl.sum) and one of ours."""
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * D + offsets, mask=offsets < D, other=0.0)
    y = _scaled(x * tl.sigmoid(x))
    tl.store(y_ptr + row * D + offsets, y, mask=offsets < D)
    tl.store(sums_ptr + row, tl.sum(y, axis=0))


def _launch(x):
    y, sums = torch.empty_like(x), torch.empty(x.shape[0], dtype=x.dtype)
    _silu_row_sums[(x.shape[0],)](x, y, sums, x.shape[1], BLOCK=8)
    return y, sums


def _patches(monkeypatch) -> list:
    """Every call of the interpreter's language patch that does the work (walks tl)."""
    from triton.runtime import interpreter

    walked, patch = [], interpreter._patch_builtin
    monkeypatch.setattr(interpreter, "_patch_builtin",
                        lambda *args: (walked.append(args[0]), patch(*args))[1])
    return walked


def test_a_launch_patches_once_and_computes_what_triton_computes(monkeypatch):
    """Do five programs, each calling three device functions, walk the language for one
    launch only, with results equal to Triton's own patching at every call?"""
    x = torch.randn(5, 7, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    walked = _patches(monkeypatch)
    expected = _launch(x)
    walked_by_triton = len(walked)
    walked.clear()
    with language_patched_once_per_launch():
        got = _launch(x)
    assert len(walked) < walked_by_triton / 5
    assert all(torch.equal(g, e) for g, e in zip(got, expected))
    reference = 3 * torch.nn.functional.silu(x)
    torch.testing.assert_close(got[0], reference)
    torch.testing.assert_close(got[1], reference.sum(1))


def test_the_language_is_as_before_after_a_launch_and_after_a_failed_one():
    """Is every builtin of tl and tl.core Triton's own again after a launch, a launch that
    raised, and the context's end; and does a kernel still run after all of them?"""
    from triton.runtime import interpreter

    before = {module: dict(vars(module)) for module in (tl, tl.core)}
    patch, call = interpreter._patch_lang, interpreter.GridExecutor.__call__
    x = torch.randn(2, 3, dtype=torch.float64)
    with language_patched_once_per_launch():
        _launch(x)
        with pytest.raises(Exception):
            _silu_row_sums[(1,)](x, x, x, 3, BLOCK=3)  # a block not a power of two
        assert all(vars(module).get(name) is value for module, names in before.items()
                   for name, value in names.items())
    assert interpreter._patch_lang is patch and interpreter.GridExecutor.__call__ is call
    torch.testing.assert_close(_launch(x)[0], 3 * torch.nn.functional.silu(x))


def test_the_context_nests():
    """Does a context inside another leave the outer one's patch in place?"""
    from triton.runtime import interpreter

    with language_patched_once_per_launch():
        outer = interpreter._patch_lang
        with language_patched_once_per_launch():
            assert interpreter._patch_lang is outer
        assert interpreter._patch_lang is outer
