"""Lesson 03: answers written by the reviewer of review 55, kept as edits of the shared
bodies, and the variants their fixes probe: a clipped element's scale gradient as
sign(v) * qmax (or sign(v) * |qmin|), a symmetric range assumed; v recomputed in float32 for
float64 x, for both gradients or for scale's alone, beside a tolerance of 1e-7 on the
edge that looks alike on the battery's inputs; a scale gradient off by a factor near 1;
and two unusual answers (v saved alone, qmin and qmax as a tuple, scale's gradient left
unsummed; the window as a bool clamp(x, -1, 1) == x saved as the mask)."""

from .. import Mistake, Unusual, edit
from .answers import FQ_LSQ, FQ_READ, _clipped, _fake_quantize, _fq_scale, fq_gated

_V32 = "        v = (x.float() / scale.float()).to(x.dtype)\n"

MISTAKES = [
    Mistake("FakeQuantize", "a clipped element's dy/ds as sign(v) * qmax (a symmetric range)",
            "elements below the clip (v < qmin) contribute -qmax",
            _fq_scale("torch.where(inside, r - v, torch.sign(v) * ctx.qmax)")),
    Mistake("FakeQuantize", "a clipped element's dy/ds as sign(v) * |qmin| (a symmetric range)",
            "elements above the clip (v > qmax) contribute -qmin",
            _fq_scale("torch.where(inside, r - v, -torch.sign(v) * ctx.qmin)")),
    Mistake("FakeQuantize", "v recomputed in float32 in backward, for float64 x",
            "FakeQuantize computes v = x / scale in float32 for float64 x",
            edit(_fq_scale(FQ_LSQ), ("        v = x / scale\n", _V32))),
    Mistake("FakeQuantize", "v in float32 for scale's gradient alone, for float64 x",
            "FakeQuantize computes v = x / scale in float32 for float64 x",
            edit(_fq_scale(FQ_LSQ), ("        clipped =", _V32 + "        r = torch.round(v)\n"
                                     "        clipped ="),
                 ("(grad_output * (torch.where(inside, r - v, clipped)))",
                  "(grad_output * (torch.where((v >= ctx.qmin) & (v <= ctx.qmax), r - v, "
                  "clipped)))"))),
    # a tolerance just below float32's half-ulp at 3 (1.19e-7): the float32 probe leaves it be
    Mistake("FakeQuantize", "inside with a tolerance of 1e-7 on each edge",
            "judges the half-step band beyond 3 two ways",
            edit(_fq_scale(FQ_LSQ), ("(v >= ctx.qmin) & (v <= ctx.qmax)",
                                     "(v >= ctx.qmin - 1e-7) & (v <= ctx.qmax + 1e-7)"))),
    Mistake("FakeQuantize", "scale's gradient times 1 + 1e-7",
            "FakeQuantize's gradient for scale is 1.0000001 times the contract's",
            edit(_fq_scale(FQ_LSQ), (".sum(), None", ".sum() * (1 + 1e-7), None"))),
]

UNUSUAL = [
    Unusual("FakeQuantize", "saves v = x * (1 / scale) alone, bounds as a tuple, scale's "
            "gradient unsummed", _fake_quantize(
                "        v, = ctx.saved_tensors\n        qmin, qmax = ctx.bounds\n"
                "        r = torch.round(v)\n        inside = (r >= qmin) & (r <= qmax)\n"
                "        local = torch.where(inside, r - v, torch.where(r < qmin, float(qmin), "
                "float(qmax)))\n" + fq_gated("grad_output * inside", "grad_output * local"),
                "        v = x * (1 / scale)\n        ctx.save_for_backward(v)\n"
                "        ctx.bounds = (qmin, qmax)\n"
                "        return torch.clamp(torch.round(v), qmin, qmax) * scale")),
    Unusual("SignClippedSTE", "the bool mask clamp(x, -1, 1) == x saved in forward",
            _clipped("        inside, = ctx.saved_tensors\n        return grad_output * inside",
                     "        ctx.save_for_backward(torch.clamp(x, -1, 1) == x)\n"
                     "        return torch.sign(x)")),
]
