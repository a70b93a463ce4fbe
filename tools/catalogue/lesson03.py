"""Lesson 03 (straight-through estimators): SignSTE, SignClippedSTE, RoundSTE and FakeQuantize,
answered unusually and wrongly."""

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
    Unusual("SignClippedSTE", "saves the mask as float32, whatever x's dtype",
            _clipped("        inside, = ctx.saved_tensors\n        return grad_output * inside",
                     "        ctx.save_for_backward((x.abs() <= 1).float())\n"
                     "        return torch.sign(x)")),
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
    Mistake("SignSTE", "x / x.abs(), nan at 0", "SignSTE.apply(0) gives nan but sign(0) = 0",
            _sign("        return x / x.abs()")),
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
    Mistake("SignClippedSTE", "gradient returned in float32", "SignClippedSTE's gradient is "
            "grad_output rounded to float32",
            _clipped("        inside, = ctx.saved_tensors\n"
                     "        return grad_output.float() * inside",
                     "        ctx.save_for_backward((x.abs() <= 1).float())\n"
                     "        return torch.sign(x)")),
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
    Mistake("RoundSTE", "gradient built in the default dtype", "RoundSTE's gradient is "
            "grad_output rounded to float32",
            _round("        return torch.round(x)",
                   "        grad = torch.zeros(grad_output.shape, device=grad_output.device)\n"
                   "        grad[:] = grad_output\n        return grad")),
    Mistake("RoundSTE", "wrong sign", "your gradient for x is the expected one times -1",
            _round("        return torch.round(x)", "        return -grad_output")),
]


def _fake_quantize(backward: str, forward: str = "        ctx.save_for_backward(x, scale)\n"
                   "        ctx.qmin, ctx.qmax = qmin, qmax\n"
                   "        return torch.clamp(torch.round(x / scale), qmin, qmax) * scale") -> str:
    return f"""
class FakeQuantize(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, qmin, qmax):
{forward}

    @staticmethod
    def backward(ctx, grad_output):
{backward}
"""


FQ_READ = ("        x, scale = ctx.saved_tensors\n        v = x / scale\n        r = torch.round(v)\n"
           "        inside = (v >= ctx.qmin) & (v <= ctx.qmax)\n"
           "        clipped = torch.where(v < ctx.qmin, float(ctx.qmin), float(ctx.qmax))\n")
FQ_GRAD_X = "grad_output * inside"


def _fq_scale(local: str, grad_x: str = FQ_GRAD_X) -> str:
    """A backward whose per-element d(output)/d(scale) is ``local``."""
    return _fake_quantize(FQ_READ + f"        return {grad_x}, (grad_output * ({local})).sum(), "
                          "None, None")


FQ_LSQ = "torch.where(inside, r - v, clipped)"

UNUSUAL += [
    Unusual("FakeQuantize", "inside judged on round(v), as PyTorch's learnable fake quantiser",
            _fake_quantize(
                "        x, scale = ctx.saved_tensors\n        v = x / scale\n"
                "        code = torch.round(v)\n"
                "        inside = (code >= ctx.qmin) & (code <= ctx.qmax)\n"
                "        local = torch.where(inside, code - v, torch.where(code < ctx.qmin, "
                "ctx.qmin, ctx.qmax).to(x.dtype))\n"
                "        return grad_output * inside, (grad_output * local).sum(), None, None")),
    Unusual("FakeQuantize", "saves the clamped codes; local gradient from (y - x) / scale",
            _fake_quantize(
                "        x, scale, codes = ctx.saved_tensors\n"
                "        below, above = codes == ctx.qmin, codes == ctx.qmax\n"
                "        v = x / scale\n"
                "        inside = (v >= ctx.qmin) & (v <= ctx.qmax)\n"
                "        local = torch.where(inside, (codes * scale - x) / scale, codes)\n"
                "        grad_x = torch.where(inside, grad_output, torch.zeros_like(grad_output))\n"
                "        return grad_x, torch.sum(grad_output * local), None, None",
                "        codes = torch.clamp(torch.round(x / scale), qmin, qmax)\n"
                "        ctx.save_for_backward(x, scale, codes)\n"
                "        ctx.qmin, ctx.qmax = qmin, qmax\n        return codes * scale")),
    Unusual("FakeQuantize", "x * (1 / scale), masks from x against the scaled edges, "
            "needs_input_grad",
            _fake_quantize(
                "        x, scale = ctx.saved_tensors\n"
                "        low, high = ctx.qmin * scale, ctx.qmax * scale\n"
                "        inside = (x >= low) & (x <= high)\n"
                "        grad_x = grad_output.masked_fill(~inside, 0) "
                "if ctx.needs_input_grad[0] else None\n"
                "        grad_scale = None\n"
                "        if ctx.needs_input_grad[1]:\n"
                "            v = x * (1 / scale)\n"
                "            local = (torch.round(v) - v) * inside + ctx.qmin * (x < low) "
                "+ ctx.qmax * (x > high)\n"
                "            grad_scale = (grad_output * local).sum()\n"
                "        return grad_x, grad_scale, None, None",
                "        ctx.save_for_backward(x, scale)\n"
                "        ctx.qmin, ctx.qmax = qmin, qmax\n"
                "        return torch.round(x * (1 / scale)).clamp(qmin, qmax) * scale")),
]

