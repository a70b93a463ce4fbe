"""Lesson 03 (straight-through estimators): SignSTE, SignClippedSTE and RoundSTE, answered
unusually and wrongly."""

from tools.catalogue import Mistake, Unusual


def _ste(name: str, forward: str, backward: str) -> str:
    return f"""
class {name}(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
{forward}

    @staticmethod
    def backward(ctx, grad_output):
{backward}
"""


def _sign(forward: str, backward: str = "        return grad_output") -> str:
    return _ste("SignSTE", forward, backward)


def _clipped(backward: str, forward: str = "        ctx.save_for_backward(x)\n"
             "        return torch.sign(x)") -> str:
    return _ste("SignClippedSTE", forward, backward)


def _round(forward: str, backward: str = "        return grad_output") -> str:
    return _ste("RoundSTE", forward, backward)


SIGN = "        return torch.sign(x)"
READ_X = "        x, = ctx.saved_tensors\n"

UNUSUAL = [
    Unusual("SignSTE", "x.sgn() and a cloned grad_output",
            _sign("        return x.sgn()", "        return grad_output.clone()")),
    Unusual("SignSTE", "nested torch.where, sign(0) = 0 kept",
            _sign("        return torch.where(x > 0, 1.0, torch.where(x < 0, -1.0, 0.0))"
                  ".to(x.dtype)", "        return grad_output * 1")),
    Unusual("SignSTE", "(x > 0) - (x < 0) as a float",
            _sign("        return ((x > 0).to(x.dtype) - (x < 0).to(x.dtype))",
                  "        return grad_output if ctx.needs_input_grad[0] else None")),
    Unusual("SignClippedSTE", "torch.where backward",
            _clipped(READ_X + "        return torch.where(x.abs() <= 1, grad_output, 0.0)")),
    Unusual("SignClippedSTE", "saves the boolean mask instead of x",
            _clipped("        inside, = ctx.saved_tensors\n        return grad_output * inside",
                     "        ctx.save_for_backward(x.abs() <= 1)\n        return torch.sign(x)")),
    Unusual("SignClippedSTE", "masked_fill on the outside, two comparisons",
            _clipped(READ_X + "        return grad_output.masked_fill((x < -1) | (x > 1), 0)")),
    Unusual("SignClippedSTE", "the hardtanh-with-boundary form: grad_output * (x >= -1) * (x <= 1)",
            _clipped(READ_X + "        return grad_output * (x >= -1) * (x <= 1)")),
    Unusual("RoundSTE", "x.round() and a cloned grad_output",
            _round("        return x.round()", "        return grad_output.clone()")),
    Unusual("RoundSTE", "torch.round(x, decimals=0)",
            _round("        return torch.round(x, decimals=0)", "        return 1.0 * grad_output")),
    Unusual("RoundSTE", "needs_input_grad checked",
            _round("        return torch.round(x)",
                   "        return grad_output if ctx.needs_input_grad[0] else None")),
]

MISTAKES = [
    Mistake("SignSTE", "zero gradient (the true derivative)", "SignSTE's gradient is zero "
            "everywhere: that is the true derivative of sign",
            _sign(SIGN, "        return torch.zeros_like(grad_output)"), named=True, nbgrader=True),
    Mistake("SignSTE", "ones instead of grad_output", "SignSTE's backward ignores grad_output",
            _sign(SIGN, "        return torch.ones_like(grad_output)"), named=True),
    Mistake("SignSTE", "clips: the other exercise's estimator", "SignSTE zeroes the gradient "
            "where |x| > 1",
            _sign("        ctx.save_for_backward(x)\n" + SIGN,
                  READ_X + "        return grad_output * (x.abs() <= 1)")),
    Mistake("SignSTE", "where(x >= 0, 1, -1) sends 0 to 1", "SignSTE.apply(0) gives 1 but "
            "sign(0) = 0", _sign("        return torch.where(x >= 0, 1.0, -1.0).to(x.dtype)"),
            named=True),
    Mistake("SignSTE", "tanh(100 x) in forward", "SignSTE's output is not all -1, 0 or 1",
            _sign("        return torch.tanh(100 * x)"), named=True),
    Mistake("SignSTE", "detach trick inside forward", "SignSTE's output is sign(x) only up to "
            "rounding",
            _sign("        y_soft = x\n        y_hard = torch.sign(x)\n"
                  "        return y_hard - y_soft.detach() + y_soft"), named=True),
    Mistake("SignSTE", "integer output", "SignSTE's output has dtype torch.int64",
            _sign("        return torch.sign(x).long()")),
    Mistake("SignSTE", "x kept on ctx", "SignSTE stores a tensor as ctx.x",
            _sign("        ctx.x = x\n" + SIGN)),
    Mistake("SignClippedSTE", "forgets the clip", "SignClippedSTE's gradient is not clipped",
            _clipped("        return grad_output"), nbgrader=True),
    Mistake("SignClippedSTE", "clip with |x| < 1", "SignClippedSTE drops the gradient at "
            "|x| == 1", _clipped(READ_X + "        return grad_output * (x.abs() < 1)"),
            named=True),
    Mistake("SignClippedSTE", "inverted clip", "SignClippedSTE's clip mask is inverted",
            _clipped(READ_X + "        return grad_output * (x.abs() > 1)")),
    Mistake("SignClippedSTE", "clamps grad_output", "SignClippedSTE clips grad_output instead of "
            "masking by the input", _clipped("        return grad_output.clamp(-1, 1)"),
            named=True),
    Mistake("SignClippedSTE", "mask from the saved output", "SignClippedSTE builds its clip mask "
            "from the output sign(x)",
            _clipped("        y, = ctx.saved_tensors\n        return grad_output * (y.abs() <= 1)",
                     "        y = torch.sign(x)\n        ctx.save_for_backward(y)\n"
                     "        return y"), named=True),
    Mistake("SignClippedSTE", "writes into grad_output", "backward modified grad_output in place",
            _clipped(READ_X + "        grad_output[x.abs() > 1] = 0\n        return grad_output"),
            named=True),
    Mistake("SignClippedSTE", "x kept on ctx", "SignClippedSTE stores a tensor as ctx.x",
            _clipped("        return grad_output * (ctx.x.abs() <= 1)",
                     "        ctx.x = x\n        return torch.sign(x)")),
    Mistake("RoundSTE", "floor", "RoundSTE's forward is floor(x), not round(x)",
            _round("        return torch.floor(x)"), nbgrader=True),
    Mistake("RoundSTE", "x.long() truncates", "RoundSTE's forward is trunc(x)",
            _round("        return x.long().to(x.dtype)"), named=True),
    Mistake("RoundSTE", "floor(x + 0.5) rounds halves up", "RoundSTE does not round halves to "
            "even", _round("        return torch.floor(x + 0.5)"), named=True),
    Mistake("RoundSTE", "no rounding", "RoundSTE's forward returns x unchanged",
            _round("        return x.clone()")),
    Mistake("RoundSTE", "smooth look-alike", "RoundSTE's output is not all integers",
            _round("        return x - torch.sin(2 * torch.pi * x) / (2 * torch.pi)"),
            named=True),
    Mistake("RoundSTE", "zero gradient", "RoundSTE's gradient is zero everywhere",
            _round("        return torch.round(x)", "        return grad_output * 0"),
            named=True),
    Mistake("RoundSTE", "wrong sign", "your gradient for x is the numerical one times -1",
            _round("        return torch.round(x)", "        return -grad_output")),
]
