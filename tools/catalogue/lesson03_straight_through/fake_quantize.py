"""Lesson 03: answers with known verdicts for FakeQuantize's gradients: the straight-through
gradient for x and LSQ's for scale, among them v computed as x * (1 / scale), as PyTorch's
kernels do, which the contract accepts. Four answers whose scale gradient is nan where
x / scale is +-inf (review 57, round C) were mistakes while the contract took x of any value;
since issue 69 that value is off the domain: two are correct, and the two that ask autograd
inside backward are named by rule 3 of the Function contract."""

from .. import Mistake, Unusual
from .answers import FQ_GRAD_X, FQ_LSQ, FQ_READ, _fake_quantize, _fq_scale, fq_gated

# once caught only where x / scale is infinite, a value no model meets (issue 69): named now by
# rule 3 of the Function contract, the gradient written by hand
_ASKS_AUTOGRAD = "FakeQuantize.backward calls"
# v as PyTorch's kernels compute it
RECIPROCAL = FQ_READ.replace("v = x / scale", "v = x * (1 / scale)")
# the saved inputs read, 'inside' judged on v and LSQ's local derivative for scale
FQ_LOCAL = ("        x, scale = ctx.saved_tensors\n        v = x / scale\n"
            "        inside = (v >= ctx.qmin) & (v <= ctx.qmax)\n"
            "        clipped = torch.where(v < ctx.qmin, float(ctx.qmin), float(ctx.qmax))\n"
            "        local = torch.where(inside, torch.round(v) - v, clipped)\n")

UNUSUAL = [
    Unusual("FakeQuantize", "inside judged on round(v), as PyTorch's learnable fake quantiser",
            _fake_quantize(
                "        x, scale = ctx.saved_tensors\n        v = x / scale\n"
                "        code = torch.round(v)\n"
                "        inside = (code >= ctx.qmin) & (code <= ctx.qmax)\n"
                "        grad_x = grad_output * inside if ctx.needs_input_grad[0] else None\n"
                "        grad_scale = None\n"
                "        if ctx.needs_input_grad[1]:\n"
                "            local = torch.where(inside, code - v, torch.where(code < ctx.qmin, "
                "ctx.qmin, ctx.qmax).to(x.dtype))\n"
                "            grad_scale = (grad_output * local).sum()\n"
                "        return grad_x, grad_scale, None, None")),
    Unusual("FakeQuantize", "saves the clamped codes; local gradient from (y - x) / scale",
            _fake_quantize(
                "        x, scale, codes = ctx.saved_tensors\n"
                "        v = x / scale\n"
                "        inside = (v >= ctx.qmin) & (v <= ctx.qmax)\n"
                "        local = torch.where(inside, (codes * scale - x) / scale, codes)\n"
                "        grad_x = torch.where(inside, grad_output, torch.zeros_like(grad_output)) "
                "if ctx.needs_input_grad[0] else None\n"
                "        return grad_x, (torch.sum(grad_output * local) if ctx.needs_input_grad[1] "
                "else None), None, None",
                "        codes = torch.clamp(torch.round(x / scale), qmin, qmax)\n"
                "        ctx.save_for_backward(x, scale, codes)\n"
                "        ctx.qmin, ctx.qmax = qmin, qmax\n        return codes * scale")),
    Unusual("FakeQuantize", "round(v) judged, grad_x written as (g / s) * s * inside",
            _fake_quantize(
                "        x, scale = ctx.saved_tensors\n        v = x / scale\n"
                "        r = torch.round(v)\n"
                "        inside = (r >= ctx.qmin) & (r <= ctx.qmax)\n"
                + fq_gated("(grad_output / scale) * scale * inside",
                           "(grad_output * torch.where(inside, r - v, torch.clamp(r, ctx.qmin, "
                           "ctx.qmax))).sum()"))),
    Unusual("FakeQuantize", "grad_scale left shaped like x: the engine sums it to scale's shape",
            _fake_quantize(FQ_READ + fq_gated(FQ_GRAD_X, f"grad_output * {FQ_LSQ}"))),
    Unusual("FakeQuantize", "saves v = x / scale, tensordot for the sum",
            _fake_quantize(
                "        v, scale = ctx.saved_tensors\n        r = torch.round(v)\n"
                "        inside = (v >= ctx.qmin) & (v <= ctx.qmax)\n"
                "        local = torch.where(inside, r - v, torch.where(v < ctx.qmin, "
                "float(ctx.qmin), float(ctx.qmax)))\n"
                + fq_gated("grad_output * inside", "torch.tensordot(grad_output, local, "
                           "dims=grad_output.dim())"),
                "        v = x / scale\n        ctx.save_for_backward(v, scale)\n"
                "        ctx.qmin, ctx.qmax = qmin, qmax\n"
                "        return torch.clamp(torch.round(v), qmin, qmax) * scale")),
    Unusual("FakeQuantize", "v = x * (1 / scale), as PyTorch's kernels compute it",
            _fake_quantize(RECIPROCAL + fq_gated(FQ_GRAD_X, f"(grad_output * {FQ_LSQ}).sum()"),
                           "        ctx.save_for_backward(x, scale)\n"
                           "        ctx.qmin, ctx.qmax = qmin, qmax\n"
                           "        return torch.clamp(torch.round(x * (1 / scale)), qmin, qmax)"
                           " * scale")),
]

