"""Lesson 01: answers with known verdicts for ScaledSigmoid, among them its scale rounded to
float32 or kept on the class or in a global (issue 37), a float32 output, and a float32 sigmoid
inside backward, which the held precision finding names (not the tiny-scale check)."""

from .. import Mistake, Unusual
from .answers import FLOAT32_OUTPUT, SCALED_FORWARD, SCALED_READ, _scaled

SCALE_ON_THE_CLASS = """
class ScaledSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        z = torch.exp(-x.abs())
        y = torch.where(x >= 0, 1 / (1 + z), z / (1 + z))
        ctx.save_for_backward(y)
        ScaledSigmoid.scale = scale
        return scale * y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * ScaledSigmoid.scale * y * (1 - y), None
"""

SCALE_IN_A_GLOBAL = """
_scale = [1.0]


class ScaledSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        z = torch.exp(-x.abs())
        y = torch.where(x >= 0, 1 / (1 + z), z / (1 + z))
        ctx.save_for_backward(y)
        _scale[0] = scale
        return scale * y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * _scale[0] * y * (1 - y), None
"""

UNUSUAL = [
    Unusual("ScaledSigmoid", "saves sigmoid(x), a new tensor",
            _scaled("        s = torch.sigmoid(x)\n        ctx.save_for_backward(s)\n"
                    "        ctx.scale = scale\n        return scale * s",
                    "        s, = ctx.saved_tensors\n"
                    "        return grad_output * ctx.scale * s * (1 - s), None")),
    Unusual("ScaledSigmoid", "the derivative through torch.special.expit and exp(-|x|)",
            _scaled("        ctx.save_for_backward(x)\n        ctx.scale = scale\n"
                    "        return torch.special.expit(x) * scale",
                    "        x, = ctx.saved_tensors\n        z = torch.exp(-x.abs())\n"
                    "        return grad_output * ctx.scale * z / (1 + z) ** 2, None")),
    Unusual("ScaledSigmoid", "scale kept in a dict, gradient skipped when not needed",
            _scaled("        ctx.save_for_backward(x)\n        ctx.settings = {'scale': scale}\n"
                    "        return torch.sigmoid(x).mul(scale)",
                    "        if not ctx.needs_input_grad[0]:\n            return None, None\n"
                    "        x, = ctx.saved_tensors\n        s = torch.sigmoid(x)\n"
                    "        return grad_output * (ctx.settings['scale'] * s * (1 - s)), None")),
    Unusual("ScaledSigmoid", "saves only its output, zeros at scale == 0",
            _scaled("        y = scale * torch.sigmoid(x)\n        ctx.save_for_backward(y)\n"
                    "        ctx.scale = scale\n        return y",
                    "        y, = ctx.saved_tensors\n"
                    "        if ctx.scale == 0:\n"
                    "            return torch.zeros_like(grad_output), None\n"
                    "        return grad_output * y * (1 - y / ctx.scale), None")),
    Unusual("ScaledSigmoid", "sigma(x) * sigma(-x) for sigma * (1 - sigma)",
            _scaled(SCALED_FORWARD, "        x, = ctx.saved_tensors\n"
                    "        return grad_output * ctx.scale * torch.sigmoid(x) * torch.sigmoid(-x), None")),
    Unusual("ScaledSigmoid", "saves only its output, divides by (scale or 1)",
            _scaled("        y = scale * torch.sigmoid(x)\n        ctx.save_for_backward(y)\n"
                    "        ctx.scale = scale\n        return y",
                    "        y, = ctx.saved_tensors\n        s = y / (ctx.scale or 1.0)  # y is 0 at scale 0\n"
                    "        return grad_output * ctx.scale * s * (1 - s), None")),
    Unusual("ScaledSigmoid", "scale saved as a 0-d tensor beside x",
            _scaled("        ctx.save_for_backward(x, torch.tensor(scale, dtype=x.dtype))\n"
                    "        return scale * torch.sigmoid(x)",
                    "        x, scale = ctx.saved_tensors\n        s = torch.sigmoid(x)\n"
                    "        return grad_output * scale * s * (1 - s), None")),
]

