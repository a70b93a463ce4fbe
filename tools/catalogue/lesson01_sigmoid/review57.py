"""Lesson 01, review 57: per-call state kept in a module global the old length test did not
see (a WeakKeyDictionary keyed by ctx; a dict keyed by id(ctx) whose freed ids come back on a
rerun, so that it does not grow; a deque popped in backward), Softplus's output kept in a
global dict and popped in backward (gone when backward runs twice), a backward that fails on
an empty x, and the review's log-space unusual answer (its softmax MySigmoid made
contiguous is sigmoid.py's view into the stack, copied)."""

from .. import Mistake, Unusual, edit
from .answers import SCALED_FORWARD, SCALED_READ, SOFTPLUS_STABLE, _scaled, _softplus

SCALED = _scaled(SCALED_FORWARD,
                 SCALED_READ + "        return grad_output * ctx.scale * s * (1 - s), None")
OUTSIDE = "ScaledSigmoid.forward kept state outside ctx"

LOG_SPACE = (
            "import math\nimport torch.nn.functional as F\n" + edit(
                SCALED,
                ("        return scale * torch.sigmoid(x)",
                 "        if scale == 0:\n            return torch.zeros_like(x) * scale\n"
                 "        return math.copysign(1.0, scale) * torch.exp(math.log(abs(scale))"
                 " + F.logsigmoid(x))"),
                ("        s = torch.sigmoid(x)\n"
                 "        return grad_output * ctx.scale * s * (1 - s), None",
                 "        if ctx.scale == 0:\n            return grad_output * 0.0 * x, None\n"
                 "        slope = torch.exp(math.log(abs(ctx.scale)) + F.logsigmoid(x)"
                 " + F.logsigmoid(-x))\n"
                 "        return grad_output * math.copysign(1.0, ctx.scale) * slope, None")))

UNUSUAL = [
    Unusual("ScaledSigmoid", "log space: sign(scale) * exp(log|scale| + logsigmoid(x)), "
            "scale 0 apart", LOG_SPACE),
]

MISTAKES = [
    Mistake("ScaledSigmoid", "log space, scale 0 apart with grad_output * 0.0 / x: nan at x = 0",
            "where x = 0 (nan)",
            edit(LOG_SPACE, ("grad_output * 0.0 * x", "grad_output * 0.0 / x"))),
    Mistake("ScaledSigmoid", "scale in a module WeakKeyDictionary keyed by ctx",
            f"{OUTSIDE}: _scale_of in a module global",
            "import weakref\n_scale_of = weakref.WeakKeyDictionary()\n" + edit(
                SCALED, ("        ctx.scale = scale\n", "        _scale_of[ctx] = scale\n"),
                ("ctx.scale * s", "_scale_of[ctx] * s"))),
    Mistake("ScaledSigmoid", "scale in a module dict keyed by id(ctx), never removed",
            f"{OUTSIDE}: _SCALES in a module global",
            "_SCALES = {}\n" + edit(
                SCALED, ("        ctx.scale = scale\n", "        _SCALES[id(ctx)] = scale\n"),
                ("ctx.scale * s", "_SCALES[id(ctx)] * s"))),
    Mistake("ScaledSigmoid", "scale pushed on a module deque, popped in backward",
            "used another call's scale",
            "import collections\n_pending = collections.deque()\n" + edit(
                SCALED, ("        ctx.scale = scale\n", "        _pending.append(scale)\n"),
                ("ctx.scale * s", "_pending.pop() * s"))),
    Mistake("ScaledSigmoid", "backward tests y.abs().max() == 0: raises on an empty x",
            "raised RuntimeError with x of shape (0,)",
            _scaled("        y = scale * torch.sigmoid(x)\n        ctx.save_for_backward(y)\n"
                    "        ctx.scale = scale\n        return y",
                    "        y, = ctx.saved_tensors\n"
                    "        if y.abs().max() == 0:\n"
                    "            return torch.zeros_like(grad_output), None\n"
                    "        return grad_output * y * (1 - y / ctx.scale), None")),
    Mistake("Softplus", "y saved and also kept in a module dict keyed by id(ctx), popped in "
            "backward",
            "Softplus.backward raised KeyError when run a second time on one graph",
            "_outputs = {}\n" + _softplus(
                SOFTPLUS_STABLE + "        ctx.save_for_backward(y)\n"
                "        _outputs[id(ctx)] = y\n        return y",
                "        y = _outputs.pop(id(ctx))\n        return grad_output * -torch.expm1(-y)")),
]
