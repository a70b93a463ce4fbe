"""Lesson 03: FakeQuantize answers wrong only at half-codes: halves where half-up and
half-to-even differ (v = 0.5, 2.5, -1.5, -3.5), v moved by a guard against a zero step, and
'inside' judged by one convention for x and another for scale, or judged on v while round(v)
picks the clipped side, or by comparing v with qmin - 0.5 and qmax + 0.5, which only an odd
qmin or an even qmax tells apart from round(v).
Right: a convention chosen per edge, round(v) at one and v at the other, one mask for both
gradients (the contract accepts either at each edge)."""

from .. import Mistake, Unusual
from .answers import FQ_GRAD_X, FQ_LSQ, FQ_READ, _fake_quantize, fq_gated

_FQ_HALVES = ("        ctx.save_for_backward(x, scale)\n        ctx.qmin, ctx.qmax = qmin, qmax\n"
              "        v = x / scale\n        return torch.clamp({codes}, qmin, qmax) * scale")
_FQ_RIGHT = FQ_READ + f"        return {FQ_GRAD_X}, (grad_output * {FQ_LSQ}).sum(), None, None"
_FQ_ROUNDED = ("        x, scale = ctx.saved_tensors\n        v = x / scale\n"
               "        r = torch.round(v)\n"
               "        on_v = (v >= ctx.qmin) & (v <= ctx.qmax)\n"
               "        on_r = (r >= ctx.qmin) & (r <= ctx.qmax)\n")

_FQ_PER_EDGE = ("        x, scale = ctx.saved_tensors\n        v = x / scale\n"
                "        r = torch.round(v)\n"
                "        below = {low} < ctx.qmin\n        above = {high} > ctx.qmax\n"
                "        inside = ~below & ~above\n"
                "        local = torch.where(inside, r - v, torch.where(below, float(ctx.qmin), "
                "float(ctx.qmax)))\n"
                + fq_gated("grad_output * inside", "(grad_output * local).sum()"))

UNUSUAL = [
    Unusual("FakeQuantize", "round(v) judged at qmin, v at qmax, one mask for both gradients",
            _fake_quantize(_FQ_PER_EDGE.format(low="r", high="v"))),
    Unusual("FakeQuantize", "v judged at qmin, round(v) at qmax, one mask for both gradients",
            _fake_quantize(_FQ_PER_EDGE.format(low="v", high="r"))),
]

EPS = "(scale + 1e-6)"  # a guard against a zero step: it moves every code a little

MISTAKES = [
    # inside judged on v, but the clipped side picked by round(v) < qmin: in the band below
    # qmin, round(v) = qmin is not below it, so that element takes qmax (review 8's answer)
    Mistake("FakeQuantize", "inside on v, the clipped side picked by round(v) < qmin",
            "in the half-step band below qmin",
            _fake_quantize(FQ_READ + fq_gated(FQ_GRAD_X, "(grad_output * torch.where(inside, "
                                              "r - v, torch.where(r < ctx.qmin, float(ctx.qmin), "
                                              "float(ctx.qmax)))).sum()"))),
    Mistake("FakeQuantize", "floor(v + 0.5): halves rounded up", "FakeQuantize's codes are "
            "floor(x / scale + 0.5), which rounds halves up",
            _fake_quantize(_FQ_RIGHT, _FQ_HALVES.format(codes="torch.floor(v + 0.5)")),
            named=True),
    Mistake("FakeQuantize", "halves rounded away from zero (C's round)", "FakeQuantize's codes "
            "are rounded half away from zero",
            _fake_quantize(_FQ_RIGHT, _FQ_HALVES.format(
                codes="torch.sign(v) * torch.floor(v.abs() + 0.5)"))),
    Mistake("FakeQuantize", "x judged on v, scale on round(v)", "FakeQuantize judges 'inside' on "
            "v for x's gradient but on round(v) for scale's",
            _fake_quantize(_FQ_ROUNDED + "        local = torch.where(on_r, r - v, "
                           "torch.clamp(r, ctx.qmin, ctx.qmax))\n"
                           "        return grad_output * on_v, (grad_output * local).sum(), "
                           "None, None"), named=True),
    Mistake("FakeQuantize", "x judged on round(v), scale on v", "FakeQuantize judges 'inside' on "
            "round(v) for x's gradient but on v for scale's",
            _fake_quantize(_FQ_ROUNDED + "        local = torch.where(on_v, r - v, torch.where("
                           "v < ctx.qmin, float(ctx.qmin), float(ctx.qmax)))\n"
                           "        return grad_output * on_r, (grad_output * local).sum(), "
                           "None, None")),
    Mistake("FakeQuantize", "inside as qmin - 0.5 <= v < qmax + 0.5",
            "FakeQuantize's gradient for x compares x / scale with qmin - 0.5 and qmax + 0.5: "
            "torch.round sends a half to the even neighbour",
            _fake_quantize(
                "        x, scale = ctx.saved_tensors\n        v = x / scale\n"
                "        inside = (v >= ctx.qmin - 0.5) & (v < ctx.qmax + 0.5)\n"
                "        clipped = torch.where(v < ctx.qmin, float(ctx.qmin), float(ctx.qmax))\n"
                "        local = torch.where(inside, torch.round(v) - v, clipped)\n"
                "        return grad_output * inside, (grad_output * local).sum(), None, None")),
    Mistake("FakeQuantize", "divides by scale + 1e-6: a half-code rounds the other way",
            "FakeQuantize's output is wrong: at x / scale = -3.5 (scale=0.5, qmin=-4, qmax=3) it "
            "gives -1.5, expected -2",
            _fake_quantize(FQ_READ.replace("x / scale", f"x / {EPS}")
                           + f"        return {FQ_GRAD_X}, (grad_output * {FQ_LSQ}).sum(), "
                           "None, None",
                           "        ctx.save_for_backward(x, scale)\n"
                           "        ctx.qmin, ctx.qmax = qmin, qmax\n"
                           f"        return torch.clamp(torch.round(x / {EPS}), qmin, qmax)"
                           " * scale")),
]
