"""FakeQuantize's v spelled one way: off powers of two, ``x / scale`` and ``x * (1 / scale)``
differ by an ulp, and at an exact half-code that ulp sends ``round`` to different neighbours.
The contract accepts either spelling, the same in forward and backward: scale's gradient must
be the straight-through gradient of the codes forward actually produced (review 77)."""

import torch

from ...checks import make_inputs, run_backward, run_forward
from ...diagnose import exact
from ...errors import GradingError
from .fake_quantize_spec import FAKE_QUANTIZE, tolerance

# (scale, qmin, qmax, codes) per dtype: every code a half, x = code * scale exact in x's dtype,
# so x / scale is the half itself and rounds to even, while 1 / scale rounds and
# x * (1 / scale) lands an ulp off the half, on the odd side; all well inside the clip
SPLIT_HALVES = {torch.float64: (0.9730477016258977, -128, 127, [-12.5, -6.5, 0.3, 6.5, 12.5]),
                torch.float32: (0.2467041015625, -128, 127, [-7.5, -3.5, 0.3, 1.5, 5.5])}


def split_half_values(device, dtype=torch.float64) -> dict:
    """x at half-codes where the two spellings of v round a whole code apart."""
    scale, qmin, qmax, codes = SPLIT_HALVES[dtype]
    s = torch.tensor(scale, dtype=dtype)
    return {"x": (torch.tensor(codes, dtype=dtype) * s).to(device), "scale": s.to(device),
            "qmin": qmin, "qmax": qmax}


def check_one_spelling(function, device, dtype) -> None:
    """Forward's codes (read back from its output) must be one spelling's, and scale's gradient
    the straight-through gradient of those codes, sum g * (code - v): a backward that
    recomputes v the other way uses codes forward never produced."""
    values = split_half_values(device, dtype)
    inputs = make_inputs(values)
    forward = run_forward(function, FAKE_QUANTIZE, inputs)
    output = forward.output
    x, scale, qmin, qmax = (values[n].cpu() if isinstance(values[n], torch.Tensor) else values[n]
                            for n in FAKE_QUANTIZE.input_names)
    if (not isinstance(output, torch.Tensor) or output.shape != x.shape
            or output.dtype != x.dtype):
        return  # the other cases name the type, shape and dtype
    codes = torch.round(output.detach().cpu() / scale)  # y = code * scale, to an ulp
    spellings = {"x / scale": x / scale, "x * (1 / scale)": x * (1 / scale)}
    rounded = {name: torch.clamp(torch.round(v), qmin, qmax) for name, v in spellings.items()}
    used = next((name for name, r in rounded.items() if torch.equal(codes, r)), None)
    split = rounded["x / scale"] != rounded["x * (1 / scale)"]
    if not split.any():
        return  # this machine's arithmetic rounds the two spellings alike: nothing to tell
    i = int(torch.nonzero(split)[0, 0])
    if used is None:
        k = int(torch.nonzero(codes != rounded["x / scale"])[0, 0])
        raise GradingError(
            f"FakeQuantize's code at x = {exact(x[k].item())}, scale = {exact(scale.item())} is "
            f"{exact(codes[k].item())}, neither round(x / scale) = "
            f"{exact(rounded['x / scale'][k].item())} nor round(x * (1 / scale)) = "
            f"{exact(rounded['x * (1 / scale)'][k].item())}: compute v = x / scale in x's dtype, "
            "or x * (1 / scale), and round it with torch.round")
    generator = torch.Generator().manual_seed(77)
    grad_output = (torch.rand(x.shape, generator=generator, dtype=x.dtype) + 0.5)
    pristine = grad_output.clone()
    backward = run_backward(FAKE_QUANTIZE, output, inputs, grad_output.to(device))
    got = backward.grads[1]
    if not isinstance(got, torch.Tensor) or got.numel() != 1:
        return  # the other cases name a missing or misshapen gradient
    got = got.detach().cpu().reshape(())
    rtol, atol = tolerance(x.dtype)
    v = spellings[used]
    implied = (pristine * (codes - v)).sum()  # inside everywhere: the STE of forward's codes
    if torch.allclose(got, implied.to(got.dtype), rtol=rtol, atol=atol):
        return
    other = next(name for name in spellings if name != used)
    if torch.allclose(got, (pristine * (rounded[other] - v)).sum().to(got.dtype), rtol=rtol,
                      atol=atol):
        raise GradingError(
            f"FakeQuantize's gradient for scale uses codes its forward never produced: at x = "
            f"{exact(x[i].item())}, scale = {exact(scale.item())}, forward's code is "
            f"round({used}) = {exact(codes[i].item())}, but backward's gradient for scale "
            f"follows round({other}) = {exact(rounded[other][i].item())}; off powers of two the "
            "two spellings of v land an ulp apart, on either side of a half, so spell v the "
            "same way in forward and backward (or save what backward needs)",
            mistake="FakeQuantize/v-spelled-two-ways")
    raise GradingError(
        f"FakeQuantize's gradient for scale is {exact(got.item())} where x / scale are halves "
        f"and scale = {exact(scale.item())} is not a power of two, expected "
        f"{exact(implied.item())}, the straight-through gradient of the codes your forward "
        "returned (round(v) - v for each element, all inside the clip): does backward round "
        "the same v forward rounded?")
