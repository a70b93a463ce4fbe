"""Lesson 06: FlashAttention at scores of any magnitude softmax handles, and the probe that
tells whether a failure there comes from the magnitude (softmax does not change when a row's
scores all move by one constant).

Two cases, with the scores chosen directly (K the identity, scale 1): float32 rows that reach
100 to 150 (above exp's overflow at 88.7) and rows all near -160 (where exp(S - 0) underflows);
float64 rows all near -20000, below exp(S - m) = 0 for a running maximum started at any finite
number above them (0, or -1e4), and rows all near -1e6, below float16's most negative number
(-65504, a start some take for "-inf in every dtype"), with rows near 0 between them. In
float32 the solution itself rounds scores of -20000 too coarsely for the gradient tolerance;
in float64 it is exact. Rows near -torch.finfo(dtype).max / 2, which no model meets, are not
tried: a running maximum started at -1e9 or -1e30 is correct over the scores models meet."""

import torch

from ...checks import case, check_values_and_gradients
from ...contract import covers
from ...errors import GradingError
from .flash_probes import NAME, block_size
from .flash_spec import FLASH, flash_reference

MAGNITUDES = ("float32 scores above 88 and all near -160",
              "float64 scores all near -20000 and -1e6")


def _chosen_scores(scores: torch.Tensor, dtype, device, generator) -> dict:
    """Q the scores, K the identity and scale 1, so that Q K^T * scale is ``scores``."""
    Lk = scores.shape[-1]
    V = torch.randn(2, Lk, 3, generator=generator, dtype=torch.float64)
    K = torch.eye(Lk, dtype=torch.float64).expand(2, Lk, Lk)
    to = dict(dtype=dtype, device=device)
    return {"Q": scores.to(**to), "K": K.to(**to).contiguous(), "V": V.to(**to), "scale": 1.0,
            "causal": False}


def magnitude_values(device, *, seed: int = 0) -> dict:
    """float32: rows 0, 2, 4 reach 100 to 150, above exp's float32 overflow at 88.7; rows
    1, 3, 5 all lie near -160, where exp(S - 0) underflows to 0."""
    generator = torch.Generator().manual_seed(seed)
    scores = torch.randn(2, 6, 12, generator=generator, dtype=torch.float64) * 3
    scores[:, 0::2] += 130.0
    scores[:, 1::2] -= 160.0
    return _chosen_scores(scores, torch.float32, device, generator)


def deep_values(device, *, seed: int = 1) -> dict:
    """float64: rows 1 and 3 all lie near -20000, row 5 near -1e6 (far below float16's
    -65504), rows 0, 2, 4 near 0."""
    generator = torch.Generator().manual_seed(seed)
    scores = torch.randn(2, 6, 12, generator=generator, dtype=torch.float64) * 3
    scores[:, 1:5:2] -= 20000.0
    scores[:, 5] -= 1e6
    return _chosen_scores(scores, torch.float64, device, generator)


def _rows_wrong(output, expected) -> torch.Tensor:
    """Per query row (all batch elements together): is any entry non-finite or off?"""
    if not isinstance(output, torch.Tensor) or output.shape != expected.shape:
        return torch.ones(expected.shape[-2], dtype=torch.bool)
    bad = ~torch.isclose(output.detach().double(), expected.double(), rtol=1e-4, atol=1e-5)
    return bad.flatten(0, -3).any(0).any(-1).cpu()


def recognise_magnitude(function, values: dict, reference) -> str | None:
    """The hint when rows fail at their magnitude and pass once each row of scores is moved to
    around 0 (which leaves the softmax, and so the output, unchanged): overflow where a
    failing row's scores exceed exp's limit, underflow where they all lie far below 0."""
    def output(v):
        with torch.no_grad():
            return function.apply(*v.values())

    expected = reference(**values)
    wrong = _rows_wrong(output(values), expected)
    if not wrong.any():
        return None
    Q = values["Q"]  # minus its row maximum: exact, where a sum of scores near
    centred = dict(values, Q=Q - Q.amax(-1, keepdim=True))  # -finfo.max / 2 overflows
    if _rows_wrong(output(centred), expected)[wrong].any():
        return None  # wrong at moderate scores too: the magnitude is not what breaks it
    scores = (values["Q"] @ values["K"].transpose(-2, -1)).double() * values["scale"]
    high = scores.amax(-1).flatten(0, -2).amax(0).cpu()  # each row's largest score
    dtype = str(values["Q"].dtype).removeprefix("torch.")
    if (high[wrong] > 80).any():
        return (f"{NAME}'s forward overflows: rows whose {dtype} scores reach 100 to 150 come "
                "out inf or nan, and right once each row's scores are moved down by a constant "
                f"(softmax does not change); exp(S) is inf above about 88.7 in float32, so "
                "exponentiate S - m with m the running row maximum")
    # the failing rows' level closest to 0: what the start of m lies above
    mean = (scores / scores.shape[-1]).sum(-1).flatten(0, -2)[:, wrong]  # divided first: no
    level = (mean / mean.shape[0]).sum(0).max().item()  # overflow near -finfo.max
    level = f"{level:.3g}" if abs(level) > 1e7 else int(round(level, -1))
    return (f"{NAME}'s forward underflows: rows whose {dtype} scores all lie near {level} come "
            "out nan or wrong, and right once each row's scores are moved up by a constant "
            "(softmax does not change): the usual cause is a running maximum m started at a "
            "finite number above these rows' scores, where it stays while every score is "
            "below it, so that exp(S - m) is 0 for every score (0, -1e4, -1e9 and float16's "
            "-65504 are above some float32 and float64 scores, float32's finfo.min = -3.4e38 above some float64 "
            "ones); start m at -inf (or torch.finfo(d).min for the dtype d that m is kept in, "
            "which no score lies below), or at the first tile's row maximum")


def check_magnitudes(function, device, block: int) -> None:
    """float32 rows of scores above exp's overflow (88.7) and rows all near -160; float64 rows
    all near -20000 and -1e6."""
    for values, (covered, where) in zip(
            (magnitude_values(device), deep_values(device)),
            ((MAGNITUDES[0], "float32 scores of 100 to 150 in some rows and all near -160 in "
                             "others"),
             (MAGNITUDES[1], "float64 scores all near -20000 or -1e6 in some rows and near "
                             "0 in others"))):
        with block_size(function, block), case(f"{where}, BLOCK={block}"):
            try:
                tight = values["Q"].dtype == torch.float64
                check_values_and_gradients(function, FLASH, values, rtol=1e-5 if tight else 1e-4,
                                           atol=1e-7 if tight else 1e-5)
            except GradingError as error:
                try:
                    hint = recognise_magnitude(function, values, flash_reference)
                except Exception:  # the learner's code may raise anything: keep the first hint
                    hint = None
                if hint is None:
                    raise
                raise GradingError(hint, str(error), mistake={
                    "forward overflows": "FlashAttention/forward-overflows",
                    "forward underflows": "FlashAttention/forward-underflows"}) from error
        covers(covered)


