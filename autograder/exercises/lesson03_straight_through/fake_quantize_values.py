"""FakeQuantize's inputs: codes v = x / scale where mistakes differ, random codes away from
halves, and the domain's codes kept out of the half-step band where either convention holds."""

import torch

from ...checks import make_inputs, run_forward
from ...diagnose import exact
from ...errors import GradingError
from .fake_quantize_spec import FAKE_QUANTIZE
from .ste_extremes import LARGE_HALVES, check_large_left_unrounded


def edge_values(device, dtype=torch.float64) -> dict:
    """v = x / scale exact (scale a power of two) at the places mistakes differ: both clip
    edges, just inside and in the half-step band outside them (where the two conventions
    differ), halves that round to even, 0 and values far outside; then codes 2^-30 from a
    half on the side away from its even neighbour, which float32 rounds to the half itself;
    last, codes a hair beyond each edge (2^-21, and 2^-40 in float64), in the same band as
    3.2 and -4.4: a clip with a tolerance on the edge judges them apart from the rest."""
    codes = [-9.0, -4.5, -4.4, -4.0, -3.7, -3.5, -2.5, -1.5, -0.5, -0.2, 0.0, 0.3, 0.5, 1.5,
             2.5, 2.7, 3.0, 3.2, 3.5, 3.6, 8.0,  # halves where half-up and half-to-even differ
             2.5 + 2 ** -30, -1.5 + 2 ** -30,  # round to 3 and -1; in float32, to 2 and -2
             3 + 2 ** -21, -4 - 2 ** -21, 3 + 2 ** -40, -4 - 2 ** -40]  # a hair beyond an edge
    scale = 0.5
    return {"x": torch.tensor(codes, dtype=dtype, device=device) * scale,
            "scale": torch.tensor(scale, dtype=dtype, device=device), "qmin": -4, "qmax": 3}


def large_half_values(device, dtype=torch.float64) -> dict:
    """Codes at halves up to the largest each dtype holds (2^23 - 0.5 in float32, 2^52 - 0.5
    in float64; the float64 ones are integers in float32), scale 0.5, inside a clip of +-2^53:
    a round that leaves every |v| past some threshold unchanged, taking them for integers, is
    wrong at the largest whatever the threshold."""
    codes = [0.5, 2.5, -1.5] + LARGE_HALVES
    return {"x": torch.tensor(codes, dtype=dtype, device=device) * 0.5,
            "scale": torch.tensor(0.5, dtype=dtype, device=device), "qmin": -2 ** 53,
            "qmax": 2 ** 53}


def check_large_halves(function, device, dtype) -> None:
    """Forward alone, exactly, at large_half_values (the battery's forward check has a
    tolerance, and a code off by 0.5 at 2^51 is within it; scale's gradient there is a sum of
    terms near 2^51 whose digits cancel, which no contract clause asks to keep): an early exit
    for large codes named, any other difference shown."""
    values = large_half_values(device, dtype)
    output = run_forward(function, FAKE_QUANTIZE, make_inputs(values)).output
    scale = values["scale"]
    v = values["x"] / scale  # exact: scale is a power of two
    expected = torch.round(v) * scale
    if not isinstance(output, torch.Tensor) or output.shape != v.shape:
        return  # the other cases name the type and shape
    got = output.detach()
    check_large_left_unrounded("FakeQuantize", got / scale, torch.round(v), v, "x / scale")
    if not torch.equal(got, expected):
        i = int(torch.nonzero(got != expected)[0, 0])
        raise GradingError(
            f"FakeQuantize's output at x / scale = {exact(v[i].item())} (scale = 0.5, inside "
            f"the clip) is {exact(got[i].item())}, expected round(x / scale) * scale = "
            f"{exact(expected[i].item())}: the codes are round(x / scale) exactly, however "
            "large", mistake="FakeQuantize/large-codes-not-rounded")


