"""Lesson 02, review 59c: a parameter gradient summed over the rows in blocks that drops the
last partial block (range(rows // block or 1)), in each exercise, named by the many-rows case
(x of 4099 rows) on its first line. Unusual: the same blocked sums that visit every row
(range(0, rows, block)), and the reviewer's mask read from the sign bit of z viewed as an
integer (their other unusual answers are catalogued already)."""

from .. import Mistake, Unusual, edit
from .answers import FLAT, FUSED_READ, FUSED_RETURN, GUARDED, _RETURN, _fused, _linear
from .bilinear import GX1, GX2, _bilinear_with

_LINEAR = _linear(FLAT + GUARDED + "        grad_bias = g2.sum(0) if ctx.has_bias and "
                  "ctx.needs_input_grad[2] else None\n" + _RETURN)
_FUSED = _fused(FUSED_READ + FUSED_RETURN)
_WEIGHT = "grad_weight = g2.T @ x2 if ctx.needs_input_grad[1] else None\n"
_DROPS = "right on the first 4096 rows of 4099"


def _blocked(block: int, every: bool = False) -> str:
    """grad_weight = g2.T @ x2 summed in blocks of ``block`` rows: every row visited, or the
    last partial block dropped."""
    rows, r = ((f"range(0, g2.shape[0], {block})", f"slice(k, k + {block})") if every else
               (f"range(max(g2.shape[0] // {block}, 1))",
                f"slice(k * {block}, (k + 1) * {block})"))
    return ("grad_weight = None\n"
            "        if ctx.needs_input_grad[1]:\n"
            "            grad_weight = g2.new_zeros(weight.shape)\n"
            f"            for k in {rows}:\n"
            f"                r = {r}\n"
            "                grad_weight += g2[r].T @ x2[r]\n")


_TAIL = _blocked(1024)
_EVERY = _blocked(1024, every=True)
_BILINEAR_TAIL = ("sum((torch.einsum('po,pi,pj->oij', g[r], a[r], b[r]) for r in "
                  "(slice(k * 1024, (k + 1) * 1024) for k in range(max(g.shape[0] // 1024, 1)))"
                  "), weight.new_zeros(weight.shape))")
_FLAT_BILINEAR = ("(lambda g, a, b: {})(grad_output.reshape(-1, weight.shape[0]), "
                  "x1.reshape(-1, weight.shape[1]), x2.reshape(-1, weight.shape[2]))")

MISTAKES = [
    Mistake("MyLinearFunction", "grad_weight in blocks of 1024 rows, the last partial one "
            "dropped (review 59c)", _DROPS, edit(_LINEAR, (_WEIGHT, _TAIL))),
    Mistake("MyLinearFunction", "grad_weight in blocks of 1000 rows, the last partial one "
            "dropped (review 59c)", "right on the first 4000 rows of 4099",
            edit(_LINEAR, (_WEIGHT, _blocked(1000)))),
    Mistake("FusedLinearReLU", "grad_weight in blocks of 1024 rows, the last partial one "
            "dropped (review 59c)", _DROPS, edit(_FUSED, (_WEIGHT, _TAIL))),
    Mistake("Bilinear", "grad_weight in blocks of 1024 positions, the last partial one "
            "dropped (review 59c)", _DROPS,
            _bilinear_with(GX1, GX2, _FLAT_BILINEAR.format(_BILINEAR_TAIL))),
]

UNUSUAL = [
    Unusual("MyLinearFunction", "grad_weight in blocks of 1024 rows, every row visited "
            "(review 59c)", edit(_LINEAR, (_WEIGHT, _EVERY))),
    Unusual("Bilinear", "grad_weight in blocks of 1024 positions, every one visited "
            "(review 59c)", _bilinear_with(GX1, GX2, _FLAT_BILINEAR.format(
                _BILINEAR_TAIL.replace("(slice(k * 1024, (k + 1) * 1024) for k in "
                                       "range(max(g.shape[0] // 1024, 1)))",
                                       "(slice(k, k + 1024) for k in range(0, g.shape[0], 1024))"
                                       )))),
    Unusual("FusedLinearReLU", "the mask as the sign bit of z viewed as an integer "
            "(review 59c)", edit(_FUSED, (
                "mask = z > 0",
                "mask = z.view(torch.int64 if z.dtype == torch.float64 else torch.int32) > 0"))),
]