UNUSUAL += [
    Unusual("FakeQuantize", "backward rebuilds the quantiser with the detach trick (round(v) "
            "judged) and asks autograd: grad_x is g * s * (1 / s), an ulp off",
            _fake_quantize(
                "        x, scale = ctx.saved_tensors\n"
                "        with torch.enable_grad():\n"
                "            x_, s_ = x.detach().requires_grad_(), scale.detach().requires_grad_()\n"
                "            v = x_ / s_\n"
                "            y = torch.clamp(v + (torch.round(v) - v).detach(), ctx.qmin, "
                "ctx.qmax) * s_\n"
                "            return (*torch.autograd.grad(y, (x_, s_), grad_output), None, None)")),
    Unusual("FakeQuantize", "round(v) judged, grad_x written as (g / s) * s * inside",
            _fake_quantize(
                "        x, scale = ctx.saved_tensors\n        v = x / scale\n"
                "        r = torch.round(v)\n"
                "        inside = (r >= ctx.qmin) & (r <= ctx.qmax)\n"
                "        local = torch.where(inside, r - v, torch.clamp(r, ctx.qmin, ctx.qmax))\n"
                "        return (grad_output / scale) * scale * inside, "
                "(grad_output * local).sum(), None, None")),
    Unusual("FakeQuantize", "grad_scale left shaped like x: the engine sums it to scale's shape",
            _fake_quantize(FQ_READ + f"        return {FQ_GRAD_X}, grad_output * {FQ_LSQ}, "
                           "None, None")),
]

MISTAKES += [
    Mistake("FakeQuantize", "returns the integer codes", "FakeQuantize returns the integer codes",
            _fake_quantize("        return grad_output, None, None, None",
                           "        return torch.clamp(torch.round(x / scale), qmin, qmax)"),
            named=True),
    Mistake("FakeQuantize", "round(v) held constant for scale", "inside the clip it uses "
            "round(v) alone", _fq_scale("torch.where(inside, r, clipped)"), named=True,
            nbgrader=True),
    Mistake("FakeQuantize", "clipped elements give scale nothing", "it leaves out the clipped "
            "elements", _fq_scale("torch.where(inside, r - v, torch.zeros_like(v))"), named=True),
    Mistake("FakeQuantize", "grad_x divided by scale", "carries a factor 1 / scale",
            _fq_scale(FQ_LSQ, "grad_output * inside / scale"), named=True),
    Mistake("FakeQuantize", "grad_x not clipped", "FakeQuantize's gradient for x is not clipped",
            _fq_scale(FQ_LSQ, "grad_output")),
    Mistake("FakeQuantize", "v - round(v): wrong sign", "inside the clip it has the wrong sign",
            _fq_scale("torch.where(inside, v - r, clipped)")),
    Mistake("FakeQuantize", "qmin and qmax swapped for scale", "qmin and qmax are swapped",
            _fq_scale("torch.where(inside, r - v, torch.where(v < ctx.qmin, float(ctx.qmax), "
                      "float(ctx.qmin)))")),
    Mistake("FakeQuantize", "LSQ's gradient-scale factor kept", "LSQ's gradient-scale factor",
            _fq_scale(f"{FQ_LSQ} / math.sqrt(x.numel() * ctx.qmax)")),
    Mistake("FakeQuantize", "None for scale", "FakeQuantize returned None for scale",
            _fake_quantize(FQ_READ + f"        return {FQ_GRAD_X}, None, None, None")),
    Mistake("FakeQuantize", "clips x instead of the codes", "FakeQuantize clips x to [qmin, qmax]",
            _fake_quantize(
                FQ_READ + f"        return {FQ_GRAD_X}, (grad_output * {FQ_LSQ}).sum(), None, None",
                "        ctx.save_for_backward(x, scale)\n        ctx.qmin, ctx.qmax = qmin, qmax\n"
                "        return torch.round(torch.clamp(x, qmin, qmax) / scale) * scale")),
    Mistake("FakeQuantize", "gradient for qmin", "backward returned a gradient for qmin",
            _fake_quantize(FQ_READ + f"        return {FQ_GRAD_X}, (grad_output * {FQ_LSQ}).sum(), "
                           "torch.zeros(()), None")),
]

