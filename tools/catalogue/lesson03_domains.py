"""Lesson 03 answers of issue 37's kinds (values that separate answers, a constant's range):
a softmax shifted by the whole tensor's maximum (in forward or in backward), an argmax of
rounded logits or of the softmax (with tau or without), FakeQuantize's v computed as
x * (1 / scale), which the contract accepts, and v computed as x / (scale + 1e-6), which it
does not."""

from tools.catalogue import Mistake, Unusual
from tools.catalogue.lesson03 import FQ_GRAD_X, FQ_LSQ, FQ_READ
from tools.catalogue.lesson03 import _fake_quantize, _round
from tools.catalogue.lesson03_transfer import READ, RIGHT, _sts

RECIPROCAL = FQ_READ.replace("v = x / scale", "v = x * (1 / scale)")

UNUSUAL = [
    Unusual("FakeQuantize", "v = x * (1 / scale), as PyTorch's kernels compute it",
            _fake_quantize(RECIPROCAL + f"        return {FQ_GRAD_X}, "
                           f"(grad_output * {FQ_LSQ}).sum(), None, None",
                           "        ctx.save_for_backward(x, scale)\n"
                           "        ctx.qmin, ctx.qmax = qmin, qmax\n"
                           "        return torch.clamp(torch.round(x * (1 / scale)), qmin, qmax)"
                           " * scale")),
]

EPS = "(scale + 1e-6)"  # a guard against a zero step: it moves every code a little

MISTAKES = [
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
    Mistake("RoundSTE", "rounded in float32, no detach trick",
            "RoundSTE's output is round of x rounded to float32 (at x = 4503599627370497 it gives "
            "4503599627370496, expected 4503599627370497)",
            _round("        return torch.round(x.float()).to(x.dtype)")),
    Mistake("RoundSTE", "magic-number rounding (x + 1.5 * 2^52) - 1.5 * 2^52",
            "RoundSTE's output is round(x) only up to rounding (at x = 4503599627370497 it gives "
            "4503599627370496, expected 4503599627370497)",
            _round("        magic = 1.5 * 2.0 ** (52 if x.dtype == torch.float64 else 23)\n"
                   "        return (x + magic) - magic")),
    Mistake("StraightThroughSoftmax", "softmax shifted by the whole tensor's maximum",
            "StraightThroughSoftmax's gradient for logits is not finite in row [0] (logits 0, 1, "
            "-1, 0.5, tau=0.7), where the softmax's gradient is finite: it is what a softmax "
            "shifted by the whole tensor's maximum gives",
            _sts("        soft, = ctx.saved_tensors\n" + RIGHT,
                 "        z = logits / tau\n        e = torch.exp(z - z.max())\n"
                 "        ctx.save_for_backward(e / e.sum(-1, keepdim=True))\n"
                 "        ctx.tau = tau\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)")),
    Mistake("StraightThroughSoftmax", "backward recomputes a softmax shifted by z.max() over "
            "the whole tensor (issue 37)",
            "StraightThroughSoftmax's gradient for logits is not finite in row [0] (logits 0, 1, "
            "-1, 0.5, tau=0.7), where the softmax's gradient is finite: it is what a softmax "
            "shifted by the whole tensor's maximum gives",
            _sts("        logits, = ctx.saved_tensors\n"
                 "        z = logits / ctx.tau\n        e = torch.exp(z - z.max())\n"
                 "        soft = e / e.sum(-1, keepdim=True)\n" + RIGHT,
                 "        ctx.save_for_backward(logits)\n        ctx.tau = tau\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)")),
    Mistake("StraightThroughSoftmax", "argmax of a float32 copy",
            "StraightThroughSoftmax's output picks another maximum in row [0] (logits 1.0, "
            "1.0000000000000002, 0.2, -1.0): it is the one-hot of argmax over the logits rounded "
            "to a narrower dtype",
            _sts(READ + RIGHT,
                 "        ctx.save_for_backward(torch.softmax(logits / tau, dim=-1))\n"
                 "        ctx.tau = tau\n"
                 "        return F.one_hot(logits.float().argmax(-1), logits.shape[-1])"
                 ".to(logits.dtype)")),
    Mistake("StraightThroughSoftmax", "one-hot of the softmax's argmax, as the Gumbel cell writes",
            "StraightThroughSoftmax's output picks another maximum in row [3] (logits 0.0, "
            "1e-20, -1.0, -2.0, tau=0.5): it is the one-hot of argmax over softmax(logits / tau),",
            _sts(READ + RIGHT,
                 "        soft = torch.softmax(logits / tau, dim=-1)\n"
                 "        ctx.save_for_backward(soft)\n        ctx.tau = tau\n"
                 "        return F.one_hot(soft.argmax(-1), logits.shape[-1]).to(logits.dtype)")),
    Mistake("StraightThroughSoftmax", "one-hot of softmax(logits)'s argmax, without tau",
            "StraightThroughSoftmax's output picks another maximum in row [3] (logits 0.0, "
            "1e-20, -1.0, -2.0, tau=0.5): it is the one-hot of argmax over softmax(logits),",
            _sts(READ + RIGHT,
                 "        ctx.save_for_backward(torch.softmax(logits / tau, dim=-1))\n"
                 "        ctx.tau = tau\n"
                 "        return F.one_hot(torch.softmax(logits, -1).argmax(-1), "
                 "logits.shape[-1]).to(logits.dtype)")),
]