def odd_edge_values(device, dtype=torch.float64) -> dict:
    """qmin odd and qmax even, so that the halves beyond the edges round inward for qmax and
    outward for qmin (torch.round sends a half to the even neighbour): round(-3.5) = -4 is
    outside [-3, 4] and round(4.5) = 4 inside, where v >= qmin - 0.5 and v < qmax + 0.5 say
    the opposite; with qmin even and qmax odd (edge_values) those comparisons agree with
    round(v)."""
    codes = [-5.0, -3.6, -3.5, -3.4, -3.0, -2.5, 0.5, 3.5, 4.0, 4.4, 4.5, 4.6, 6.0]
    scale = 0.5
    return {"x": torch.tensor(codes, dtype=dtype, device=device) * scale,
            "scale": torch.tensor(scale, dtype=dtype, device=device), "qmin": -3, "qmax": 4}


def random_values(shape, device, *, seed=0, dtype=torch.float64, scale=0.3, qmin=-8,
                  qmax=7) -> dict:
    """x spread over about one and a half times the clip range; no v within 0.02 of a half,
    so x / scale and x * (1 / scale) round alike."""
    v = 1.5 * (qmax - qmin) / 2 * torch.rand(shape, generator=torch.Generator().manual_seed(seed),
                                             dtype=torch.float64) * 2 - 1.5 * (qmax - qmin) / 2
    fraction = v - torch.floor(v)
    v = torch.where((fraction - 0.5).abs() < 0.02, v + 0.1, v)
    return {"x": (v * scale).to(dtype).to(device),
            "scale": torch.tensor(scale, dtype=dtype, device=device), "qmin": qmin, "qmax": qmax}


def domain_values(device, dtype=torch.float64, seed=0, scale=0.3, qmin=-8, qmax=7) -> dict:
    """Random codes kept out of the half-step band beyond each clip edge, where the contract
    accepts either convention."""
    made = random_values((3, 4), "cpu", seed=seed, scale=scale, qmin=qmin, qmax=qmax)
    v = made["x"] / scale
    v = torch.where((v > qmax) & (v < qmax + 0.6), v + 0.6, v)
    v = torch.where((v < qmin) & (v > qmin - 0.6), v - 0.6, v)
    return {"x": (v * scale).to(dtype).to(device),
            "scale": torch.tensor(scale, dtype=dtype, device=device), "qmin": qmin, "qmax": qmax}


def alone_values(device) -> dict:
    """No v in the half-step bands, where the two conventions differ."""
    codes = [-9.3, -3.7, -2.2, -0.4, 0.3, 1.2, 2.8, 5.6, -6.1, 4.4]
    return {"x": torch.tensor(codes, dtype=torch.float64, device=device).reshape(2, 5) * 0.5,
            "scale": torch.tensor(0.5, dtype=torch.float64, device=device), "qmin": -4, "qmax": 3}


# (scale, qmin, qmax, x) per dtype: x / scale is exactly the edge's code (so is x * (1 / scale),
# and round(v)): inside whatever convention, while qmin * scale and qmax * scale round to the
# other side of x (0.3 * 3 = 0.8999999999999999 < 0.9); searched over nearby scales and edges
OFF_GRID_EDGES = {torch.float64: (0.3, -3, 3, [-2.0, 0.9, -0.5, 0.1, -0.9, 1.3]),
                  torch.float32: (0.01, -5, 5, [-0.2, 0.05, 0.013, -0.05, 0.2])}


def off_grid_edge_values(device, dtype=torch.float64) -> dict:
    """A scale that is not a power of two, and x at both clip edges where x / scale is exactly
    qmin or qmax, inside, but x lies beyond qmin * scale or qmax * scale as rounded: a clip
    judged in x's units calls it outside. Away from the edges no v is near a half-step band, so
    every convention the contract accepts gives the same mask."""
    scale, qmin, qmax, x = OFF_GRID_EDGES[dtype]
    return {"x": torch.tensor(x, dtype=dtype, device=device),
            "scale": torch.tensor(scale, dtype=dtype, device=device), "qmin": qmin, "qmax": qmax}
