"""Lesson 01, review 54: the reviewer's Softplus that returns x itself where every x is above
37 (log(1 + e^x) rounds to x there; it broke no stated clause then, and now breaks the
contract's 'a new tensor'), ScaledSigmoid tails that lose the gradient by a cutoff or by
cancellation (each named as which one it is), and the unusual answers the contract's wording
must accept: a shortcut to x past a threshold of 29, which is within 1e-12 there."""

from .. import Mistake, Unusual
from .answers import SAVE_Y, _scaled, _sigmoid, _softplus

UNUSUAL = [
    Unusual("Softplus", "F.softplus with threshold=29: x itself above 29, within 1e-12",
            _softplus("        y = F.softplus(x, threshold=29.0)\n" + SAVE_Y)),
    Unusual("MySigmoid", "exp(-logaddexp(0, -x)), backward y - y * y",
            _sigmoid("        y = torch.exp(-torch.logaddexp(torch.zeros_like(x), -x))\n"
                     + SAVE_Y,
                     "        y, = ctx.saved_tensors\n"
                     "        return grad_output * (y - y * y)")),
]

MISTAKES = [
    Mistake("Softplus", "x itself returned when every entry is above 37",
            "Softplus returned x itself where every entry of x is above 37",
            _softplus("        if bool((x > 37).all()):\n            y = x\n        else:\n"
                      "            y = x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))\n"
                      + SAVE_Y)),
    Mistake("ScaledSigmoid", "backward 1/4 - (sigma - 1/2)^2: cancels in the tail",
            "cancellation, not a cutoff",
            _scaled("        ctx.save_for_backward(x)\n        ctx.scale = scale\n"
                    "        return scale * torch.sigmoid(x)",
                    "        x, = ctx.saved_tensors\n        s = torch.sigmoid(x)\n"
                    "        return grad_output * ctx.scale * (0.25 - (s - 0.5) ** 2), None")),
    Mistake("ScaledSigmoid", "sigma cut to 0 below x = -41, value and gradient",
            "a cutoff, not lost digits",
            _scaled("        ctx.save_for_backward(x)\n        ctx.scale = scale\n"
                    "        s = torch.where(x < -41, 0.0, torch.sigmoid(x))\n"
                    "        return scale * s",
                    "        x, = ctx.saved_tensors\n"
                    "        s = torch.where(x < -41, 0.0, torch.sigmoid(x))\n"
                    "        return grad_output * ctx.scale * s * (1 - s), None")),
]
