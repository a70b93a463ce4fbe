"""Lesson 01 (sigmoid): MySigmoid, MyReLU and ScaledSigmoid, answered unusually and wrongly
(Softplus, the transfer exercise: lesson01_transfer.py)."""

from tools.catalogue import Mistake, Unusual


def _function(name: str, forward: str, backward: str, args: str = "x") -> str:
    return f"""
class {name}(torch.autograd.Function):
    @staticmethod
    def forward(ctx, {args}):
{forward}

    @staticmethod
    def backward(ctx, grad_output):
{backward}
"""


def _sigmoid(forward: str, backward: str) -> str:
    return _function("MySigmoid", forward, backward)


def _relu(forward: str, backward: str) -> str:
    return _function("MyReLU", forward, backward)


def _scaled(forward: str, backward: str) -> str:
    return _function("ScaledSigmoid", forward, backward, "x, scale")


STABLE = ("        z = torch.exp(-x.abs())\n"
          "        y = torch.where(x >= 0, 1 / (1 + z), z / (1 + z))\n")
SAVE_Y = "        ctx.save_for_backward(y)\n        return y"
FROM_Y = "        y, = ctx.saved_tensors\n        return grad_output * y * (1 - y)"
RELU_FORWARD = "        ctx.save_for_backward(x)\n        return x.clamp(min=0)"
RELU_READ = "        x, = ctx.saved_tensors\n"
SCALED_FORWARD = ("        ctx.save_for_backward(x)\n        ctx.scale = scale\n"
                  "        return scale * torch.sigmoid(x)")
SCALED_READ = "        x, = ctx.saved_tensors\n        s = torch.sigmoid(x)\n"

