"""Lesson 03: answers written by the second reviewer of review 55, and the variants their fixes
probe: a hand-made round-half-even that leaves every |x| past a threshold unchanged, taking
large floats for integers (in RoundSTE, also with its threshold between the swept halves, and in
FakeQuantize's codes); scale's gradient with halves rounded up or away from zero
in backward; and the right hand-made round, (|x| + 2^23) - 2^23 below 2^23 (2^52 in float64),
x itself above, which passes."""

from .. import Mistake, Unusual, edit
from .answers import FQ_LSQ, _fake_quantize, _fq_scale, _round

# the 1.5 * 2^p trick, exact for |x| <= 2^(p-1), with an early exit at c / 3 = 2^(p-1)
_MAGIC = ("        c = 1.5 * 2.0**52 if x.dtype == torch.float64 else 1.5 * 2.0**23\n"
          "        small = x.abs() < c / 3\n"
          "        return torch.where(small, torch.copysign((x + c) - c, x), x)")
# right: |x| + 2^p has spacing 1 for |x| < 2^p, and every float from 2^p on is an integer
_RIGHT = ("        p = 2.0**52 if x.dtype == torch.float64 else 2.0**23\n"
          "        small = x.abs() < p\n"
          "        return torch.where(small, torch.copysign((x.abs() + p) - p, x), x)")
_FQ_MAGIC_ROUND = _fake_quantize(
    "        x, scale = ctx.saved_tensors\n        v = x / scale\n"
    "        r = torch.round(v)\n        inside = (v >= ctx.qmin) & (v <= ctx.qmax)\n"
    "        clipped = torch.where(v < ctx.qmin, float(ctx.qmin), float(ctx.qmax))\n"
    f"        return grad_output * inside, (grad_output * {FQ_LSQ}).sum(), None, None",
    "        ctx.save_for_backward(x, scale)\n        ctx.qmin, ctx.qmax = qmin, qmax\n"
    "        v = x / scale\n"
    "        c = 1.5 * 2.0**52 if v.dtype == torch.float64 else 1.5 * 2.0**23\n"
    "        r = torch.where(v.abs() < c / 3, torch.copysign((v + c) - c, v), v)\n"
    "        return torch.clamp(r, qmin, qmax) * scale")

MISTAKES = [
    Mistake("RoundSTE", "round by 1.5 * 2^52 (2^23), |x| >= 2^51 (2^22) left as it is",
            "an early exit for large values", _round(_MAGIC)),
    Mistake("RoundSTE", "the right trick, (|x| + 2^23) - 2^23, but x itself from 6e6 on",
            "RoundSTE leaves x unrounded at x = 6000000.5",
            _round(edit(_RIGHT, ("small = x.abs() < p", "small = x.abs() < 6e6")))),
    Mistake("FakeQuantize", "codes by the 1.5 * 2^52 trick with an early exit at 2^51",
            "FakeQuantize leaves x / scale unrounded", _FQ_MAGIC_ROUND),
    Mistake("FakeQuantize", "scale's gradient with floor(v + 0.5) for round(v) in backward",
            "inside the clip it rounds halves up, floor(v + 0.5)",
            _fq_scale(edit(FQ_LSQ, ("r - v", "torch.floor(v + 0.5) - v")))),
    Mistake("FakeQuantize", "scale's gradient with halves rounded away from zero in backward",
            "inside the clip it rounds halves away from zero",
            _fq_scale(edit(FQ_LSQ, ("r - v", "torch.sign(v) * torch.floor(v.abs() + 0.5) - v")))),
]

UNUSUAL = [
    Unusual("RoundSTE", "hand-made round: (|x| + 2^23) - 2^23 below 2^23, x itself above",
            _round(_RIGHT)),
]