MISTAKES = [
    # a fresh review (score 7): step 1's derivative, e^-x / (1 + e^-x)^2, as written: nan below
    # x = -709.78 (inf / inf), 0 from x = -354.9 down where the true gradient is normal
    Mistake("ScaledSigmoid", "saves x, backward step 1's e^-x / (1 + e^-x)^2 as written",
            "ScaledSigmoid's gradient is nan at x = -710, where the true one is 0: your gradient "
            "is step 1's formula",
            _scaled("        ctx.save_for_backward(x)\n        ctx.scale = scale\n"
                    "        return scale * torch.sigmoid(x)",
                    "        x, = ctx.saved_tensors\n        e = torch.exp(-x)\n"
                    "        return grad_output * ctx.scale * e / (1 + e) ** 2, None")),
    # and rewritten as e^-x sigma(x)^2: inf * 0 below x = -709.78, 0 from x = -372 down
    Mistake("ScaledSigmoid", "saves x, backward e^-x * sigma(x)^2",
            "ScaledSigmoid's gradient is nan at x = -710, where the true one is 0: your gradient "
            "is e^-x * sigma(x)^2",
            _scaled("        ctx.save_for_backward(x)\n        ctx.scale = scale\n"
                    "        return scale * torch.sigmoid(x)",
                    "        x, = ctx.saved_tensors\n        s = torch.sigmoid(x)\n"
                    "        return grad_output * ctx.scale * torch.exp(-x) * s * s, None")),
    # a fresh review (score 7): keeps y, scale == 0 written out, but y * (scale - y) is about
    # scale^2: 0 at scale = 4.45e-308, inf at 1e300; told so, not blamed on a threshold
    Mistake("ScaledSigmoid", "keeps y, backward y * (scale - y) / scale: a product about scale^2",
            "all zeros at scale = 1e-170 too, and inf at scale = 1e160, while right at 1e150 and "
            "1e-150: backward multiplies two factors of the scale's size",
            _scaled("        y = scale * torch.sigmoid(x)\n        ctx.save_for_backward(y)\n"
                    "        ctx.scale = scale\n        return y",
                    "        y, = ctx.saved_tensors\n        if ctx.scale == 0:\n"
                    "            return torch.zeros_like(grad_output), None\n"
                    "        return grad_output * y * (ctx.scale - y) / ctx.scale, None")),
    # a fresh review (score 7): MySigmoid's y (1 - y) on the scaled output, times scale
    Mistake("ScaledSigmoid", "saves y, backward scale * y * (1 - y)",
            "ScaledSigmoid's grad_x at scale = 2.5 is MySigmoid's derivative in y (times scale "
            "or not)",
            _scaled("        y = scale * torch.sigmoid(x)\n        ctx.save_for_backward(y)\n"
                    "        ctx.scale = scale\n        return y",
                    "        y, = ctx.saved_tensors\n"
                    "        return grad_output * ctx.scale * y * (1 - y), None")),
    Mistake("ScaledSigmoid", "a float gradient for scale", "backward returned a gradient for "
            "scale, which is not a tensor: return None for scale",
            _scaled(SCALED_FORWARD, SCALED_READ + "        return grad_output * ctx.scale * s * "
                    "(1 - s), 0.0")),
    # learner trial 80: a zero tensor for the float scale; the hint says it is not None
    Mistake("ScaledSigmoid", "a tensor of zeros for the float scale",
            "backward returned a tensor of zeros for scale, an input that is not a tensor: a "
            "tensor of zeros is not None",
            _scaled(SCALED_FORWARD, SCALED_READ + "        return grad_output * ctx.scale * s * "
                    "(1 - s), torch.zeros(())")),
    Mistake("ScaledSigmoid", "forgets the scale", "your gradient for x is off by a constant "
            "factor 0.4: a factor missing, or one too many?",
            _scaled(SCALED_FORWARD, SCALED_READ + "        return grad_output * s * (1 - s), "
                    "None"), nbgrader=True),
    Mistake("ScaledSigmoid", "sigma recovered as y / scale", "it saved its output y = scale "
            "* sigmoid(x), and recovering sigma(x) as y / scale gives 0/0 there",
            _scaled("        y = scale * torch.sigmoid(x)\n        ctx.save_for_backward(y)\n"
                    "        ctx.scale = scale\n        return y",
                    "        y, = ctx.saved_tensors\n        s = y / ctx.scale\n"
                    "        return grad_output * ctx.scale * s * (1 - s), None"), named=True),
    Mistake("ScaledSigmoid", "saves x, then divides by scale", "on the same x: a division by "
            "scale gives 0/0 there",
            _scaled(SCALED_FORWARD, SCALED_READ + "        y = ctx.scale * s\n"
                    "        return grad_output * y * (1 - y / ctx.scale), None")),
    Mistake("ScaledSigmoid", "sigma recovered as y / (scale + 1e-12), an epsilon",
            "it is also nan or inf at scale = -1e-12, and right at 2.5: backward divides by "
            "scale + 1e-12",
            _scaled("        y = scale * torch.sigmoid(x)\n        ctx.save_for_backward(y)\n"
                    "        ctx.scale = scale\n        return y",
                    "        y, = ctx.saved_tensors\n        s = y / (ctx.scale + 1e-12)\n"
                    "        return grad_output * ctx.scale * s * (1 - s), None"), named=True),
    # a threshold below every scale the self-check once tried (1e-12): only a scale near the
    # smallest normal float64 shows it
    # a fresh review (score 8, W11): keeps y, scale == 0 written out, but multiplies by
    # 1 / scale, which is inf at a subnormal scale (1e-310): nan and -inf there
    Mistake("ScaledSigmoid", "keeps y, backward y * (1 - y * (1 / scale)): 1 / scale is inf at 1e-310",
            "1 / scale is inf below |scale| of about 5.6e-309, so a backward that forms it",
            _scaled("        y = scale * torch.sigmoid(x)\n        ctx.save_for_backward(y)\n"
                    "        ctx.scale = scale\n        return y",
                    "        y, = ctx.saved_tensors\n        if ctx.scale == 0:\n"
                    "            return torch.zeros_like(grad_output), None\n"
                    "        inv = 1.0 / ctx.scale\n"
                    "        return grad_output * y * (1 - y * inv), None")),
    Mistake("ScaledSigmoid", "zeros wherever abs(scale) < 1e-300",
            "all zeros, as at scale = 0; only scale == 0 exactly has a zero gradient, and a test "
            "such as abs(scale) < tol",
            _scaled("        y = scale * torch.sigmoid(x)\n        ctx.save_for_backward(y)\n"
                    "        ctx.scale = scale\n        return y",
                    "        y, = ctx.saved_tensors\n"
                    "        if abs(ctx.scale) < 1e-300:\n"
                    "            return torch.zeros_like(grad_output), None\n"
                    "        return grad_output * y * (1 - y / ctx.scale), None")),
    Mistake("ScaledSigmoid", "one gradient for two inputs", "backward returned 1 gradient for "
            "2 inputs: scale gets no gradient",
            _scaled(SCALED_FORWARD, SCALED_READ + "        return grad_output * ctx.scale * s * "
                    "(1 - s)"), named=True),
    Mistake("ScaledSigmoid", "scale kept on the class", "ScaledSigmoid.forward sets "
            "ScaledSigmoid.scale: a class attribute is shared by every call",
            _scaled("        ctx.save_for_backward(x)\n        ScaledSigmoid.scale = scale\n"
                    "        return scale * torch.sigmoid(x)",
                    SCALED_READ + "        return grad_output * ScaledSigmoid.scale * s * (1 - s), "
                    "None"), named=True),
    Mistake("ScaledSigmoid", "|scale| in backward", "your gradient for x is the expected one times -1",
            _scaled(SCALED_FORWARD, SCALED_READ + "        return grad_output * abs(ctx.scale) * s * "
                    "(1 - s), None")),
    Mistake("ScaledSigmoid", "y * (1 - y) of its output y = scale * sigmoid(x)",
            "ScaledSigmoid's grad_x at scale = 2.5 is MySigmoid's derivative in y (times scale "
            "or not) applied to the output", _scaled("        y = scale * torch.sigmoid(x)\n"
                              "        ctx.save_for_backward(y)\n        return y",
                              "        y, = ctx.saved_tensors\n"
                              "        return grad_output * y * (1 - y), None")),
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
            "grad_x agrees with the truth to five digits or more but is far outside float64's precision",
            _scaled("        ctx.save_for_backward(x)\n        ctx.scale = scale\n"
                    "        return scale * torch.sigmoid(x)",
                    "        x, = ctx.saved_tensors\n        s = torch.sigmoid(x.float())\n"
                    "        return grad_output * ctx.scale * s * (1 - s), None")),
    Mistake("ScaledSigmoid", "scale kept on the class beside a saved stable sigmoid",
            "ScaledSigmoid.forward sets ScaledSigmoid.scale: a class attribute is shared by every "
            "call", SCALE_ON_THE_CLASS),
    Mistake("ScaledSigmoid", "scale kept in a module global",
            "ScaledSigmoid's backward used another call's scale: with two calls in one graph",
            SCALE_IN_A_GLOBAL),
]