UNUSUAL = [
    # (The tanh form (1 + tanh(x / 2)) / 2 is not here: it gives 0 for sigma(-40) = 4.2e-18.)
    Unusual("MySigmoid", "1 / (1 + exp(-x)) inside a Function: 1 / inf = 0, never nan",
            _sigmoid("        y = torch.reciprocal(1 + torch.exp(-x))\n"
                     "        ctx.save_for_backward(y)\n        return y", FROM_Y)),
    Unusual("MySigmoid", "exp(x - softplus(x)), a log-space form",
            _sigmoid("        y = torch.exp(-F.softplus(-x))\n" + SAVE_Y, FROM_Y)),
    Unusual("MySigmoid", "torch.where on the sign with expm1-free branches, y - y * y backward",
            _sigmoid("        e = torch.exp(torch.where(x >= 0, -x, x))\n"
                     "        y = torch.where(x >= 0, 1 / (1 + e), e / (1 + e))\n" + SAVE_Y,
                     "        y, = ctx.saved_tensors\n        return grad_output * (y - y * y)")),
    Unusual("MySigmoid", "needs_input_grad checked, addcmul backward",
            _sigmoid(STABLE + SAVE_Y,
                     "        if not ctx.needs_input_grad[0]:\n            return None\n"
                     "        y, = ctx.saved_tensors\n"
                     "        return torch.addcmul(torch.zeros_like(y), grad_output, y * (1 - y))")),
    Unusual("MyReLU", "saves the output, masks with y > 0",
            _relu("        y = x.clamp(min=0)\n        ctx.save_for_backward(y)\n        return y",
                  "        y, = ctx.saved_tensors\n        return grad_output * (y > 0)")),
    Unusual("MyReLU", "saves a boolean mask, torch.where backward",
            _relu("        mask = x > 0\n        ctx.save_for_backward(mask)\n"
                  "        return torch.where(mask, x, torch.zeros_like(x))",
                  "        mask, = ctx.saved_tensors\n"
                  "        return torch.where(mask, grad_output, torch.zeros_like(grad_output))")),
    Unusual("MyReLU", "masked_fill on a fresh tensor, F.relu forward",
            _relu("        ctx.save_for_backward(x)\n        return F.relu(x)",
                  RELU_READ + "        return grad_output.masked_fill(x <= 0, 0)")),
    Unusual("MyReLU", "writes into grad_output.clone()",
            _relu(RELU_FORWARD, RELU_READ + "        grad = grad_output.clone()\n"
                  "        grad[x <= 0] = 0\n        return grad")),
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
    # ATen's sigmoid backward kernel computes grad_output * (1 - y) * y from the saved result
    Unusual("MySigmoid", "torch.sigmoid forward, ATen's sigmoid_backward formula by hand",
            _sigmoid("        y = torch.sigmoid(x)\n" + SAVE_Y,
                     "        y, = ctx.saved_tensors\n        return grad_output * (1 - y) * y")),
    Unusual("ScaledSigmoid", "saves only its output, zeros at scale == 0",
            _scaled("        y = scale * torch.sigmoid(x)\n        ctx.save_for_backward(y)\n"
                    "        ctx.scale = scale\n        return y",
                    "        y, = ctx.saved_tensors\n"
                    "        if ctx.scale == 0:\n"
                    "            return torch.zeros_like(grad_output), None\n"
                    "        return grad_output * y * (1 - y / ctx.scale), None")),
    Unusual("MySigmoid", "torch.where over both textbook formulas (inf and nan in the branch not taken)",
            _sigmoid("        y = torch.where(x >= 0, 1 / (1 + torch.exp(-x)),\n"
                     "                        torch.exp(x) / (1 + torch.exp(x)))\n" + SAVE_Y, FROM_Y)),
    Unusual("MySigmoid", "exp(-log1p(exp(-x))): infinite intermediates, exact results",
            _sigmoid("        y = torch.exp(-torch.log1p(torch.exp(-x)))\n" + SAVE_Y, FROM_Y)),
    # (x + |x|) / 2 is nan at x = -inf (-inf + inf): passes, as the heaviside entry below.
    Unusual("MyReLU", "(x + |x|) / 2 forward, sign(y) backward",
            _relu("        y = (x + x.abs()) / 2\n        ctx.save_for_backward(y)\n        return y",
                  "        y, = ctx.saved_tensors\n        return grad_output * torch.sign(y)")),
    # x * mask gives nan at x = -inf (-inf * 0), where torch.relu gives 0: the contract names
    # no infinities, so it passes; the lesson's mistakes table warns of it instead.
    Unusual("MyReLU", "a uint8 mask from torch.heaviside",
            _relu("        mask = torch.heaviside(x, torch.zeros((), dtype=x.dtype)).to(torch.uint8)\n"
                  "        ctx.save_for_backward(mask)\n        return x * mask",
                  "        mask, = ctx.saved_tensors\n        return grad_output * mask")),
    Unusual("ScaledSigmoid", "sigma(x) * sigma(-x) for sigma * (1 - sigma)",
            _scaled(SCALED_FORWARD, "        x, = ctx.saved_tensors\n"
                    "        return grad_output * ctx.scale * torch.sigmoid(x) * torch.sigmoid(-x), None")),
    Unusual("ScaledSigmoid", "saves only its output, divides by (scale or 1)",
            _scaled("        y = scale * torch.sigmoid(x)\n        ctx.save_for_backward(y)\n"
                    "        ctx.scale = scale\n        return y",
                    "        y, = ctx.saved_tensors\n        s = y / (ctx.scale or 1.0)  # y is 0 at scale 0\n"
                    "        return grad_output * ctx.scale * s * (1 - s), None")),
    # a view of the Function's own intermediate as its output: autograd forbids writing into
    # it, which protects the saved output as the version counter would
    Unusual("MySigmoid", "flattened, then reshaped back: the output is a view",
            _sigmoid("        flat = x.reshape(-1)\n        z = torch.exp(-flat.abs())\n"
                     "        y = torch.where(flat >= 0, 1 / (1 + z), z / (1 + z)).reshape(x.shape)\n"
                     + SAVE_Y, FROM_Y)),
    Unusual("MySigmoid", "saves the flat y, returns it reshaped: the output is a view of it",
            _sigmoid("        flat = x.reshape(-1)\n        z = torch.exp(-flat.abs())\n"
                     "        y = torch.where(flat >= 0, 1 / (1 + z), z / (1 + z))\n"
                     "        ctx.save_for_backward(y)\n        return y.reshape(x.shape)",
                     "        y, = ctx.saved_tensors\n"
                     "        return grad_output * (y * (1 - y)).reshape(grad_output.shape)")),
    Unusual("MySigmoid", "softmax over stack([x, 0]), a view into the stack",
            _sigmoid("        y = torch.softmax(torch.stack([x, torch.zeros_like(x)]), 0)[0]\n" + SAVE_Y,
                     FROM_Y)),
    Unusual("MySigmoid", "1 - z / (1 + z) on the right, backward exp(log y + log1p(-y))",
            _sigmoid("        z = torch.exp(-x.abs())\n"
                     "        y = torch.where(x >= 0, 1 - z / (1 + z), z / (1 + z))\n" + SAVE_Y,
                     "        y, = ctx.saved_tensors\n"
                     "        return grad_output * torch.exp(torch.log(y) + torch.log1p(-y))")),
    Unusual("MyReLU", "F.threshold forward, torch.where(y != 0) backward",
            _relu("        y = F.threshold(x, 0.0, 0.0)\n        ctx.save_for_backward(y)\n        return y",
                  "        y, = ctx.saved_tensors\n        return torch.where(y != 0, grad_output, 0.0)")),
    # a trailing None past the inputs: PyTorch accepts extra gradients when they are all None
    Unusual("MyReLU", "a bool mask, backward returns (gradient, None) as Select's pattern",
            _relu("        mask = x > 0\n        ctx.save_for_backward(mask)\n        return x.clamp(min=0)",
                  "        mask, = ctx.saved_tensors\n        return grad_output * mask, None")),
    Unusual("MySigmoid", "backward 1 / (1 / y + 1 / (1 - y)), a harmonic form of y (1 - y)",
            _sigmoid(STABLE + SAVE_Y, "        y, = ctx.saved_tensors\n"
                     "        return grad_output / (1 / y + 1 / (1 - y))")),
    Unusual("ScaledSigmoid", "scale saved as a 0-d tensor beside x",
            _scaled("        ctx.save_for_backward(x, torch.tensor(scale, dtype=x.dtype))\n"
                    "        return scale * torch.sigmoid(x)",
                    "        x, scale = ctx.saved_tensors\n        s = torch.sigmoid(x)\n"
                    "        return grad_output * scale * s * (1 - s), None")),
]

