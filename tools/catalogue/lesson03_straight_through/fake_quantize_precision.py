"""Lesson 03: FakeQuantize answers that keep or lose float64's digits: a scale gradient shaped
(1,), scale.item(), or the mask and the local derivative saved in forward (widened to float64
too), which the contract accepts, and steps run in float32 for float64 x (a gradient made in torch.zeros without dtype=,
a forward on x.float(), codes rounded in float32, gradients cast to float32,
torch.fake_quantize_per_tensor_affine, each element's scale term in float32, scale saved as
float32, 1 / scale taken in float32), which it does not."""

from .. import Mistake, Unusual
from .answers import FQ_GRAD_X, FQ_LSQ, FQ_READ, _fake_quantize, fq_gated

SUM = f"(grad_output * {FQ_LSQ}).sum()"
SAVES = "        ctx.save_for_backward(x, scale)\n        ctx.qmin, ctx.qmax = qmin, qmax\n"

UNUSUAL = [
    Unusual("FakeQuantize", "grad_scale shaped (1,): the engine sums it to scale's shape",
            _fake_quantize(FQ_READ + fq_gated(FQ_GRAD_X, f"{SUM}.reshape(1)"))),
    Unusual("FakeQuantize", "the step read as a Python float with scale.item()",
            _fake_quantize(FQ_READ.replace("v = x / scale", "s = scale.item()\n        v = x / s")
                           + fq_gated(FQ_GRAD_X, SUM),
                           SAVES + "        s = scale.item()\n"
                           "        return torch.clamp(torch.round(x / s), qmin, qmax) * s")),
    Unusual("FakeQuantize", "forward saves the mask and d(output)/d(scale), not x",
            _fake_quantize(
                "        inside, local = ctx.saved_tensors\n"
                + fq_gated("grad_output * inside", "(grad_output * local).sum()"),
                "        v = x / scale\n        r = torch.round(v)\n"
                "        inside = (v >= qmin) & (v <= qmax)\n"
                "        local = torch.where(inside, r - v, torch.where(v < qmin, float(qmin), "
                "float(qmax)).to(x.dtype))\n"
                "        ctx.save_for_backward(inside, local)\n"
                "        return torch.clamp(r, qmin, qmax) * scale")),
]

MISTAKES = [
    # saving it widened is the exercise's own choice, but the scale gradient it makes comes
    # back in float64 for a float32 scale: rule 2 (each gradient in its input's dtype)
    Mistake("FakeQuantize", "the local derivative saved widened to float64, its gradient too",
            "returned grad_scale in float64",
            _fake_quantize(
                "        inside, local = ctx.saved_tensors\n"
                + fq_gated("grad_output * inside", "(grad_output * local).sum()"),
                "        v = x / scale\n        r = torch.round(v)\n"
                "        inside = (v >= qmin) & (v <= qmax)\n"
                "        local = torch.where(inside, r - v, torch.where(v < qmin, float(qmin), "
                "float(qmax)).to(x.dtype))\n"
                "        ctx.save_for_backward(inside, local.double())\n"
                "        return torch.clamp(r, qmin, qmax) * scale")),
    Mistake("FakeQuantize", "grad_x made in torch.zeros without dtype=",
            "FakeQuantize's gradient for x is right only to float32's precision",
            _fake_quantize(FQ_READ + "        grad_x = torch.zeros(x.shape)\n"
                           "        grad_x[inside] = grad_output[inside].to(grad_x.dtype)\n"
                           f"        return grad_x, {SUM}, None, None")),
    Mistake("FakeQuantize", "forward computed on x.float()",
            "FakeQuantize's codes are round(x / scale) computed in float32",
            _fake_quantize(FQ_READ + f"        return {FQ_GRAD_X}, {SUM}, None, None",
                           SAVES + "        q = torch.clamp(torch.round(x.float() / "
                           "scale.float()), qmin, qmax)\n"
                           "        return (q * scale.float()).to(x.dtype)")),
    Mistake("FakeQuantize", "codes rounded in float32, times scale in x's dtype",
            "FakeQuantize's codes are round(x / scale) computed in float32 (at x / scale = "
            "2.5000000009313226 it gives 1, expected 1.5)",
            _fake_quantize(FQ_READ + f"        return {FQ_GRAD_X}, {SUM}, None, None",
                           SAVES + "        q = torch.clamp(torch.round(x.float() / "
                           "scale.float()), qmin, qmax)\n"
                           "        return q.to(x.dtype) * scale")),
    Mistake("FakeQuantize", "both gradients cast to float32",
            "FakeQuantize's gradient for x is right only to float32's precision",
            _fake_quantize(FQ_READ + f"        return ({FQ_GRAD_X}).float(), {SUM}.float(), "
                           "None, None")),
    Mistake("FakeQuantize", "scale's gradient summed in float32",
            "FakeQuantize's gradient for scale is right only to float32's precision",
            _fake_quantize(FQ_READ + f"        return {FQ_GRAD_X}, (grad_output.float() * "
                           f"{FQ_LSQ}.float()).sum(), None, None")),
    Mistake("FakeQuantize", "forward by torch.fake_quantize_per_tensor_affine",
            "FakeQuantize's output is right only to float32's precision",
            _fake_quantize(FQ_READ + f"        return {FQ_GRAD_X}, {SUM}, None, None",
                           SAVES + "        return torch.fake_quantize_per_tensor_affine("
                           "x, scale.item(), 0, qmin, qmax)")),
    Mistake("FakeQuantize", "each element's scale term in float32, summed in float64",
            "FakeQuantize's gradient for scale is the sum of grad_output times each element's "
            "d(output)/d(scale) rounded to float32",
            _fake_quantize(
                "        x, scale = ctx.saved_tensors\n        v = x / scale\n"
                "        inside = (v >= ctx.qmin) & (v <= ctx.qmax)\n"
                "        clipped = torch.where(v < ctx.qmin, float(ctx.qmin), float(ctx.qmax))\n"
                "        local = torch.where(inside, torch.round(v) - v, clipped).float()\n"
                "        return grad_output * inside, (grad_output * local).sum(), None, None")),
    Mistake("FakeQuantize", "scale saved as float32 for float64 x",
            "FakeQuantize's gradient for scale is what scale rounded to float32 gives",
            _fake_quantize(FQ_READ + f"        return grad_output * inside, (grad_output * "
                           f"{FQ_LSQ}).sum(), None, None",
                           "        ctx.save_for_backward(x, scale.float())\n"
                           "        ctx.qmin, ctx.qmax = qmin, qmax\n"
                           "        return torch.clamp(torch.round(x / scale), qmin, qmax) "
                           "* scale")),
    Mistake("FakeQuantize", "1 / scale.float() in backward, for float64 x",
            "your gradient for scale agrees to float32 precision only: it is what 1 / scale "
            "rounded to float32 gives",
            _fake_quantize(FQ_READ.replace("v = x / scale", "v = x * (1 / scale.float())")
                           + f"        return grad_output * inside, (grad_output * "
                           f"{FQ_LSQ}).sum(), None, None")),
]
