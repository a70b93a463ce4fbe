"""Lesson 01 answers with a step in float32: a float32 output, which the battery's dtype check
names (no probe may crash comparing it with float64), and a float32 sigmoid inside
ScaledSigmoid's backward, which the held precision finding names (not the tiny-scale check)."""

from tools.catalogue import Mistake
from tools.catalogue.lesson01 import FROM_Y, SAVE_Y, STABLE, _scaled, _sigmoid

FLOAT32_OUTPUT = ("'s output has dtype torch.float32 but should have dtype torch.float64: keep "
                  "the input's dtype")

UNUSUAL = []

MISTAKES = [
    Mistake("MySigmoid", "x = x.float() first: a float32 output", "MySigmoid" + FLOAT32_OUTPUT,
            _sigmoid("        x = x.float()\n" + STABLE + SAVE_Y, FROM_Y)),
    Mistake("ScaledSigmoid", "scale * torch.sigmoid(x.float()): a float32 output",
            "ScaledSigmoid" + FLOAT32_OUTPUT,
            _scaled("        ctx.save_for_backward(x)\n        ctx.scale = scale\n"
                    "        return scale * torch.sigmoid(x.float())",
                    "        x, = ctx.saved_tensors\n        s = torch.sigmoid(x)\n"
                    "        return grad_output * ctx.scale * s * (1 - s), None")),
    Mistake("ScaledSigmoid", "output written into torch.zeros(x.shape), a float32 tensor",
            "ScaledSigmoid" + FLOAT32_OUTPUT,
            _scaled("        ctx.save_for_backward(x)\n        ctx.scale = scale\n"
                    "        y = torch.zeros(x.shape)\n        y[...] = scale * torch.sigmoid(x)\n"
                    "        return y",
                    "        x, = ctx.saved_tensors\n        s = torch.sigmoid(x)\n"
                    "        return grad_output * ctx.scale * s * (1 - s), None")),
    Mistake("ScaledSigmoid", "backward's sigmoid on x.float()",
            "grad_x is within about 1e-7 of the truth but far outside float64's precision",
            _scaled("        ctx.save_for_backward(x)\n        ctx.scale = scale\n"
                    "        return scale * torch.sigmoid(x)",
                    "        x, = ctx.saved_tensors\n        s = torch.sigmoid(x.float())\n"
                    "        return grad_output * ctx.scale * s * (1 - s), None")),
]
