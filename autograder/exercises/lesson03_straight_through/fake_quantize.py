"""Lesson 03: FakeQuantize, quantisation-aware training with a learnable step (LSQ, Esser et
al. 2020, without its gradient-scale factor).

Forward is ``clamp(round(x / scale), qmin, qmax) * scale``. Backward is the straight-through
gradient for ``x`` (``grad_output`` inside the clip, 0 outside) and LSQ's gradient for
``scale`` (``round(v) - v`` inside, ``qmin`` below, ``qmax`` above, with ``v = x / scale``).
In the half-step band just outside each clip edge the contract accepts either convention:
inside judged on ``v``, or on ``round(v)`` as ``torch._fake_quantize_learnable_per_tensor_affine``
does. The checks compare with both and accept a backward that follows one of them.
"""

import torch

from ...checks import (case, check_backward_by_hand, check_is_function, check_no_ctx_tensors,
                      make_inputs, run_backward, run_forward)
from ...contract import check_each_input_alone, covers
from ...diagnose import FLOAT32_STEP, diagnose_gradient, diagnose_values, exact
from ...domain import Constant, Domain
from ...errors import GradingError
from ...exercise import Exercise, sample
from .saved_any_dtype import check_no_copy_saved, check_no_copy_saved_strided
from .fake_quantize_gradients import (check_band_judged_one_way, check_empty_scale_gradient,
                                      check_float32_steps, check_one_convention, check_x_units,
                                      expected_gradients,
                                      probe_scale_gradient, probe_v_in_float32,
                                      SCALE_MISTAKES, scale_candidates, scale_near_miss)
from .contracts import X_LAYOUT_CLAUSE
from .non_differentiable import check_output_differentiable
from .fake_quantize_spellings import check_one_spelling
from .fake_quantize_spec import (CONVENTIONS, FAKE_QUANTIZE, LSQ, float32_step, quantise,
                                 tolerance)
from .fake_quantize_values import (OFF_GRID_EDGES, alone_values, check_large_halves,
                                   domain_values, edge_values,
                                   off_grid_edge_values, odd_edge_values, random_values)