MISTAKES = [
    # asinh's odd-symmetry trick carried over: sigma(x) = 1/2 + copysign(tanh(|x| / 2) / 2, x)
    Mistake("MySigmoid", "1/2 + copysign(h, x), the worked example's odd trick",
            "as does any 1/2 plus a term that rounds to -1/2",
            _sigmoid("        z = torch.exp(-x.abs())\n        h = (1 - z) / (2 * (1 + z))\n"
                     "        y = 0.5 + torch.copysign(h, x)\n" + SAVE_Y, FROM_Y)),
    Mistake("MySigmoid", "saves the input x", "MySigmoid saved its input x: save the output y "
            "instead",
            _sigmoid("        ctx.save_for_backward(x)\n        return torch.sigmoid(x)",
                     "        x, = ctx.saved_tensors\n        y = torch.sigmoid(x)\n"
                     "        return grad_output * y * (1 - y)"), named=True, nbgrader=True),
    Mistake("MySigmoid", "exp(x) / (1 + exp(x))", "MySigmoid returns inf or nan for large |x|: "
            "exp(x) overflows for x > 709; use exp(-|x|)",
            _sigmoid("        e = torch.exp(x)\n        y = e / (1 + e)\n" + SAVE_Y, FROM_Y),
            named=True),
    Mistake("MySigmoid", "0 in the left tail (1 - 1 / (1 + z))", "MySigmoid loses the left tail",
            _sigmoid("        z = torch.exp(-x.abs())\n"
                     "        y = torch.where(x >= 0, 1 / (1 + z), 1 - 1 / (1 + z))\n" + SAVE_Y,
                     FROM_Y)),
    Mistake("MySigmoid", "output kept as ctx.y", "MySigmoid stores a tensor as ctx.y: use "
            "ctx.save_for_backward",
            _sigmoid(STABLE + "        ctx.y = y\n        return y",
                     "        return grad_output * ctx.y * (1 - ctx.y)"), named=True),
    Mistake("MySigmoid", "output hidden in a list on ctx",
            "MySigmoid stores a tensor as ctx.cache['saved'][0]",
            _sigmoid(STABLE + "        ctx.cache = {'saved': [y]}\n        return y",
                     "        y = ctx.cache['saved'][0]\n        return grad_output * y * (1 - y)")),
    Mistake("MySigmoid", "asks autograd inside backward", "MySigmoid.backward calls "
            "torch.autograd.grad: write the gradient formula by hand",
            _sigmoid(STABLE + SAVE_Y,
                     "        y, = ctx.saved_tensors\n        with torch.enable_grad():\n"
                     "            x = torch.logit(y).detach().requires_grad_()\n"
                     "            grad_x, = torch.autograd.grad(torch.sigmoid(x), x, grad_output)\n"
                     "        return grad_x")),
    Mistake("MySigmoid", "built-in sigmoid_backward", "MySigmoid.backward uses the built-in op "
            "sigmoid_backward: write the gradient formula by hand",
            _sigmoid(STABLE + SAVE_Y, "        y, = ctx.saved_tensors\n"
                     "        return torch.ops.aten.sigmoid_backward(grad_output, y)"),
            named=True),
    Mistake("MyReLU", "masks grad_output in place", "backward modified grad_output in place: "
            "compute a new tensor instead",
            _relu(RELU_FORWARD, RELU_READ + "        grad_output[x < 0] = 0\n"
                  "        return grad_output"), named=True, nbgrader=True),
    Mistake("MyReLU", "x.clamp_ in forward", "MyReLU.forward modified its input x in place: "
            "inputs must stay untouched",
            _relu("        mask = x > 0\n        ctx.save_for_backward(mask)\n"
                  "        return x.clamp_(min=0).clone()",
                  "        mask, = ctx.saved_tensors\n        return grad_output * mask"),
            named=True),
    Mistake("MyReLU", "returns x.clamp_ (the input, overwritten)",
            "MyReLU.forward modified its input x in place: inputs must stay untouched",
            _relu("        ctx.save_for_backward(x)\n        return x.clamp_(min=0)",
                  RELU_READ + "        return grad_output * (x > 0)")),
    Mistake("MyReLU", "overwrites the saved input in backward",
            "MyReLU.backward modified its input x in place: inputs must stay untouched",
            _relu(RELU_FORWARD, RELU_READ + "        return grad_output * x.clamp_(min=0)."
                  "sign_()")),
    Mistake("MyReLU", "mask kept as ctx.mask", "MyReLU stores a tensor as ctx.mask: use "
            "ctx.save_for_backward",
            _relu("        ctx.mask = x > 0\n        return x.clamp(min=0)",
                  "        return grad_output * ctx.mask"), named=True),
    Mistake("MyReLU", "mask x >= 0", "MyReLU's gradient at x = 0 is 1.0, where the contract "
            "(and torch.relu) gives 0: the mask is x > 0, not x >= 0",
            _relu("        mask = x >= 0\n        ctx.save_for_backward(mask)\n"
                  "        return x.clamp(min=0)",
                  "        mask, = ctx.saved_tensors\n        return grad_output * mask"),
            named=True),
    # PyTorch's "Learning PyTorch with Examples" tutorial: grad_input[input < 0] = 0, which
    # passes grad_output at x == 0, where torch.relu (and this contract) gives 0
    Mistake("MyReLU", "the PyTorch tutorial's MyReLU (input < 0 zeroed)",
            "MyReLU's gradient at x = 0 is 1.0",
            _relu(RELU_FORWARD, RELU_READ + "        grad_input = grad_output.clone()\n"
                  "        grad_input[x < 0] = 0\n        return grad_input")),
    Mistake("MyReLU", "leaky threshold x > -10", "your gradient for x is wrong: largest error",
            _relu(RELU_FORWARD, RELU_READ + "        return grad_output * (x > -10)")),
    Mistake("ScaledSigmoid", "a float gradient for scale", "backward returned a gradient for "
            "scale, which is not a tensor: return None for scale",
            _scaled(SCALED_FORWARD, SCALED_READ + "        return grad_output * ctx.scale * s * "
                    "(1 - s), 0.0")),
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
    Mistake("MySigmoid", "the stable formula, its values rounded through float32",
            "every value there is exactly a float32 number",
            _sigmoid(STABLE + "        y = y.float().to(x.dtype)\n" + SAVE_Y, FROM_Y)),
    Mistake("ScaledSigmoid", "sigma recovered as y / (scale + 1e-12), an epsilon",
            "it is also nan or inf at scale = -1e-12, and right at 2.5: backward divides by "
            "scale + 1e-12",
            _scaled("        y = scale * torch.sigmoid(x)\n        ctx.save_for_backward(y)\n"
                    "        ctx.scale = scale\n        return y",
                    "        y, = ctx.saved_tensors\n        s = y / (ctx.scale + 1e-12)\n"
                    "        return grad_output * ctx.scale * s * (1 - s), None"), named=True),
    Mistake("ScaledSigmoid", "zeros wherever abs(scale) < 1e-9", "all zeros, as at scale = 0",
            _scaled("        y = scale * torch.sigmoid(x)\n        ctx.save_for_backward(y)\n"
                    "        ctx.scale = scale\n        return y",
                    "        y, = ctx.saved_tensors\n"
                    "        if abs(ctx.scale) < 1e-9:\n"
                    "            return torch.zeros_like(grad_output), None\n"
                    "        return grad_output * y * (1 - y / ctx.scale), None")),
    Mistake("ScaledSigmoid", "one gradient for two inputs", "backward returned 1 gradient for "
            "2 inputs: return None for scale",
            _scaled(SCALED_FORWARD, SCALED_READ + "        return grad_output * ctx.scale * s * "
                    "(1 - s)"), named=True),
    Mistake("MySigmoid", "1 - e / (1 + e) with e = exp(-x): inf / inf on the left",
            "MySigmoid returns inf or nan for large |x|: exp(-x) overflows for x < -709",
            _sigmoid("        e = torch.exp(-x)\n        y = 1 - e / (1 + e)\n" + SAVE_Y, FROM_Y)),
    Mistake("MySigmoid", "backward through logit(y): inf / inf where y is 0",
            "MySigmoid's gradient is nan at x = -800.0, where your output is finite (0.0)",
            _sigmoid(STABLE + SAVE_Y, "        y, = ctx.saved_tensors\n"
                     "        e = torch.exp(-torch.logit(y))\n"
                     "        return grad_output * e / (1 + e) ** 2")),
    Mistake("MySigmoid", "(1 + tanh(x / 2)) / 2", "(1 + tanh(x / 2)) / 2 cancels to 0 there",
            _sigmoid("        y = (1 + torch.tanh(x / 2)) / 2\n" + SAVE_Y, FROM_Y), named=True),
    Mistake("MySigmoid", "1 - sigmoid(-x)", "(or 1 - sigmoid(-x), the same subtraction)",
            _sigmoid("        y = 1 - torch.sigmoid(-x)\n" + SAVE_Y, FROM_Y)),
    Mistake("MySigmoid", "sigmoid computed in float32", "your values are sigmoid computed in float32",
            _sigmoid("        y = torch.sigmoid(x.float()).to(x.dtype)\n" + SAVE_Y, FROM_Y)),
    Mistake("MySigmoid", "exp of x clamped to [-700, 700]",
            "MySigmoid loses the left tail: at x = -708.0 it gives 9.85967654375977e-305",
            _sigmoid("        e = torch.exp(x.clamp(-700, 700))\n        y = e / (1 + e)\n" + SAVE_Y,
                     FROM_Y)),
    Mistake("MyReLU", "gradient y / x (0 / 0 at x = 0)",
            "MyReLU's gradient at x = 0 is nan (at -0.0: nan), where the contract (and torch.relu) "
            "gives 0",
            _relu("        y = x.clamp(min=0)\n        ctx.save_for_backward(x, y)\n        return y",
                  "        x, y = ctx.saved_tensors\n        return grad_output * (y / x)")),
    Mistake("MyReLU", "mask kept on the class", "MyReLU.forward sets MyReLU.mask: a class "
            "attribute is shared by every call",
            _relu("        MyReLU.mask = x > 0\n        return x.clamp(min=0)",
                  "        return grad_output * MyReLU.mask"), named=True),
    Mistake("MyReLU", "mask with a threshold, x > 1e-6", "your gradient for x is wrong",
            _relu("        mask = x > 1e-6\n        ctx.save_for_backward(mask)\n"
                  "        return x.clamp(min=0)",
                  "        mask, = ctx.saved_tensors\n        return grad_output * mask")),
    Mistake("ScaledSigmoid", "scale kept on the class", "ScaledSigmoid.forward sets "
            "ScaledSigmoid.scale: a class attribute is shared by every call",
            _scaled("        ctx.save_for_backward(x)\n        ScaledSigmoid.scale = scale\n"
                    "        return scale * torch.sigmoid(x)",
                    SCALED_READ + "        return grad_output * ScaledSigmoid.scale * s * (1 - s), "
                    "None"), named=True),
    # the lesson's worked example: torch.maximum splits a tie, half to each input
    Mistake("MyReLU", "half the gradient at 0, torch.maximum's tie convention",
            "MyReLU's gradient at x = 0 is 0.5, where the contract (and torch.relu) gives 0",
            _relu(RELU_FORWARD, RELU_READ + "        return grad_output * ((x > 0) + 0.5 * (x == 0))"),
            named=True),
    Mistake("MyReLU", "masked_fill_ on grad_output", "backward modified grad_output in place",
            _relu("        mask = x > 0\n        ctx.save_for_backward(mask)\n        return x.clamp(min=0)",
                  "        mask, = ctx.saved_tensors\n        return grad_output.masked_fill_(~mask, 0)"),
            named=True),
    Mistake("MySigmoid", "ignores grad_output", "MySigmoid.backward ignores grad_output",
            _sigmoid(STABLE + SAVE_Y, "        y, = ctx.saved_tensors\n        return y * (1 - y)")),
    Mistake("ScaledSigmoid", "|scale| in backward", "your gradient for x is the expected one times -1",
            _scaled(SCALED_FORWARD, SCALED_READ + "        return grad_output * abs(ctx.scale) * s * "
                    "(1 - s), None")),
]
