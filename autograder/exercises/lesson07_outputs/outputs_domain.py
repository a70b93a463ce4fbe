"""Lesson 07: the inputs SortWithIndices' and SplitHalves' contracts allow, as their domains
build them: shapes that differ from call to call, and values one ulp apart."""

import torch

from ...checks import (Spec)
from ...exercise import sample
from .in_place import (IN_PLACE_LAYOUT_CLAUSE, IN_PLACE_LAYOUTS, RELU, RELU_SHAPES,  # noqa: F401
                       noise, relu_full, with_zeros, writing_into_a_copy)


def _sample(shape):
    return lambda device, dtype=torch.float64, seed=0: {
        "x": sample(shape, device, seed=seed, dtype=dtype)}


def _split_values(device, dtype=torch.float64, seed=0) -> dict:
    """x of shape (3, 6) or (2, 4) by seed: two seeds in a row give two shapes (a shape kept
    outside ctx meets the other call's)."""
    return {"x": sample(((3, 6), (2, 4))[seed % 2], device, seed=seed, dtype=dtype)}


def _near_ties(device, dtype) -> dict:
    """Rows of six values one ulp apart above 1, shuffled: sorted by x itself, not a rounded
    copy (in float32 they would all be 1, ties in any order)."""
    up, steps = torch.tensor(2.0, dtype=dtype), [torch.tensor(1.0, dtype=dtype)]
    for _ in range(5):
        steps.append(torch.nextafter(steps[-1], up))
    row, generator = torch.stack(steps), torch.Generator().manual_seed(4)
    return {"x": torch.stack([row[torch.randperm(6, generator=generator)]
                              for _ in range(3)]).to(device)}


def _halves_spec(x):
    h = x.shape[-1] // 2
    return x[..., :h], x[..., h:]


SPLIT_OUTPUTS = Spec("SplitHalves", ("x",), _halves_spec)  # both outputs, for the domain
