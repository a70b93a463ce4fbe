"""Lesson 01 answers whose proven hints carry a stable id that no other entry produces: what
was saved (nothing, or more than the output), a gradient that is y itself in the left tail,
ScaledSigmoid's output taken for sigma(x), MySigmoid's branches swapped, and MyReLU's and
Softplus's backward ignoring grad_output, ScaledSigmoid's scale rounded to float32, MySigmoid's
left side mirrored and MyReLU's mask taken in float32."""

from tools.catalogue import Mistake
from tools.catalogue.lesson01 import SAVE_Y, STABLE, _relu, _scaled, _sigmoid
from tools.catalogue.lesson01_transfer import SOFTPLUS_STABLE, _softplus

# y kept in a module-level list instead of ctx: one call at a time cannot tell, but nothing
# was saved with ctx.save_for_backward
_GLOBAL = "_last = []\n\n"

UNUSUAL = []

MISTAKES = [
    Mistake("ScaledSigmoid", "y * (1 - y) of its output y = scale * sigmoid(x)",
            "ScaledSigmoid's grad_x at scale = 2.5 is MySigmoid's derivative in y applied to the "
            "output", _scaled("        y = scale * torch.sigmoid(x)\n"
                              "        ctx.save_for_backward(y)\n        return y",
                              "        y, = ctx.saved_tensors\n"
                              "        return grad_output * y * (1 - y), None")),
    Mistake("MySigmoid", "output kept in a module global",
            "MySigmoid saved nothing with ctx.save_for_backward: save the output y",
            _GLOBAL + _sigmoid(STABLE + "        _last[:] = [y]\n        return y",
                               "        y = _last[0]\n        return grad_output * y * (1 - y)")),
    Mistake("MySigmoid", "saves y and the intermediate z",
            "MySigmoid saved 2 tensors (output, ",
            _sigmoid(STABLE + "        ctx.save_for_backward(y, z)\n        return y",
                     "        y, z = ctx.saved_tensors\n        return grad_output * y * (1 - y)")),
    Mistake("Softplus", "output kept in a module global",
            "Softplus saved nothing with ctx.save_for_backward: the contract saves the output y",
            _GLOBAL + _softplus(SOFTPLUS_STABLE + "        _last[:] = [y]\n        return y",
                                "        y = _last[0]\n"
                                "        return grad_output * -torch.expm1(-y)")),
    Mistake("Softplus", "gradient y itself below y = 1e-10",
            "that is y itself; sigmoid(x) = y - y^2 / 2",
            _softplus(SOFTPLUS_STABLE + SAVE_Y,
                      "        y, = ctx.saved_tensors\n"
                      "        return grad_output * torch.where(y < 1e-10, y, -torch.expm1(-y))")),
    # each sign given the other side's formula: sigma(-x), with a right gradient y (1 - y)
    Mistake("MySigmoid", "branches swapped: sigma(-x)", "at every x probed it is sigma(-x)",
            _sigmoid("        z = torch.exp(-x.abs())\n"
                     "        y = torch.where(x >= 0, z / (1 + z), 1 / (1 + z))\n" + SAVE_Y,
                     "        y, = ctx.saved_tensors\n        return grad_output * y * (1 - y)")),
    Mistake("MyReLU", "ignores grad_output", "MyReLU.backward ignores grad_output",
            _relu("        mask = x > 0\n        ctx.save_for_backward(mask)\n"
                  "        return x.clamp(min=0)",
                  "        mask, = ctx.saved_tensors\n        return mask.to(grad_output.dtype)")),
    Mistake("Softplus", "ignores grad_output", "Softplus.backward ignores grad_output",
            _softplus(SOFTPLUS_STABLE + SAVE_Y,
                      "        y, = ctx.saved_tensors\n        return -torch.expm1(-y)")),
    # torch.tensor(scale) is float32: multiplied into float64 tensors it keeps its 7 digits
    Mistake("ScaledSigmoid", "scale as torch.tensor(scale), float32, in forward and backward",
            "scale became a float32 tensor: torch.tensor(scale) without dtype=",
            _scaled("        ctx.save_for_backward(x)\n        ctx.scale = scale\n"
                    "        return torch.tensor(scale) * torch.sigmoid(x)",
                    "        x, = ctx.saved_tensors\n        s = torch.sigmoid(x)\n"
                    "        return grad_output * torch.tensor(ctx.scale) * s * (1 - s), None")),
    Mistake("ScaledSigmoid", "scale as torch.tensor(scale), float32, in backward only",
            "ScaledSigmoid's grad_x at scale = 0.1 is what the true one is at scale = "
            "0.10000000149011612",
            _scaled("        ctx.save_for_backward(x)\n        ctx.scale = scale\n"
                    "        return scale * torch.sigmoid(x)",
                    "        x, = ctx.saved_tensors\n        s = torch.sigmoid(x)\n"
                    "        scale = torch.tensor(ctx.scale)\n"
                    "        return grad_output * scale * s * (1 - s), None")),
]

MISTAKES += [
    # z = exp(-x) with no abs: z / (1 + z) is sigma(|x|) = 1 - sigma(x) on the left (and
    # inf / inf = nan below x = -709.78, which this probe names first)
    Mistake("MySigmoid", "z = exp(-x), no abs: the left side gives 1 - sigma(x)",
            "at every x < 0 it is sigma(-x) = 1 - sigma(x)",
            _sigmoid("        z = torch.exp(-x)\n"
                     "        y = torch.where(x >= 0, 1 / (1 + z), z / (1 + z))\n" + SAVE_Y,
                     "        y, = ctx.saved_tensors\n        return grad_output * y * (1 - y)")),
    # the mask taken in float32: 1e-300 rounds to 0 there, so its gradient is lost
    Mistake("MyReLU", "mask on x.float()", "your gradient is the mask x > 0 taken in float32",
            _relu("        mask = x.float() > 0\n        ctx.save_for_backward(mask)\n"
                  "        return x.clamp(min=0)",
                  "        mask, = ctx.saved_tensors\n        return grad_output * mask")),
]
