"""Lesson 02's cast-before-bias probe: float32 gives the reference's exact 0 in every order of
summation, and float64 cast back before the bias gives 2**41, so no correct answer is failed."""

import itertools

import torch
import torch.nn.functional as F

from autograder.exercises.lesson02_linear.float32 import (BILINEAR_CAST_BEFORE_BIAS,
                                                          CAST_BEFORE_BIAS)


def test_every_float32_order_gives_the_references_zero():
    products = [torch.tensor(v, dtype=torch.float32) for v in CAST_BEFORE_BIAS["x"][0]]
    bias = torch.tensor(CAST_BEFORE_BIAS["bias"][0])
    for a, b, c in itertools.permutations(products):
        assert ((a + b) + c) + bias == 0 and (a + (b + c)) + bias == 0


def test_the_reference_and_the_cast_back_sum_differ():
    values = {n: torch.tensor(v) for n, v in CAST_BEFORE_BIAS.items()}
    assert F.linear(**{"input": values["x"], "weight": values["weight"],
                       "bias": values["bias"]})[0, 0] == 0
    wide = F.linear(values["x"].double(), values["weight"].double()).float() + values["bias"]
    assert wide[0, 0] == 2.0 ** 41
    bil = {n: torch.tensor(v) for n, v in BILINEAR_CAST_BEFORE_BIAS.items()}
    assert F.bilinear(bil["x1"], bil["x2"], bil["weight"], bil["bias"])[0, 0] == 0