def check_forward(output, values: dict) -> None:
    """The output against the contract's forward, naming the usual slips."""
    x, scale, qmin, qmax = (values[n] for n in FAKE_QUANTIZE.input_names)
    expected = quantise(x, scale, qmin, qmax)
    rtol, atol = tolerance(x.dtype)
    if (isinstance(output, torch.Tensor) and output.shape == expected.shape
            and output.dtype == expected.dtype and output.device == expected.device
            and torch.allclose(output.detach(), expected, rtol=rtol, atol=atol)):
        return  # right: no slip to name

    def close(candidate) -> bool:
        return (isinstance(output, torch.Tensor) and output.shape == candidate.shape
                and output.dtype == candidate.dtype and not torch.allclose(candidate, expected)
                and torch.allclose(output.detach(), candidate, rtol=rtol, atol=atol))

    v = x / scale
    if close(torch.clamp(torch.round(v), qmin, qmax)):
        raise GradingError("FakeQuantize returns the integer codes clamp(round(x / scale), qmin, "
                           "qmax): fake quantisation returns them times scale, on x's own grid")
    if close(torch.round(v) * scale):
        raise GradingError("FakeQuantize does not clip: clamp the codes round(x / scale) to "
                           "[qmin, qmax] before multiplying by scale")
    if close(torch.clamp(v, qmin, qmax) * scale):
        raise GradingError("FakeQuantize does not round: its output must lie on the grid of "
                           "multiples of scale, clamp(round(x / scale), qmin, qmax) * scale")
    nearest = "the grid point nearest to x, with torch.round"
    halves = "torch.round sends a half to the even neighbour (0.5 to 0, 2.5 to 2, -1.5 to -2)"
    for codes, how, why in (
            (torch.floor(v), "floor(x / scale)", nearest),
            (torch.trunc(v), "trunc(x / scale), what .long() does", nearest),
            (torch.floor(v + 0.5), "floor(x / scale + 0.5), which rounds halves up", halves),
            (torch.sign(v) * torch.floor(v.abs() + 0.5), "rounded half away from zero", halves)):
        if close(torch.clamp(codes, qmin, qmax) * scale):
            wrong = (torch.clamp(codes, qmin, qmax) != torch.clamp(torch.round(v), qmin, qmax))
            at = exact(v[tuple(int(k) for k in torch.nonzero(wrong)[0])].item())
            raise GradingError(f"FakeQuantize's codes are {how}, not round(x / scale) (at x / "
                               f"scale = {at}): {why}")
    if x.dtype == torch.float64:  # float32 keeps a code 2^-30 above a half as the half itself
        codes = torch.clamp(torch.round(v.float()).to(x.dtype), qmin, qmax)
        if close(codes * scale):
            wrong = codes != torch.clamp(torch.round(v), qmin, qmax)
            i = tuple(int(k) for k in torch.nonzero(wrong)[0])
            raise GradingError(
                f"FakeQuantize's codes are round(x / scale) computed in float32 (at x / scale = "
                f"{exact(v[i].item())} it gives {exact(output[i].item())}, expected "
                f"{exact(expected[i].item())}): float32 rounds that code to a half, which "
                "torch.round sends to the even neighbour, a whole step from round(x / scale); "
                "divide in x's dtype (look for a .float() of x or scale)",
                mistake="FakeQuantize/codes-in-float32")
    if close(torch.round(torch.clamp(x, qmin, qmax) / scale) * scale):
        raise GradingError("FakeQuantize clips x to [qmin, qmax]: qmin and qmax bound the codes "
                           "x / scale, so clip round(x / scale), not x")
    got = output.detach() if isinstance(output, torch.Tensor) else output
    if (isinstance(got, torch.Tensor) and got.shape == expected.shape
            and got.dtype == expected.dtype and got.device == expected.device):
        i = tuple(int(k) for k in torch.nonzero(~torch.isclose(got, expected, rtol=rtol,
                                                               atol=atol))[0])
        float32_step("FakeQuantize's output", got, expected, x,
                      f"at x / scale = {exact(v[i].item())} it gives {exact(got[i].item())}, "
                      f"expected {exact(expected[i].item())}", "output-in-float32",
                      FLOAT32_STEP + "; torch.fake_quantize_per_tensor_affine computes in "
                      "float32 on float64 x, so write the quantiser in torch ops")
    try:
        diagnose_values("FakeQuantize's output", output, expected, rtol=rtol, atol=atol)
    except GradingError as error:
        if not str(error).startswith("FakeQuantize's output is wrong:"):
            raise  # a type, shape, dtype, sign or factor: diagnose named it
        # say where on the grid, which the learner can reason about, not at which index
        raise GradingError(
            f"FakeQuantize's output is wrong: at x / scale = {exact(v[i].item())} (scale="
            f"{exact(scale.item())}, qmin={qmin}, qmax={qmax}) it gives {exact(got[i].item())}, "
            f"expected {exact(expected[i].item())}", str(error)) from None


