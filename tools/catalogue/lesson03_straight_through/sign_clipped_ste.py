"""Lesson 03: answers with known verdicts for SignClippedSTE, among them the binarised-network
form public code writes."""

from .. import Mistake, Unusual
from .answers import READ_X, _clipped

UNUSUAL = [
    Unusual("SignClippedSTE", "torch.where backward",
            _clipped(READ_X + "        return torch.where(x.abs() <= 1, grad_output, 0.0)")),
    Unusual("SignClippedSTE", "saves the boolean mask instead of x",
            _clipped("        inside, = ctx.saved_tensors\n        return grad_output * inside",
                     "        ctx.save_for_backward(x.abs() <= 1)\n        return torch.sign(x)")),
    Unusual("SignClippedSTE", "masked_fill on the outside, two comparisons",
            _clipped(READ_X + "        return grad_output.masked_fill((x < -1) | (x > 1), 0)")),
    Unusual("SignClippedSTE", "the hardtanh-with-boundary form: grad_output * (x >= -1) * (x <= 1)",
            _clipped(READ_X + "        return grad_output * (x >= -1) * (x <= 1)")),
    Unusual("SignClippedSTE", "saves the mask as float32, whatever x's dtype",
            _clipped("        inside, = ctx.saved_tensors\n        return grad_output * inside",
                     "        ctx.save_for_backward((x.abs() <= 1).float())\n"
                     "        return torch.sign(x)")),
    Unusual("SignClippedSTE", "the window as x * x <= 1",
            _clipped(READ_X + "        return grad_output * (x * x <= 1)")),
    Unusual("SignClippedSTE", "the window as clamp(x, -1, 1) == x",
            _clipped(READ_X + "        return grad_output * (torch.clamp(x, -1, 1) == x)")),
    Unusual("SignClippedSTE", "the binarised-network form common in public code: clone "
            "grad_output, then zero the clone where |x| > 1",
            """
class SignClippedSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return torch.sign(input)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input.abs() > 1] = 0
        return grad_input
"""),
]

MISTAKES = [
    # a float64 mask may be saved, but grad_output * mask is then float64 for a float32 x:
    # rule 2 (each gradient in its input's dtype)
    Mistake("SignClippedSTE", "saves the mask as float64 and returns the float64 product",
            "returned grad_x in float64",
            _clipped("        inside, = ctx.saved_tensors\n        return grad_output * inside",
                     "        ctx.save_for_backward((x.abs() <= 1).double())\n"
                     "        return torch.sign(x)")),
    Mistake("SignClippedSTE", "copysign(1, x) with 0 kept: ±1 at NaN",
            "SignClippedSTE.apply(nan) gives 1 but sign(nan) = 0",
            _clipped(READ_X + "        return grad_output * (x.abs() <= 1)",
                     "        ctx.save_for_backward(x)\n"
                     "        return torch.where(x == 0, torch.zeros_like(x), "
                     "torch.copysign(torch.ones_like(x), x))")),
    # the window's tolerance below any earlier test point: the float next to 1 shows it
    Mistake("SignClippedSTE", "a tolerance of 1e-12 on the window",
            "SignClippedSTE's window is judged with a tolerance: at x = 1.0000000000000002",
            _clipped(READ_X + "        return grad_output * (x.abs() <= 1 + 1e-12)")),
    Mistake("SignClippedSTE", "saves x.clone()", "forward saved a copy of x",
            _clipped(READ_X + "        return grad_output * (x.abs() <= 1)",
                     "        ctx.save_for_backward(x.clone())\n        return torch.sign(x)")),
    Mistake("SignClippedSTE", "saves x.contiguous(): a copy of a transposed x",
            "forward saved a contiguous copy of x",
            _clipped(READ_X + "        return grad_output * (x.abs() <= 1)",
                     "        ctx.save_for_backward(x.contiguous())\n        return torch.sign(x)")),
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
    Mistake("SignClippedSTE", "gradient returned in float32", "SignClippedSTE's gradient is "
            "grad_output rounded to float32",
            _clipped("        inside, = ctx.saved_tensors\n"
                     "        return grad_output.float() * inside",
                     "        ctx.save_for_backward((x.abs() <= 1).float())\n"
                     "        return torch.sign(x)")),
    Mistake("SignClippedSTE", "x kept on ctx", "SignClippedSTE stores a tensor as ctx.x",
            _clipped("        return grad_output * (ctx.x.abs() <= 1)",
                     "        ctx.x = x\n        return torch.sign(x)")),
    Mistake("SignClippedSTE", "mask on a float32 copy of x", "SignClippedSTE's clip mask is "
            "built on x rounded to float32 (at x = -1.000000001", _clipped(READ_X + "        return grad_output * "
                                         "(x.float().abs() <= 1)")),
    Mistake("SignClippedSTE", "saves x as bfloat16, the mask read from it",
            "SignClippedSTE saved x as a bfloat16 copy for float64 inputs, and its clip mask, "
            "read from that copy, is wrong (at x = 1.001",
            _clipped(READ_X + "        return grad_output * (x.abs() <= 1)",
                     "        ctx.save_for_backward(x.to(torch.bfloat16))  # to save memory\n"
                     "        return torch.sign(x)")),
    Mistake("SignClippedSTE", "a tolerance on the window, |x| <= 1 + 1e-6", "SignClippedSTE's "
            "window is judged with a tolerance",  # not told float32: 1 + 1e-7 tells them apart
            _clipped(READ_X + "        return grad_output * (x.abs() <= 1 + 1e-6)")),
    Mistake("SignClippedSTE", "boundary kept at -1 only", "your gradient for x is wrong: at x = 1 ",
            _clipped(READ_X + "        return grad_output * ((x >= -1) & (x < 1))")),
    Mistake("SignClippedSTE", "where(x == 0, x, x / x.abs()): nan at ±inf",
            "SignClippedSTE.apply(inf) gives nan but sign(inf) = 1",
            _clipped("        x, = ctx.saved_tensors\n"
                     "        return grad_output * (x.abs() <= 1)",
                     "        ctx.save_for_backward(x)\n"
                     "        return torch.where(x == 0, x, x / x.abs())")),
]
