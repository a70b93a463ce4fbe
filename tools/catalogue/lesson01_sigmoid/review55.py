"""Lesson 01, review 55: answers that break 'never modify grad_output or x in place' or 'never
x itself' only past some size or value (the grader once checked those on 7- and 1024-entry
tensors and at x = 40, 100, 800; the watch now judges every call, 8192 entries and
x up to 1e300 included), and two unusual answers the contract must accept."""

from .. import Mistake, Unusual, edit
from .answers import (FROM_Y, SAVE_Y, SCALED_FORWARD, SCALED_READ, SOFTPLUS_STABLE, STABLE,
                      _relu, _scaled, _sigmoid, _softplus)

LARGE = "        if grad_output.numel() > 1024 and grad_output.is_contiguous():\n"
MASK_FORWARD = ("        m = x > 0\n        ctx.save_for_backward(m)\n"
                "        return x.clamp(min=0)")
MASK_BACKWARD = "        m, = ctx.saved_tensors\n        return torch.where(m, grad_output, 0)"
SOFTPLUS_BACKWARD = "        y, = ctx.saved_tensors\n        return grad_output * -torch.expm1(-y)"

Y_OR_MASK = _relu("        y = torch.maximum(x, torch.zeros((), dtype=x.dtype, device=x.device))"
                  "\n        ctx.save_for_backward(y if x.numel() < 4096 else x > 0)\n"
                  "        return y",
                  "        s, = ctx.saved_tensors\n"
                  "        m = s if s.dtype == torch.bool else s > 0\n"
                  "        return grad_output.masked_fill(~m, 0)")

UNUSUAL = [
    Unusual("MyReLU", "saves y below 4096 entries, a bool mask above; maximum and masked_fill",
            Y_OR_MASK),
    Unusual("ScaledSigmoid", "saves x; sigma'(x) as exp(logsigmoid(x) + logsigmoid(-x))",
            edit(_scaled(SCALED_FORWARD, SCALED_READ
                         + "        return grad_output * ctx.scale * s * (1 - s), None"),
                 ("        s = torch.sigmoid(x)\n",
                  "        d = torch.exp(torch.nn.functional.logsigmoid(x)"
                  " + torch.nn.functional.logsigmoid(-x))\n"),
                 ("ctx.scale * s * (1 - s)", "(d * ctx.scale)"))),
]

MISTAKES = [
    Mistake("MySigmoid", "grad_output.mul_ in backward above 1024 entries",
            "backward modified grad_output in place",
            edit(_sigmoid(STABLE + SAVE_Y, FROM_Y),
                 ("        return grad_output * y * (1 - y)",
                  LARGE + "            return grad_output.mul_(y * (1 - y))\n"
                  "        return grad_output * y * (1 - y)"))),
    Mistake("MyReLU", "grad_output.masked_fill_ in backward above 1024 entries",
            "backward modified grad_output in place",
            edit(_relu(MASK_FORWARD, MASK_BACKWARD),
                 ("        return torch.where", LARGE + "            return "
                  "grad_output.masked_fill_(~m, 0)\n        return torch.where"))),
    Mistake("MyReLU", "the mask above 4096 entries is x > 1e-6 (mutants' move_threshold)",
            "the mask's threshold lies above 0",
            edit(Y_OR_MASK, ("else x > 0)", "else x > 1e-06)"))),
    Mistake("MyReLU", "x.clamp_ in forward above 1024 entries, when x needs no gradient",
            "MyReLU.forward modified its input x in place",
            edit(_relu(MASK_FORWARD, MASK_BACKWARD),
                 ("        return x.clamp(min=0)",
                  "        if x.numel() > 1024 and not x.requires_grad:\n"
                  "            return x.clamp_(min=0)\n        return x.clamp(min=0)"))),
    Mistake("ScaledSigmoid", "grad_output.mul_ in backward above 1024 entries",
            "backward modified grad_output in place",
            edit(_scaled(SCALED_FORWARD, SCALED_READ
                         + "        return grad_output * ctx.scale * s * (1 - s), None"),
                 ("        return grad_output *", LARGE + "            return "
                  "grad_output.mul_(ctx.scale * s * (1 - s)), None\n        return grad_output *"))),
    Mistake("Softplus", "x itself returned when every entry is above 40",
            "Softplus returned x itself",
            _softplus("        if x.numel() and bool((x > 40).all()):\n            y = x\n"
                      "        else:\n    " + SOFTPLUS_STABLE + SAVE_Y, SOFTPLUS_BACKWARD)),
    Mistake("Softplus", "x itself returned when every entry is above 750",
            "Softplus returned x itself",
            _softplus("        if x.numel() and bool((x > 750).all()):\n            y = x\n"
                      "        else:\n    " + SOFTPLUS_STABLE + SAVE_Y, SOFTPLUS_BACKWARD)),
    Mistake("Softplus", "grad_output.mul_ in backward above 1024 entries",
            "backward modified grad_output in place",
            edit(_softplus(SOFTPLUS_STABLE + SAVE_Y, SOFTPLUS_BACKWARD),
                 ("        return grad_output *", LARGE + "            return "
                  "grad_output.mul_(-torch.expm1(-y))\n        return grad_output *"))),
    Mistake("MySigmoid", "saves y, backward reads the last call's y from a module global",
            "backward used another call's inputs",
            "_LAST = {}\n" + edit(_sigmoid(STABLE + SAVE_Y, FROM_Y),
                                  ("        ctx.save_for_backward(y)\n",
                                   "        ctx.save_for_backward(y)\n"
                                   "        _LAST['y'] = y.detach()\n"),
                                  ("        y, = ctx.saved_tensors\n",
                                   "        y = _LAST['y']\n"))),
    Mistake("Softplus", "saves y, backward reads the last call's y from a module global",
            "backward used another call's inputs",
            "_LAST = {}\n" + edit(_softplus(SOFTPLUS_STABLE + SAVE_Y, SOFTPLUS_BACKWARD),
                                  ("        ctx.save_for_backward(y)\n",
                                   "        ctx.save_for_backward(y)\n"
                                   "        _LAST['y'] = y.detach()\n"),
                                  ("        y, = ctx.saved_tensors\n",
                                   "        y = _LAST['y']\n"))),
    Mistake("ScaledSigmoid", "keeps y, backward y - y * y / scale: y * y about scale^2",
            "backward multiplies two factors of the scale's size (such as y * y)",
            _scaled("        y = scale * torch.sigmoid(x)\n        ctx.save_for_backward(y)\n"
                    "        ctx.scale = scale\n        return y",
                    "        y, = ctx.saved_tensors\n        if ctx.scale == 0:\n"
                    "            return torch.zeros_like(grad_output), None\n"
                    "        return grad_output * (y - y * y / ctx.scale), None")),
]