def check_grad_x(forward, values: dict, got, grad_output) -> None:
    """grad_x: grad_output inside the clip, 0 outside, under either convention."""
    x, scale, qmin, qmax = (values[n] for n in FAKE_QUANTIZE.input_names)
    references = [expected_gradients(x, scale, qmin, qmax, grad_output, c)[0]
                  for c in CONVENTIONS]
    if not isinstance(got, torch.Tensor) or got.shape != x.shape or got.dtype != x.dtype:
        diagnose_gradient("x", got, references[0])
    got = got.detach()
    rtol, atol = tolerance(x.dtype)

    def matches(candidate) -> bool:
        return torch.allclose(got, candidate, rtol=rtol, atol=atol)

    # within rounding of one convention's whole tensor: (g / s) * s, or autograd through a
    # detach-trick rebuild, is an ulp off grad_output; the two conventions differ by whole
    # grad_output entries in the half-step bands, so this still tells them apart (no mixing)
    if any(matches(r) for r in references):
        return {c for c, r in zip(CONVENTIONS, references) if matches(r)}

    check_x_units(x, scale, qmin, qmax, grad_output, got, (rtol, atol), 0)
    if matches(grad_output):
        saved_roles = [saved.role for saved in forward.saved]
        if "output" in saved_roles and "input x" not in saved_roles:
            raise GradingError(
                "FakeQuantize builds its clip mask from the output, whose codes are always in "
                "[qmin, qmax]: judge x / scale from the saved input x")
        raise GradingError(
            "FakeQuantize's gradient for x is not clipped: it passes grad_output where x / scale "
            "is outside [qmin, qmax] too, where the output is constant; multiply by the inside "
            "mask", mistake="FakeQuantize/grad-x-not-clipped")
    if not got.any():
        raise GradingError(
            "FakeQuantize's gradient for x is zero everywhere: that is round's true derivative, "
            "which the straight-through estimator replaces by 1 inside the clip")
    if any(matches(r / scale) for r in references):
        raise GradingError(
            "FakeQuantize's gradient for x carries a factor 1 / scale: with round's derivative "
            "taken as 1, what does the outer factor scale do to the 1 / scale from "
            "v = x / scale? (Hint 1 of Exercise 3)")
    v = x / scale
    for judged, closed in ((j, c) for j in (v, torch.round(v)) for c in ("", "qmin", "qmax")):
        low = judged >= qmin if closed == "qmin" else judged > qmin  # both edges open, or one
        strict = grad_output * (low & ((judged <= qmax) if closed == "qmax" else (judged < qmax)))
        if matches(strict) and not any(torch.allclose(strict, r, rtol=rtol, atol=atol)
                                       for r in references):
            raise GradingError(
                "FakeQuantize's gradient for x drops the clip's edges: this exercise's clip is "
                "closed, [qmin, qmax], as clamp's derivative is 1 at its bounds, so where x / "
                "scale is exactly qmin or qmax the gradient passes (LSQ's paper writes the open "
                "interval; the contract follows clamp)")
    for low, high in ((v >= qmin - 0.5, v < qmax + 0.5), (v > qmin - 0.5, v <= qmax + 0.5),
                      (v >= qmin - 0.5, v <= qmax + 0.5), (v > qmin - 0.5, v < qmax + 0.5)):
        by_halves = grad_output * (low & high)
        if matches(by_halves) and not any(torch.allclose(by_halves, r, rtol=rtol, atol=atol)
                                          for r in references):
            rounded = torch.round(v)
            wrong = (low & high) != ((rounded >= qmin) & (rounded <= qmax))
            at, to = v[wrong][0].item(), rounded[wrong][0].item()
            raise GradingError(
                "FakeQuantize's gradient for x compares x / scale with qmin - 0.5 and qmax + 0.5: "
                "torch.round sends a half to the even neighbour, so whether a half beyond an edge "
                "is inside depends on the edge's parity ("
                f"x / scale = {exact(at)} rounds to {exact(to)}, "
                f"{'inside' if qmin <= to <= qmax else 'outside'} [{qmin}, {qmax}]); judge "
                "on v against qmin and qmax, or on round(v) itself",
                mistake="FakeQuantize/half-offset-bounds")
    check_band_judged_one_way(x, scale, qmin, qmax, grad_output, got, (rtol, atol))
    if any(matches(grad_output - r) for r in references):
        raise GradingError("FakeQuantize's clip mask for x is inverted: pass grad_output where "
                           "x / scale is inside [qmin, qmax] and 0 outside")
    # say where on the grid, which the learner can reason about, not at which index
    off = ~torch.isclose(got, references[0], rtol=rtol, atol=atol)
    if (off & ~torch.isclose(got, references[1], rtol=rtol, atol=atol)).any():
        off &= ~torch.isclose(got, references[1], rtol=rtol, atol=atol)
    i = tuple(int(k) for k in torch.nonzero(off)[0])
    for reference in references:
        float32_step("FakeQuantize's gradient for x", got, reference, x,
                      f"at x / scale = {exact(v[i].item())} it gives {exact(got[i].item())}, "
                      f"expected {exact(reference[i].item())}", "grad-x-in-float32")
    try:
        diagnose_gradient("x", got, references[0], rtol=rtol, atol=atol)
    except GradingError as error:
        if not str(error).startswith("your gradient for x is wrong:"):
            raise  # a sign or a constant factor: diagnose named it
        raise GradingError(
            f"your gradient for x is wrong: at x / scale = {exact(v[i].item())} (qmin={qmin}, "
            f"qmax={qmax}) it gives {exact(got[i].item())}, expected "
            f"{exact(references[0][i].item())} (grad_output there is "
            f"{exact(grad_output[i].item())})") from None