MISTAKES = [
    # correct until the contract took x of any value: 0 * inf in the scale gradient
    Mistake("FakeQuantize", "nan at x / scale = +-inf: backward rebuilds the quantiser with the "
            "detach trick (round(v) judged) and asks autograd: grad_x is g * s * (1 / s), an ulp "
            "off", _ASKS_AUTOGRAD,
            _fake_quantize(
                "        x, scale = ctx.saved_tensors\n"
                "        with torch.enable_grad():\n"
                "            x_, s_ = x.detach().requires_grad_(), scale.detach().requires_grad_()\n"
                "            v = x_ / s_\n"
                "            y = torch.clamp(v + (torch.round(v) - v).detach(), ctx.qmin, "
                "ctx.qmax) * s_\n"
                "            return (*torch.autograd.grad(y, (x_, s_), grad_output), None, None)")),
    Mistake("FakeQuantize", "nan at x / scale = +-inf: backward built on the detach trick (LSQ's "
            "composed form, differentiated by autograd inside backward)", _ASKS_AUTOGRAD,
            _fake_quantize(
                "        x, scale = ctx.saved_tensors\n        with torch.enable_grad():\n"
                "            x = x.detach().requires_grad_()\n"
                "            scale = scale.detach().requires_grad_()\n"
                "            v = torch.clamp(x / scale, ctx.qmin, ctx.qmax)\n"
                "            y = (v + (torch.round(v) - v).detach()) * scale\n"
                "            grad_x, grad_scale = torch.autograd.grad(y, (x, scale), grad_output)\n"
                "        return grad_x, grad_scale, None, None")),
    # once catalogued as unusual (every scale the battery tried was a power of two, where x's
    # units and v's agree): off powers of two it gives 0 where x / scale is exactly an edge
    Mistake("FakeQuantize", "x * (1 / scale), masks from x against the scaled edges, "
            "needs_input_grad",
            "FakeQuantize judges the clip edge in x's units: at x = 0.9, scale = 0.3",
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
    # review 77 (W7): off powers of two x / scale and x * (1 / scale) land an ulp apart, on
    # either side of an exact half-code, so backward's round(v) is not the code forward returned
    Mistake("FakeQuantize", "v = x * (1 / scale) in forward, x / scale in backward",
            "FakeQuantize's gradient for scale uses codes its forward never produced",
            _fake_quantize(FQ_READ + fq_gated(FQ_GRAD_X, f"(grad_output * {FQ_LSQ}).sum()"),
                           "        ctx.save_for_backward(x, scale)\n"
                           "        ctx.qmin, ctx.qmax = qmin, qmax\n"
                           "        return torch.clamp(torch.round(x * (1 / scale)), qmin, qmax)"
                           " * scale")),
    Mistake("FakeQuantize", "v = x / scale in forward, x * (1 / scale) in backward",
            "FakeQuantize's gradient for scale uses codes its forward never produced",
            _fake_quantize(RECIPROCAL + fq_gated(FQ_GRAD_X, f"(grad_output * {FQ_LSQ}).sum()"))),
    Mistake("FakeQuantize", "saves x.clone()", "forward saved a copy of x",
            _fq_scale(FQ_LSQ).replace("ctx.save_for_backward(x, scale)",
                                      "ctx.save_for_backward(x.clone(), scale)")),
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
    Mistake("FakeQuantize", "gradient for qmin", "backward returned a tensor of zeros for qmin",
            _fake_quantize(FQ_READ + f"        return {FQ_GRAD_X}, (grad_output * {FQ_LSQ}).sum(), "
                           "torch.zeros(()), None")),
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
    Mistake("FakeQuantize", "residual (y - x) / s for scale everywhere", "outside the clip it "
            "is the residual (y - x) / s", _fq_scale("torch.clamp(r, ctx.qmin, ctx.qmax) - v")),
    Mistake("FakeQuantize", "the product rule's round(v) term lost", "it keeps only the term "
            "through v", _fq_scale("torch.where(inside, -v, clipped)"), named=True),
    Mistake("FakeQuantize", "dv/ds with the wrong sign", "the term through v has the wrong sign",
            _fq_scale("torch.where(inside, r + v, clipped)")),
    # rule 2 of the Function contract: autograd throws away a gradient returned for an input
    # that needs no gradient; the lesson's solution with both gradients computed always
    Mistake("FakeQuantize", "ignores needs_input_grad: both gradients always",
            "returned a gradient for scale with only x requiring grad", _fq_scale(FQ_LSQ)),
    Mistake("FakeQuantize", "needs_input_grad index slip", "it decides whether to compute "
            "grad_x from another input's entry of ctx.needs_input_grad: which entry is x's?",
            _fake_quantize(FQ_LOCAL + "        grad_x = grad_output * inside if ctx.needs_input_grad[1] "
                           "else None\n"
                           "        grad_scale = (grad_output * local).sum() if "
                           "ctx.needs_input_grad[1] else None\n"
                           "        return grad_x, grad_scale, None, None")),
]

# correct since issue 69: an infinite x / scale left the domain (no value a model meets)
UNUSUAL.append(Unusual("FakeQuantize", "nan at x / scale = +-inf: d(output)/d(scale) as the clamped codes "
            "minus v inside",
        _fake_quantize(FQ_READ + "        codes = torch.clamp(r, ctx.qmin, ctx.qmax)\n"
                           + fq_gated("grad_output * inside",
                                      "(grad_output * (codes - v * inside)).sum()"))))

# correct since issue 69: an infinite x / scale left the domain (no value a model meets)
UNUSUAL.append(Unusual("FakeQuantize", "nan at x / scale = +-inf: the scale gradient summed region by "
            "region",
        _fake_quantize(FQ_READ + "        grad_scale = None\n"
                           "        if ctx.needs_input_grad[1]:\n"
                           "            below, above = v < ctx.qmin, v > ctx.qmax\n"
                           "            grad_scale = ((grad_output * (r - v) * inside).sum()\n"
                           "                          + ctx.qmin * (grad_output * below).sum()\n"
                           "                          + ctx.qmax * (grad_output * above).sum())\n"
                           "        grad_x = grad_output * inside if ctx.needs_input_grad[0] "
                           "else None\n"
                           "        return grad_x, grad_scale, None, None")))
