"""Lesson 03's transfer exercise, StraightThroughSoftmax, answered unusually and wrongly; and
answers to the lesson's other exercises that the contract's each-input-alone and by-hand rules
decide, or that public code writes."""

from tools.catalogue import Mistake, Unusual
from tools.catalogue.lesson03 import FQ_GRAD_X, FQ_LSQ, FQ_READ
from tools.catalogue.lesson03 import _fake_quantize as _fq_forward


def _sts(backward: str, forward: str = "        soft = torch.softmax(logits / tau, dim=-1)\n"
         "        ctx.save_for_backward(soft)\n        ctx.tau = tau\n"
         "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)") -> str:
    return f"""
class StraightThroughSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, tau):
{forward}

    @staticmethod
    def backward(ctx, grad_output):
{backward}
"""


READ = "        soft, = ctx.saved_tensors\n"
RIGHT = ("        row = (grad_output * soft).sum(-1, keepdim=True)\n"
         "        return soft * (grad_output - row) / ctx.tau, None")

UNUSUAL = [
    Unusual("StraightThroughSoftmax", "saves the logits, recomputes the softmax, scatter_ one-hot",
            _sts("        logits, = ctx.saved_tensors\n"
                 "        s = torch.softmax(logits / ctx.tau, dim=-1)\n"
                 "        return (s * grad_output - s * (s * grad_output).sum(-1, True)) / ctx.tau,"
                 " None",
                 "        ctx.save_for_backward(logits)\n        ctx.tau = tau\n"
                 "        index = logits.argmax(-1, keepdim=True)\n"
                 "        return torch.zeros_like(logits).scatter_(-1, index, 1.0)")),
    Unusual("StraightThroughSoftmax", "the full Jacobian per row, applied with einsum",
            _sts(READ + "        jacobian = torch.diag_embed(soft) - soft.unsqueeze(-1) * "
                 "soft.unsqueeze(-2)\n"
                 "        return torch.einsum('...ij,...j->...i', jacobian, grad_output) / ctx.tau,"
                 " None")),
    Unusual("StraightThroughSoftmax", "PyTorch's own softmax-backward decomposition "
            "(torch/_decomp: new_grad_output = grad_output * output)",
            _sts(READ + "        new_grad_output = grad_output * soft\n"
                 "        grad_input = new_grad_output - soft * torch.sum(new_grad_output, dim=-1, "
                 "keepdim=True)\n        return grad_input / ctx.tau, None")),
    Unusual("StraightThroughSoftmax", "one-hot by comparing with the row max, first maximum kept",
            _sts(READ + RIGHT,
                 "        ctx.save_for_backward(torch.softmax(logits / tau, -1))\n"
                 "        ctx.tau = tau\n"
                 "        index = torch.arange(logits.shape[-1], device=logits.device)\n"
                 "        return (index == logits.argmax(-1, keepdim=True)).to(logits.dtype)")),
]

MISTAKES = [
    Mistake("StraightThroughSoftmax", "identity backward", "it returns grad_output unchanged, "
            "skipping the softmax's Jacobian", _sts("        return grad_output, None"),
            named=True, nbgrader=True),
    Mistake("StraightThroughSoftmax", "no 1 / tau", "it lacks the factor 1 / tau",
            _sts(READ + "        row = (grad_output * soft).sum(-1, keepdim=True)\n"
                 "        return soft * (grad_output - row), None")),
    Mistake("StraightThroughSoftmax", "times tau", "it multiplies by tau",
            _sts(READ + "        row = (grad_output * soft).sum(-1, keepdim=True)\n"
                 "        return soft * (grad_output - row) * ctx.tau, None")),
    Mistake("StraightThroughSoftmax", "diagonal of the Jacobian only", "it keeps only the "
            "diagonal of the softmax's Jacobian",
            _sts(READ + "        return grad_output * soft * (1 - soft) / ctx.tau, None")),
    Mistake("StraightThroughSoftmax", "softmax in forward", "StraightThroughSoftmax's output is "
            "not one-hot",
            _sts(READ + RIGHT, "        soft = torch.softmax(logits / tau, dim=-1)\n"
                 "        ctx.save_for_backward(soft)\n        ctx.tau = tau\n"
                 "        return soft")),
    Mistake("StraightThroughSoftmax", "int64 one-hot", "has dtype torch.int64, not the logits'",
            _sts(READ + RIGHT, "        soft = torch.softmax(logits / tau, dim=-1)\n"
                 "        ctx.save_for_backward(soft)\n        ctx.tau = tau\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1])")),
    Mistake("StraightThroughSoftmax", "every tied maximum marked", "has more than one 1 in a "
            "row with tied maxima",
            _sts(READ + RIGHT, "        soft = torch.softmax(logits / tau, dim=-1)\n"
                 "        ctx.save_for_backward(soft)\n        ctx.tau = tau\n"
                 "        top = logits.max(dim=-1, keepdim=True).values\n"
                 "        return (logits == top).to(logits.dtype)")),
    Mistake("StraightThroughSoftmax", "autograd inside backward", "StraightThroughSoftmax.backward "
            "calls torch.autograd.grad",
            _sts("        logits, = ctx.saved_tensors\n        with torch.enable_grad():\n"
                 "            leaf = logits.detach().requires_grad_()\n"
                 "            soft = torch.softmax(leaf / ctx.tau, dim=-1)\n"
                 "            return torch.autograd.grad(soft, leaf, grad_output)[0], None",
                 "        ctx.save_for_backward(logits)\n        ctx.tau = tau\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)"),
            named=True),
    Mistake("StraightThroughSoftmax", "softmax computed in float32 for float64 logits",
            "StraightThroughSoftmax's gradient for float64 logits has float32's precision",
            _sts(READ + RIGHT, "        soft = torch.softmax(logits.float() / tau, dim=-1)\n"
                 "        ctx.save_for_backward(soft.to(logits.dtype))\n        ctx.tau = tau\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)")),
    Mistake("StraightThroughSoftmax", "softmax rebuilt as exp(z) / sum exp(z)",
            "StraightThroughSoftmax's gradient for logits is not finite where the softmax's is",
            _sts("        logits, = ctx.saved_tensors\n        e = (logits / ctx.tau).exp()\n"
                 "        soft = e / e.sum(-1, keepdim=True)\n" + RIGHT,
                 "        ctx.save_for_backward(logits)\n        ctx.tau = tau\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)"),
            named=True),
]


