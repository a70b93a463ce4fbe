"""Lesson 01, second review 54: the reviewer's answers that passed because what forward saves
was judged on small float64 leaves only (x saved once x has 25 or more entries, or in
float16; y and a mask both saved when x is not a leaf), a forward that works in x's memory
when x needs no gradient, ScaledSigmoid's scale kept as an attribute of x (an AttributeError
before, now named as state shared between calls), three gradients returned for two inputs
(PyTorch drops the trailing None; the contract asks one per input), and PyTorch's own
sigmoid in MySigmoid's forward, which the contract now rules out (both such answers were
unusual ones before)."""

from .. import Mistake
from .answers import (FROM_Y, SAVE_Y, SOFTPLUS_STABLE, STABLE, _relu, _scaled, _sigmoid,
                      _softplus)

SAVES_X_FROM_25 = "MySigmoid saved its input x"
RELU_ONE_TENSOR = "the contract saves one tensor, a boolean mask"
WRITES_X = "forward modified its input x in place: inputs must stay untouched"
RELU_FROM_SAVED = ("        s, = ctx.saved_tensors\n"
                   "        return torch.where(s if s.dtype == torch.bool else s > 0, "
                   "grad_output, 0)")

MISTAKES = [
    Mistake("MySigmoid", "torch.sigmoid forward, ATen's sigmoid_backward formula by hand",
            "MySigmoid.forward runs PyTorch's own sigmoid (aten.sigmoid",
            _sigmoid("        y = torch.sigmoid(x)\n" + SAVE_Y,
                     "        y, = ctx.saved_tensors\n        return grad_output * (1 - y) * y")),
    Mistake("MySigmoid", "exp(logsigmoid(x)), a log-space form exact in the tail",
            "MySigmoid.forward runs PyTorch's own sigmoid (aten.log_sigmoid_forward",
            _sigmoid("        y = torch.exp(F.logsigmoid(x))\n" + SAVE_Y, FROM_Y)),
    Mistake("MySigmoid", "saves x instead of y once x has 25 entries or more", SAVES_X_FROM_25,
            _sigmoid(STABLE + "        ctx.big = x.numel() >= 25\n"
                     "        ctx.save_for_backward(x if ctx.big else y)\n        return y",
                     "        s, = ctx.saved_tensors\n"
                     "        if ctx.big:\n            z = torch.exp(-s.abs())\n"
                     "            s = torch.where(s >= 0, 1 / (1 + z), z / (1 + z))\n"
                     "        return grad_output * s * (1 - s)")),
    Mistake("MySigmoid", "works in x's memory when x needs no gradient",
            "MySigmoid." + WRITES_X,
            _sigmoid("        pos = x >= 0\n"
                     "        work = x if not x.requires_grad else x.clone()\n"
                     "        z = work.abs_().neg_().exp_()\n"
                     "        y = torch.where(pos, 1 / (1 + z), z / (1 + z))\n" + SAVE_Y, FROM_Y)),
    Mistake("MyReLU", "saves y and a mask when x is not a leaf",
            "MyReLU saved 2 tensors, its output y and a bool tensor of its own",
            _relu("        y = x.clamp(min=0)\n"
                  "        if x.grad_fn is not None:\n"
                  "            ctx.save_for_backward(y, x > 0)\n"
                  "        else:\n            ctx.save_for_backward(x > 0)\n        return y",
                  "        m = ctx.saved_tensors[-1]\n        return torch.where(m, grad_output, 0)")),
    Mistake("MyReLU", "saves x itself for float16 x", "MyReLU saved its input x: " + RELU_ONE_TENSOR,
            _relu("        ctx.save_for_backward(x if x.dtype == torch.float16 else x > 0)\n"
                  "        return x.clamp(min=0)", RELU_FROM_SAVED)),
    Mistake("MyReLU", "saves x itself once x has 25 entries or more",
            "MyReLU saved its input x: " + RELU_ONE_TENSOR,
            _relu("        ctx.save_for_backward(x if x.numel() >= 25 else x > 0)\n"
                  "        return x.clamp(min=0)", RELU_FROM_SAVED)),
    Mistake("ScaledSigmoid", "scale kept as an attribute of x",
            "ScaledSigmoid.forward set x.scale on its input x: an attribute of a tensor is state "
            "shared between calls",
            _scaled("        x.scale = scale\n        ctx.save_for_backward(x)\n"
                    "        return scale * torch.sigmoid(x)",
                    "        x, = ctx.saved_tensors\n        s = torch.sigmoid(x)\n"
                    "        return grad_output * x.scale * s * (1 - s), None")),
    Mistake("ScaledSigmoid", "works in x's memory when x needs no gradient",
            "ScaledSigmoid." + WRITES_X,
            _scaled("        ctx.save_for_backward(torch.sigmoid(x))\n        ctx.scale = scale\n"
                    "        work = x if not x.requires_grad else x.clone()\n"
                    "        return work.sigmoid_().mul_(scale)",
                    "        s, = ctx.saved_tensors\n"
                    "        return grad_output * ctx.scale * s * (1 - s), None")),
    Mistake("ScaledSigmoid", "three gradients for two inputs, the last None",
            "ScaledSigmoid.backward returned 3 gradients for 2 inputs",
            _scaled("        ctx.save_for_backward(x)\n        ctx.scale = scale\n"
                    "        return scale * torch.sigmoid(x)",
                    "        x, = ctx.saved_tensors\n        s = torch.sigmoid(x)\n"
                    "        return grad_output * ctx.scale * s * (1 - s), None, None")),
    Mistake("Softplus", "saves x instead of y once x has 25 entries or more",
            "Softplus saved input x: the contract saves only its output y",
            _softplus(SOFTPLUS_STABLE + "        ctx.big = x.numel() >= 25\n"
                      "        ctx.save_for_backward(x if ctx.big else y)\n        return y",
                      "        s, = ctx.saved_tensors\n"
                      "        if ctx.big:\n            z = torch.exp(-s.abs())\n"
                      "            return grad_output * torch.where(s >= 0, 1 / (1 + z), "
                      "z / (1 + z))\n"
                      "        return grad_output * -torch.expm1(-s)")),
]
