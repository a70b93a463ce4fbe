"""Lesson 00: Square and WeightedSum."""

import torch

from ..checks import (Spec, check_gradcheck, check_is_function, check_no_ctx_tensors,
                      check_values_and_gradients)
from ..exercise import Exercise, sample

# 0-d last: on a single element every wrong gradient looks like a sign or a constant factor,
# so the first failure should come from a shape whose hint can tell them apart.
SHAPES = [(5,), (3, 4), (2, 3, 4), ()]

SQUARE = Spec("Square", ("x",), lambda x: x ** 2)
WEIGHTED_SUM = Spec("WeightedSum", ("x1", "x2", "w1", "w2"),
                    lambda x1, x2, w1, w2: w1 * x1 + w2 * x2)


def square_quick(Square) -> None:
    function = check_is_function(Square, SQUARE)
    values = {"x": sample((4,), "cpu")}
    check_values_and_gradients(function, SQUARE, values)
    check_gradcheck(function, SQUARE, values)


def square_full(Square, device) -> None:
    function = check_is_function(Square, SQUARE)
    for seed, shape in enumerate(SHAPES):
        forward, _ = check_values_and_gradients(function, SQUARE,
                                                {"x": sample(shape, device, seed=seed)})
        check_no_ctx_tensors(SQUARE, forward)
    check_values_and_gradients(function, SQUARE, {"x": sample((3, 4), device, dtype=torch.float32)},
                               rtol=1e-5, atol=1e-6)
    check_gradcheck(function, SQUARE, {"x": sample((3,), device)})


def _weighted_values(shape, device, w1=0.5, w2=-2.0, seed=0, dtype=torch.float64) -> dict:
    return {"x1": sample(shape, device, seed=seed, dtype=dtype),
            "x2": sample(shape, device, seed=seed + 100, dtype=dtype), "w1": w1, "w2": w2}


def weighted_sum_quick(WeightedSum) -> None:
    function = check_is_function(WeightedSum, WEIGHTED_SUM)
    check_values_and_gradients(function, WEIGHTED_SUM, _weighted_values((4,), "cpu"))
    check_gradcheck(function, WEIGHTED_SUM, _weighted_values((3,), "cpu"))


def weighted_sum_full(WeightedSum, device) -> None:
    function = check_is_function(WeightedSum, WEIGHTED_SUM)
    for seed, shape in enumerate(SHAPES):
        for w1, w2 in [(0.5, -2.0), (1.0, 0.0), (3.0, 3.0)]:
            forward, _ = check_values_and_gradients(
                function, WEIGHTED_SUM, _weighted_values(shape, device, w1, w2, seed))
            check_no_ctx_tensors(WEIGHTED_SUM, forward)
    check_values_and_gradients(function, WEIGHTED_SUM,
                               _weighted_values((3, 4), device, dtype=torch.float32),
                               rtol=1e-5, atol=1e-6)
    check_gradcheck(function, WEIGHTED_SUM, _weighted_values((3,), device))


EXERCISES = [
    Exercise("Square", "00_template", square_quick, square_full,
             "four shapes from 0-d to 3-d, float32 and float64, CPU and CUDA",
             example=lambda: (sample((4,), "cpu"),)),
    Exercise("WeightedSum", "00_template", weighted_sum_quick, weighted_sum_full,
             "several shapes and weights (including 0), float32, CPU and CUDA",
             example=lambda: tuple(_weighted_values((4,), "cpu").values())),
]