def _fake_quantize(backward: str) -> str:
    return f"""
class FakeQuantize(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, qmin, qmax):
        ctx.save_for_backward(x, scale)
        ctx.qmin, ctx.qmax = qmin, qmax
        return torch.clamp(torch.round(x / scale), qmin, qmax) * scale

    @staticmethod
    def backward(ctx, grad_output):
{backward}
"""


FQ = ("        x, scale = ctx.saved_tensors\n        v = x / scale\n"
      "        inside = (v >= ctx.qmin) & (v <= ctx.qmax)\n"
      "        clipped = torch.where(v < ctx.qmin, float(ctx.qmin), float(ctx.qmax))\n"
      "        local = torch.where(inside, torch.round(v) - v, clipped)\n")

UNUSUAL += [
    Unusual("FakeQuantize", "backward built on the detach trick (LSQ's composed form, "
            "differentiated by autograd inside backward)",
            _fake_quantize(
                "        x, scale = ctx.saved_tensors\n        with torch.enable_grad():\n"
                "            x = x.detach().requires_grad_()\n"
                "            scale = scale.detach().requires_grad_()\n"
                "            v = torch.clamp(x / scale, ctx.qmin, ctx.qmax)\n"
                "            y = (v + (torch.round(v) - v).detach()) * scale\n"
                "            grad_x, grad_scale = torch.autograd.grad(y, (x, scale), grad_output)\n"
                "        return grad_x, grad_scale, None, None")),
]

MISTAKES += [
    Mistake("FakeQuantize", "needs_input_grad index slip", "it decides whether to compute "
            "grad_x from another input's entry of ctx.needs_input_grad (entry 0 belongs to x)",
            _fake_quantize(FQ + "        grad_x = grad_output * inside if ctx.needs_input_grad[1] "
                           "else None\n"
                           "        grad_scale = (grad_output * local).sum() if "
                           "ctx.needs_input_grad[1] else None\n"
                           "        return grad_x, grad_scale, None, None")),
]

