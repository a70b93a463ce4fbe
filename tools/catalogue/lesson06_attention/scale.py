"""Lesson 06: the scale each exercise is given, any Python float, 0 and negative ones included.
Answers that take its square root or its inverse (which raise or give nan at 0 and below), or
put d ** -0.5 in its place, in every exercise that takes a scale."""

from .. import Mistake, Unusual, edit
from .answers import AB, BIAS, FA, FLASH, SDPA, S

_SCORES = "scores = (Q @ K.transpose(-2, -1)) * scale"
_TILE = "s = (q @ k.transpose(-2, -1)) * scale"
_BIAS_SCORES = "(Q @ K.transpose(-2, -1)) * scale + bias"
_OUT_OF_RANGE = "at scale=-0.7"
_ZERO = "at scale=0.0"
_IGNORED = "ignores the scale it is given"

UNUSUAL: list[Unusual] = []

MISTAKES = [
    Mistake(S, "scale split as its square root over Q and K", _OUT_OF_RANGE, edit(
        SDPA, (_SCORES, "r = math.sqrt(scale)\n        scores = (Q * r) @ (K * r).transpose(-2, "
                        "-1)"))),
    Mistake(S, "scores divided by the scale's inverse", _ZERO, edit(
        SDPA, (_SCORES, "scores = (Q @ K.transpose(-2, -1)) / (1 / scale)"))),
    Mistake(S, "d ** -0.5 in place of the scale given", _IGNORED, edit(
        SDPA, (_SCORES, "scores = (Q @ K.transpose(-2, -1)) * Q.shape[-1] ** -0.5"))),
    Mistake(FA, "d ** -0.5 in place of the scale given", _IGNORED, edit(
        FLASH, (_TILE, "s = (q @ k.transpose(-2, -1)) * Q.shape[-1] ** -0.5"))),
    Mistake(FA, "tile scores divided by the scale's inverse", _ZERO, edit(
        FLASH, (_TILE, "s = (q @ k.transpose(-2, -1)) / (1 / scale)"))),
    Mistake(AB, "d ** -0.5 in place of the scale given", _IGNORED, edit(
        BIAS, (_BIAS_SCORES, "(Q @ K.transpose(-2, -1)) * Q.shape[-1] ** -0.5 + bias"))),
]