# found by reviewers: log-space forms, and a gradient too many

UNUSUAL += [
    Unusual("ScaledSigmoid", "saves x; sigma'(x) as exp(logsigmoid(x) + logsigmoid(-x))",
            """
class ScaledSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return scale * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        d = torch.exp(torch.nn.functional.logsigmoid(x) + torch.nn.functional.logsigmoid(-x))
        return grad_output * (d * ctx.scale), None
"""),
    Unusual("ScaledSigmoid", "log space: sign(scale) * exp(log|scale| + logsigmoid(x)), scale 0 "
                             "apart",
            """import math
import torch.nn.functional as F

class ScaledSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        if scale == 0:
            return torch.zeros_like(x) * scale
        return math.copysign(1.0, scale) * torch.exp(math.log(abs(scale)) + F.logsigmoid(x))

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        if ctx.scale == 0:
            return grad_output * 0.0 * x, None
        slope = torch.exp(math.log(abs(ctx.scale)) + F.logsigmoid(x) + F.logsigmoid(-x))
        return grad_output * math.copysign(1.0, ctx.scale) * slope, None
"""),
]

MISTAKES += [
    Mistake("ScaledSigmoid", "log space, scale 0 apart with grad_output * 0.0 / x: nan at x = 0",
            "where x = 0 (nan)",
            """import math
import torch.nn.functional as F

class ScaledSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        if scale == 0:
            return torch.zeros_like(x) * scale
        return math.copysign(1.0, scale) * torch.exp(math.log(abs(scale)) + F.logsigmoid(x))

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        if ctx.scale == 0:
            return grad_output * 0.0 / x, None
        slope = torch.exp(math.log(abs(ctx.scale)) + F.logsigmoid(x) + F.logsigmoid(-x))
        return grad_output * math.copysign(1.0, ctx.scale) * slope, None
"""),
    Mistake("ScaledSigmoid", "backward tests y.abs().max() == 0: raises on an empty x",
            "raised RuntimeError with x of shape (0,)",
            """
class ScaledSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        y = scale * torch.sigmoid(x)
        ctx.save_for_backward(y)
        ctx.scale = scale
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        if y.abs().max() == 0:
            return torch.zeros_like(grad_output), None
        return grad_output * y * (1 - y / ctx.scale), None
"""),
    Mistake("ScaledSigmoid", "three gradients for two inputs, the last None",
            "ScaledSigmoid.backward returned 3 gradients for 2 inputs",
            """
class ScaledSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return scale * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_output * ctx.scale * s * (1 - s), None, None
"""),
]