UNUSUAL += [
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

# Probed in the round-3 review of lesson 03 (each run through the real battery first).
UNUSUAL += [
    Unusual("StraightThroughSoftmax", "softmax by hand in backward, max shifted out (float32 at "
            "tau = 0.1 differs from torch.softmax's rounding)",
            _sts("        logits, = ctx.saved_tensors\n        z = logits / ctx.tau\n"
                 "        e = torch.exp(z - z.amax(-1, keepdim=True))\n"
                 "        s = e / e.sum(-1, keepdim=True)\n"
                 "        return s * (grad_output - (s * grad_output).sum(-1, keepdim=True)) "
                 "/ ctx.tau, None",
                 "        ctx.save_for_backward(logits)\n        ctx.tau = tau\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)")),
    Unusual("StraightThroughSoftmax", "exp(log_softmax) saved, type_as for the dtype",
            _sts(READ + RIGHT,
                 "        ctx.save_for_backward(torch.exp(torch.log_softmax(logits / tau, -1)))\n"
                 "        ctx.tau = tau\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).type_as(logits)")),
]

MISTAKES += [
    Mistake("StraightThroughSoftmax", "identity divided by tau", "it returns grad_output / tau",
            _sts("        return grad_output / ctx.tau, None")),
    Mistake("StraightThroughSoftmax", "softmax without the temperature, then 1 / tau",
            "its softmax leaves out the temperature",
            _sts(READ + RIGHT, "        ctx.save_for_backward(torch.softmax(logits, dim=-1))\n"
                 "        ctx.tau = tau\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)")),
    Mistake("StraightThroughSoftmax", "the saved one-hot used as the softmax", "backward uses the "
            "saved one-hot in place of the softmax",
            _sts("        hard, = ctx.saved_tensors\n"
                 "        row = (grad_output * hard).sum(-1, keepdim=True)\n"
                 "        return hard * (grad_output - row) / ctx.tau, None",
                 "        hard = F.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)\n"
                 "        ctx.save_for_backward(hard)\n        ctx.tau = tau\n        return hard")),
    Mistake("StraightThroughSoftmax", "zero gradient (the one-hot's true derivative)",
            "zero everywhere: that is the true derivative of the one-hot",
            _sts("        return torch.zeros_like(grad_output), None")),
    Mistake("StraightThroughSoftmax", "Gumbel noise drawn inside forward", "it draws noise itself",
            _sts(READ + RIGHT, "        ctx.save_for_backward(torch.softmax(logits / tau, -1))\n"
                 "        ctx.tau = tau\n"
                 "        noise = -torch.log(-torch.log(torch.rand_like(logits)))\n"
                 "        return F.one_hot((logits + noise).argmax(-1), logits.shape[-1])"
                 ".to(logits.dtype)"), named=True),
    Mistake("StraightThroughSoftmax", "float32 one-hot for float64 logits", "has dtype "
            "torch.float32, not the logits' torch.float64: convert",
            _sts(READ + RIGHT, "        ctx.save_for_backward(torch.softmax(logits / tau, -1))\n"
                 "        ctx.tau = tau\n"
                 "        return F.one_hot(logits.argmax(-1), logits.shape[-1]).float()")),
]

# Round 4: halves where half-up and half-to-even differ (v = 0.5, 2.5, -1.5, -3.5), and one
# convention for both gradients in the half-step band.
_FQ_HALVES = ("        ctx.save_for_backward(x, scale)\n        ctx.qmin, ctx.qmax = qmin, qmax\n"
              "        v = x / scale\n        return torch.clamp({codes}, qmin, qmax) * scale")
_FQ_RIGHT = FQ_READ + f"        return {FQ_GRAD_X}, (grad_output * {FQ_LSQ}).sum(), None, None"
_FQ_ROUNDED = ("        x, scale = ctx.saved_tensors\n        v = x / scale\n"
               "        r = torch.round(v)\n"
               "        on_v = (v >= ctx.qmin) & (v <= ctx.qmax)\n"
               "        on_r = (r >= ctx.qmin) & (r <= ctx.qmax)\n")

MISTAKES += [
    Mistake("FakeQuantize", "floor(v + 0.5): halves rounded up", "FakeQuantize's codes are "
            "floor(x / scale + 0.5), which rounds halves up",
            _fq_forward(_FQ_RIGHT, _FQ_HALVES.format(codes="torch.floor(v + 0.5)")),
            named=True),
    Mistake("FakeQuantize", "halves rounded away from zero (C's round)", "FakeQuantize's codes "
            "are rounded half away from zero",
            _fq_forward(_FQ_RIGHT, _FQ_HALVES.format(
                codes="torch.sign(v) * torch.floor(v.abs() + 0.5)"))),
    Mistake("FakeQuantize", "x judged on v, scale on round(v)", "FakeQuantize judges 'inside' on "
            "v for x's gradient but on round(v) for scale's",
            _fake_quantize(_FQ_ROUNDED + "        local = torch.where(on_r, r - v, "
                           "torch.clamp(r, ctx.qmin, ctx.qmax))\n"
                           "        return grad_output * on_v, (grad_output * local).sum(), "
                           "None, None"), named=True),
    Mistake("FakeQuantize", "x judged on round(v), scale on v", "FakeQuantize judges 'inside' on "
            "round(v) for x's gradient but on v for scale's",
            _fake_quantize(_FQ_ROUNDED + "        local = torch.where(on_v, r - v, torch.where("
                           "v < ctx.qmin, float(ctx.qmin), float(ctx.qmax)))\n"
                           "        return grad_output * on_r, (grad_output * local).sum(), "
                           "None, None")),
]

# Round 4: grad_output flattened with .view, which a transposed leading dim refuses.
MISTAKES += [
    Mistake("StraightThroughSoftmax", ".view(-1, n) on a non-contiguous grad_output",
            "view size is not compatible with input tensor's size and stride",
            _sts(READ + "        n = soft.shape[-1]\n        g, s = grad_output.view(-1, n), "
                 "soft.reshape(-1, n)\n"
                 "        return (s * (g - (g * s).sum(-1, keepdim=True)) / ctx.tau)"
                 ".view(soft.shape), None")),
]