# Probed in the round-3 review of lesson 03 (each run through the real battery first).
UNUSUAL += [
    Unusual("SignClippedSTE", "the window as x * x <= 1",
            _clipped(READ_X + "        return grad_output * (x * x <= 1)")),
    Unusual("SignClippedSTE", "the window as clamp(x, -1, 1) == x",
            _clipped(READ_X + "        return grad_output * (torch.clamp(x, -1, 1) == x)")),
    Unusual("RoundSTE", "NumPy's rint, halves to even as well",
            _round("        import numpy as np\n"
                   "        return torch.from_numpy(np.rint(x.detach().cpu().numpy())).to(x.device)")),
    Unusual("FakeQuantize", "d(output)/d(scale) as the clamped codes minus v inside",
            _fake_quantize(FQ_READ + "        codes = torch.clamp(r, ctx.qmin, ctx.qmax)\n"
                           "        return grad_output * inside, (grad_output * (codes - v * inside))"
                           ".sum(), None, None")),
    Unusual("FakeQuantize", "the scale gradient summed region by region",
            _fake_quantize(FQ_READ + "        below, above = v < ctx.qmin, v > ctx.qmax\n"
                           "        grad_scale = ((grad_output * (r - v) * inside).sum()\n"
                           "                      + ctx.qmin * (grad_output * below).sum()\n"
                           "                      + ctx.qmax * (grad_output * above).sum())\n"
                           "        return grad_output * inside, grad_scale, None, None")),
    Unusual("FakeQuantize", "saves v = x / scale, tensordot for the sum",
            _fake_quantize(
                "        v, scale = ctx.saved_tensors\n        r = torch.round(v)\n"
                "        inside = (v >= ctx.qmin) & (v <= ctx.qmax)\n"
                "        local = torch.where(inside, r - v, torch.where(v < ctx.qmin, "
                "float(ctx.qmin), float(ctx.qmax)))\n"
                "        return grad_output * inside, torch.tensordot(grad_output, local, "
                "dims=grad_output.dim()), None, None",
                "        v = x / scale\n        ctx.save_for_backward(v, scale)\n"
                "        ctx.qmin, ctx.qmax = qmin, qmax\n"
                "        return torch.clamp(torch.round(v), qmin, qmax) * scale")),
]

MISTAKES += [
    Mistake("SignClippedSTE", "mask on a float32 copy of x", "SignClippedSTE's clip mask is "
            "built on x rounded to float32 (at x = -1.000000001", _clipped(READ_X + "        return grad_output * "
                                         "(x.float().abs() <= 1)")),
    Mistake("SignClippedSTE", "a tolerance on the window, |x| <= 1 + 1e-6", "your gradient for x "
            "is wrong: at x = -1.000000001 it gives",  # not told float32: 1 + 1e-7 tells them apart
            _clipped(READ_X + "        return grad_output * (x.abs() <= 1 + 1e-6)")),
    Mistake("SignClippedSTE", "boundary kept at -1 only", "your gradient for x is wrong: at x = 1 ",
            _clipped(READ_X + "        return grad_output * ((x >= -1) & (x < 1))")),
    Mistake("RoundSTE", "floor(x + 0.5) with halves sent to even", "RoundSTE's output is "
            "floor(x + 0.5) where it is not round(x)",
            _round("        fl = x.floor()\n        return torch.where(x - fl == 0.5, "
                   "fl + torch.remainder(fl, 2), torch.floor(x + 0.5))")),
    Mistake("RoundSTE", "floor(x + 0.5), then odd ties moved down", "RoundSTE's output is "
            "floor(x + 0.5) where it is not round(x)",
            _round("        r = torch.floor(x + 0.5)\n        tie = (r - x) == 0.5\n"
                   "        return torch.where(tie & (torch.remainder(r, 2) != 0), r - 1, r)")),
    Mistake("FakeQuantize", "the clip's edges dropped for x", "drops the clip's edges",
            _fake_quantize(FQ_READ + "        inside = (v > ctx.qmin) & (v < ctx.qmax)\n"
                           "        local = torch.where(inside, r - v, torch.where(v <= ctx.qmin, "
                           "float(ctx.qmin), float(ctx.qmax)))\n"
                           "        return grad_output * inside, (grad_output * local).sum(), "
                           "None, None")),
    Mistake("FakeQuantize", "floor for round", "FakeQuantize's codes are floor(x / scale)",
            _fake_quantize(FQ_READ + f"        return {FQ_GRAD_X}, (grad_output * {FQ_LSQ}).sum(), "
                           "None, None",
                           "        ctx.save_for_backward(x, scale)\n"
                           "        ctx.qmin, ctx.qmax = qmin, qmax\n"
                           "        return torch.clamp(torch.floor(x / scale), qmin, qmax) * scale")),
    Mistake("FakeQuantize", "mean for sum", "it is the mean over the elements, not the sum",
            _fake_quantize(FQ_READ + f"        return {FQ_GRAD_X}, (grad_output * {FQ_LSQ}).mean(), "
                           "None, None")),
    Mistake("FakeQuantize", "scale gradient without grad_output", "it ignores grad_output",
            _fake_quantize(FQ_READ + f"        return {FQ_GRAD_X}, {FQ_LSQ}.sum(), None, None")),
    Mistake("FakeQuantize", "rounding error outside the clip too", "outside the clip it uses the "
            "rounding error too", _fq_scale("r - v")),
    Mistake("FakeQuantize", "the product rule's round(v) term lost", "it keeps only the term "
            "through v", _fq_scale("torch.where(inside, -v, clipped)"), named=True),
    Mistake("FakeQuantize", "dv/ds with the wrong sign", "the term through v has the wrong sign",
            _fq_scale("torch.where(inside, r + v, clipped)")),
]
