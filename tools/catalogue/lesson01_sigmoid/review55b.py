"""Lesson 01, review 55b: answers that differ from a right one only where the grader once did
not look (a mask threshold at a dtype's smallest normal number, probed in float64 alone at
1e-300; x saved only past 65536 entries, where the largest watched call had 8193), a dict
on the class (named for the entry it leaks) or in a module global keyed by id(ctx) (named
for the popped entry a second backward misses; review57.py's for the entry it leaks), and two
unusual answers."""

from .. import Mistake, Unusual, edit
from .answers import (FROM_Y, SAVE_Y, SCALED_FORWARD, SCALED_READ, SOFTPLUS_STABLE, STABLE,
                      _relu, _scaled, _sigmoid, _softplus)

MASK_FORWARD = ("        m = x > 0\n        ctx.save_for_backward(m)\n"
                "        return x.clamp(min=0)")
MASK_BACKWARD = "        m, = ctx.saved_tensors\n        return torch.where(m, grad_output, 0)"
# saves x past 65536 entries, y below; backward tells them apart by a flag on ctx
BIG = "        ctx.big = x.numel() > 65536\n"

UNUSUAL = [
    Unusual("MySigmoid", "the textbook 1 / (1 + exp(-x)) forward, backward y - y * y",
            _sigmoid("        y = 1 / (1 + torch.exp(-x))\n" + SAVE_Y,
                     "        y, = ctx.saved_tensors\n        return grad_output * (y - y * y)")),
    Unusual("MyReLU", "where(x > 0, x, 0.) forward saving y, masked_fill(y == 0) backward",
            _relu("        y = torch.where(x > 0, x, 0.0)\n" + SAVE_Y,
                  "        y, = ctx.saved_tensors\n"
                  "        return grad_output.masked_fill(y == 0, 0)")),
]

SCALE_IN_CLASS_DICT = edit(
    _scaled(SCALED_FORWARD, SCALED_READ + "        return grad_output * ctx.scale * s * (1 - s), None"),
    ("(torch.autograd.Function):\n", "(torch.autograd.Function):\n    scales = {}\n\n"),
    ("        ctx.scale = scale\n", "        ScaledSigmoid.scales[id(ctx)] = scale\n"),
    ("ctx.scale * s", "ScaledSigmoid.scales.pop(id(ctx)) * s"))

MISTAKES = [
    Mistake("MyReLU", "mask x > finfo(x.dtype).tiny: positive subnormals get gradient 0",
            "the mask's threshold lies above 0",
            edit(_relu(MASK_FORWARD, MASK_BACKWARD),
                 ("        m = x > 0\n", "        m = x > torch.finfo(x.dtype).tiny\n"))),
    Mistake("MyReLU", "saves x instead of y past 65536 entries",
            "MyReLU saved its input x",
            _relu("        y = x.clamp(min=0)\n"
                  "        ctx.save_for_backward(y if x.numel() <= 65536 else x)\n"
                  "        return y",
                  "        t, = ctx.saved_tensors\n        return torch.where(t > 0, grad_output, 0)")),
    Mistake("MySigmoid", "saves x instead of y past 65536 entries, sigma again in backward",
            "MySigmoid saved its input x",
            edit(_sigmoid(STABLE + SAVE_Y, FROM_Y),
                 ("        ctx.save_for_backward(y)\n",
                  BIG + "        ctx.save_for_backward(x if ctx.big else y)\n"),
                 ("        y, = ctx.saved_tensors\n",
                  "        y, = ctx.saved_tensors\n        if ctx.big:\n"
                  "            z = torch.exp(-y.abs())\n"
                  "            y = torch.where(y >= 0, 1 / (1 + z), z / (1 + z))\n"))),
    Mistake("Softplus", "saves x instead of y past 65536 entries",
            "Softplus saved",
            edit(_softplus(SOFTPLUS_STABLE + SAVE_Y),
                 ("        ctx.save_for_backward(y)\n",
                  BIG + "        ctx.save_for_backward(x if ctx.big else y)\n"),
                 ("        y, = ctx.saved_tensors\n",
                  "        y, = ctx.saved_tensors\n        if ctx.big:\n"
                  "            y = y.clamp(min=0) + torch.log1p(torch.exp(-y.abs()))\n"))),
    Mistake("ScaledSigmoid", "scale in a dict on the class keyed by id(ctx), popped in backward",
            "adding an entry to a dict on the class", SCALE_IN_CLASS_DICT),
    Mistake("ScaledSigmoid", "scale in a module dict keyed by id(ctx), popped in backward",
            "ScaledSigmoid.backward raised KeyError when run a second time on one graph",
            "\n_scales = {}\n" + edit(SCALE_IN_CLASS_DICT, ("    scales = {}\n\n", ""),
                                        ("ScaledSigmoid.scales", "_scales"))),
]