def check_grad_scale(values: dict, got, grad_output) -> None:
    """grad_scale: LSQ's gradient (the engine has summed it to scale's 0-d shape), under
    either convention."""
    x, scale, qmin, qmax = (values[n] for n in FAKE_QUANTIZE.input_names)
    references = [expected_gradients(x, scale, qmin, qmax, grad_output, c)[1]
                  for c in CONVENTIONS]
    if got is None:
        raise GradingError(
            "FakeQuantize returned None for scale, which requires grad: the step is learnable; "
            "return the sum of grad_output times d(output)/d(scale)")
    check_empty_scale_gradient(x, got)
    if not isinstance(got, torch.Tensor) or got.shape != () or got.dtype != x.dtype:
        diagnose_gradient("scale", got, references[0])
    rtol, atol = tolerance(x.dtype)
    got = got.detach()
    if any(torch.allclose(got, r, rtol=rtol, atol=atol) for r in references):
        return {c for c, r in zip(CONVENTIONS, references)
                if torch.allclose(got, r, rtol=rtol, atol=atol)}
    check_x_units(x, scale, qmin, qmax, grad_output, got, (rtol, atol), 1)
    for convention in CONVENTIONS:
        for candidate, hint in scale_candidates(x, scale, qmin, qmax, grad_output, convention):
            if torch.allclose(got, candidate, rtol=rtol, atol=atol):
                raise GradingError(f"FakeQuantize's gradient for scale is wrong: {hint}",
                                   mistake=SCALE_MISTAKES)
    check_float32_steps(x, scale, qmin, qmax, grad_output, got, references)
    for reference in references:
        float32_step("FakeQuantize's gradient for scale", got, reference, x,
                      f"it gives {exact(got.item())}, expected {exact(reference.item())}",
                      "grad-scale-in-float32")
    try:
        diagnose_gradient("scale", got, references[0], rtol=rtol, atol=atol)
    except GradingError as error:
        if not str(error).startswith("your gradient for scale is wrong:"):
            raise
        raise GradingError(scale_near_miss(got, references) or  # a 0-d gradient: no index
            f"your gradient for scale is wrong: it gives {exact(got.item())}, expected "
            f"{exact(references[0].item())} (or {exact(references[1].item())} with the clip "
            "judged on round(v)); try Exercise 3's question 5, its three elements one at a "
            "time") from None


def check_fake_quantize(function, values: dict, *, seed: int = 0, hygiene: bool = True):
    """Forward, then both gradients (grad_output and the inputs left as given: the per-call
    watch, autograder.untouched)."""
    inputs = make_inputs(values)
    forward = run_forward(function, FAKE_QUANTIZE, inputs)
    check_forward(forward.output, values)
    check_no_copy_saved(FAKE_QUANTIZE, forward, inputs)
    generator = torch.Generator().manual_seed(seed + 1000)
    x = values["x"]
    grad_output = torch.randn(x.shape, generator=generator, dtype=x.dtype).to(x.device)
    pristine = grad_output.clone()
    backward = run_backward(FAKE_QUANTIZE, forward.output, inputs, grad_output)
    # each returns the conventions it matches; one surrogate must give both gradients
    try:
        for_x = check_grad_x(forward, values, backward.grads[0], pristine) or set(CONVENTIONS)
    except GradingError as error:
        if error.mistake == "FakeQuantize/band-judged-two-ways" and x.dtype == torch.float64:
            probe_v_in_float32(function, FAKE_QUANTIZE, x.device)
        raise
    try:
        for_scale = check_grad_scale(values, backward.grads[1], pristine) or set(CONVENTIONS)
    except GradingError as error:
        if error.hint.startswith("your gradient for scale is wrong:"):  # no mistake named
            probe_scale_gradient(function, FAKE_QUANTIZE, x.dtype, x.device)
        raise
    check_one_convention([values[n] for n in FAKE_QUANTIZE.input_names], for_x, for_scale)
    if hygiene:
        check_no_ctx_tensors(FAKE_QUANTIZE, forward)
        check_backward_by_hand(FAKE_QUANTIZE, backward)  # rule 3 of the Function contract