# a fresh review (score 8): the Jacobian passed every check before rule 3 was graded
# generically; the float32 scale was caught, at scale 4.45e-308, with no cause named
MISTAKES += [
    Mistake("ScaledSigmoid", "backward through the Jacobian built as a diagonal matrix",
            'a Jacobian built as a matrix? (Function contract, rule 3',
            _scaled(SCALED_FORWARD, "        x, = ctx.saved_tensors\n"
                    "        s = torch.sigmoid(x).reshape(-1)\n"
                    "        J = torch.diag(ctx.scale * s * (1 - s))\n"
                    "        return (J @ grad_output.reshape(-1)).reshape(grad_output.shape), None")),
    Mistake("ScaledSigmoid", "y and the scale saved, the scale as a float32 tensor",
            "scale went through float32",
            _scaled("        y = scale * torch.sigmoid(x)\n"
                    "        ctx.save_for_backward(y, torch.tensor(scale, dtype=torch.float32))\n"
                    "        return y",
                    "        y, s = ctx.saved_tensors\n"
                    "        if s.item() == 0:\n"
                    "            return torch.zeros_like(grad_output), None\n"
                    "        return grad_output * y * (1 - y / s), None")),
]

# a fresh review (score 8): keeps y, and at scale 0 returns torch.zeros(shape), the default
# dtype (float32) for a float64 x; autograd casts it back without a word, and rule 2's dtype
# check ran at the domain's scale 2.5 only, never on this path
MISTAKES += [
    Mistake("ScaledSigmoid", "keeps y, torch.zeros(shape) at scale 0: the default dtype",
            "backward returned grad_x in float32 for a float64 x",
            """
class ScaledSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        y = scale * torch.sigmoid(x)
        ctx.save_for_backward(y)
        ctx.scale = scale
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        if ctx.scale == 0:
            return torch.zeros(grad_output.shape), None
        return grad_output * y * (1 - y / ctx.scale), None
"""),
    # its sibling with the dtype right: torch.zeros without device= at scale 0 only, a tensor
    # on the default device (rule 1's default-device check now runs at scale 0 too)
    Mistake("ScaledSigmoid", "keeps y, torch.zeros(shape, dtype=) at scale 0: the default device",
            "ScaledSigmoid made a tensor on the default device (torch.zeros without device=)",
            """
class ScaledSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        y = scale * torch.sigmoid(x)
        ctx.save_for_backward(y)
        ctx.scale = scale
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        if ctx.scale == 0:
            return torch.zeros(grad_output.shape, dtype=grad_output.dtype), None
        return grad_output * y * (1 - y / ctx.scale), None
"""),
]