def full(submission, device) -> None:
    function = check_is_function(submission, FAKE_QUANTIZE)
    check_output_differentiable(function, FAKE_QUANTIZE, alone_values(device))
    # the edges in both dtypes, with a power-of-two scale: v = x / scale exact, so halves are
    # halves whichever way v is computed; random inputs in every dtype, layout and range of
    # scale, qmin and qmax come from the domain
    for dtype in (torch.float64, torch.float32):
        with case(f"x / scale at the clip edges, {str(dtype).removeprefix('torch.')}"):
            check_fake_quantize(function, edge_values(device, dtype))
        with case(f"forward at x / scale halves up to 2^52, {str(dtype).removeprefix('torch.')}"):
            check_large_halves(function, device, dtype)
    with case("x / scale at the clip edges, qmin odd and qmax even"):
        check_fake_quantize(function, odd_edge_values(device))
    # off powers of two, x / scale exactly at an edge where qmax * scale rounds below x (an
    # infinite x, or one whose x / scale overflows, is no value a model meets: not probed)
    for dtype in (torch.float64, torch.float32):
        name = str(dtype).removeprefix('torch.')
        with case(f"x at the clip edges, scale={OFF_GRID_EDGES[dtype][0]} (not a power of two), "
                  f"{name}"):
            check_fake_quantize(function, off_grid_edge_values(device, dtype))
    for seed, (shape, qmin, qmax) in enumerate([((7,), -8, 7), ((2, 3, 4), -128, 127),
                                                ((1,), -2, 1), ((4, 6), -1, 1)]):
        values = random_values(shape, device, seed=seed, scale=0.05 * (seed + 1), qmin=qmin,
                               qmax=qmax)
        with case(f"x of shape {shape}, scale={0.05 * (seed + 1):.2f}, qmin={qmin}, qmax={qmax}"):
            check_fake_quantize(function, values, seed=seed)
    with case("x empty, of shape (0,)"):  # "any shape": scale's gradient a sum over none, 0
        check_fake_quantize(function, random_values((0,), device))
    for edge in ("x / scale at the clip edges", "halves", "float32"):
        covers(edge)
    rtol, atol = tolerance(torch.float64)  # alone_values are float64
    check_each_input_alone(function, LSQ, alone_values(device), rtol=rtol, atol=atol)
    covers("scale not requiring grad")  # x alone above: a fixed quantiser
    with case("x transposed, (5, 2)"):
        check_no_copy_saved_strided(function, FAKE_QUANTIZE, alone_values(device), "x")
    # last, so that every answer caught before keeps its hint: scale off a power of two, codes
    # at halves where x / scale and x * (1 / scale) round apart (the domain keeps codes off them)
    for dtype in (torch.float64, torch.float32):
        name = str(dtype).removeprefix('torch.')
        with case(f"x / scale at halves, scale off a power of two, {name}"):
            check_one_spelling(function, device, dtype)


LATER_IN_LESSON = True  # after the lesson's other module's exercises
EXERCISES = [
    Exercise("FakeQuantize", "03_ste", full,
             contract=("x / scale at the clip edges", "halves", "float32",
                       "scale not requiring grad"),
             example=lambda: (sample((6,), "cpu"), torch.tensor(0.5, dtype=torch.float64), -4, 3),
             domain=Domain(LSQ, domain_values, constants={
                 # off powers of two x / scale and x * (1 / scale) differ at exact half-codes
                 # alone, and _domain_values keeps every code 0.02 away from a half
                 "scale": Constant(1e-4, 100.0, "scale a positive 0-d tensor", also=(0.1,)),
                 "qmin": Constant(-128, -1, "qmin < 0 a Python int", integer=True,
                                  also=(-32768,)),
                 "qmax": Constant(1, 127, "qmax > 0 a Python int", integer=True,
                                  also=(32767,))},
                           layout_clause=X_LAYOUT_CLAUSE)),
]
