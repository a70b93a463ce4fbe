"""Lesson 02: the answers of review 57, round C. Two holes let wrong answers pass both checks.
A forward that computes the products in float64, casts them back and then adds the bias in
float32 matched float32 on every probe (each had one product per entry, or two exact ones,
whose float64 sum rounds as float32's does): now three products, 2**64, 2**40 and 2**14, sum
to 2**64 in float32 in every order and to 2**64 + 2**41 in float64 cast back, in all three
exercises. And work for a frozen input was probed one input at a time (Bilinear) or counted
in FLOPs for pairs (matrix products only): now every subset of two or more inputs requiring
grad is run, and backward may return no gradient and compute no tensor for a frozen input."""

from .. import Mistake, Unusual, edit
from .answers import FLAT, FUSED_FORWARD, FUSED_READ, FUSED_RETURN, GUARDED, _fused, _linear
from .bilinear import GW, GX1, GX2, _bilinear_with

CAST_FIRST = "cast back to float32 before the bias is added"

_LINEAR = _linear(FLAT + GUARDED + "        grad_bias = g2.sum(0) if ctx.has_bias and "
                  "ctx.needs_input_grad[2] else None\n"
                  "        return grad_x, grad_weight, grad_bias")
_BILINEAR = _bilinear_with(GX1, GX2, GW)
_EINSUM = "torch.einsum('...i,oij,...j->...o', x1, weight, x2)"

MISTAKES = [
    Mistake("Bilinear", "grad_weight also computed when x1 and x2 need grad, None returned",
            "reaches none of the gradients it returns, when only x1 and x2 require grad",
            edit(_BILINEAR, ("        grad_weight = torch.einsum('...o,...i,...j->oij', "
                             "grad_output, x1, x2) if need[2] else None\n",
                             "        grad_weight = torch.einsum('...o,...i,...j->oij', "
                             "grad_output, x1, x2) if need[2] or (need[0] and need[1]) else None\n"
                             "        grad_weight = grad_weight if need[2] else None\n"))),
    Mistake("Bilinear", "grad_weight computed and returned when x1 and x2 need grad",
            "returned a gradient for weight when only x1 and x2 require grad",
            edit(_BILINEAR, ("if need[2] else None", "if need[2] or (need[0] and need[1]) "
                             "else None"))),
    Mistake("MyLinearFunction", "grad_weight by broadcasting when x and bias need grad, dropped",
            "reaches none of the gradients it returns, when only x and bias require grad",
            edit(_LINEAR, ("        return grad_x, grad_weight, grad_bias",
                           "        if ctx.needs_input_grad[0] and ctx.has_bias and "
                           "ctx.needs_input_grad[2]:\n"
                           "            unused = (g2[:, :, None] * x2[:, None, :]).sum(0)\n"
                           "        return grad_x, grad_weight, grad_bias"))),
]

UNUSUAL = [
    Unusual("Bilinear", "the forward contracted over j first (weight with x2, then x1)",
            edit(_BILINEAR, (_EINSUM, "torch.einsum('...oi,...i->...o', torch.einsum("
                             "'oij,...j->...oi', weight, x2), x1)"))),
    Unusual("FusedLinearReLU", "mask flattened, output by where, grad_z by masked_fill",
            _fused(FUSED_READ.replace("torch.where(mask, grad_output, 0.0)",
                                      "grad_output.masked_fill(~mask.reshape(grad_output.shape), "
                                      "0)") + FUSED_RETURN,
                   edit(FUSED_FORWARD, ("ctx.save_for_backward(x, weight, mask)",
                                        "ctx.save_for_backward(x, weight, mask.reshape(-1))"),
                        ("return z.clamp(min=0)", "return torch.where(mask, z, 0.0)")))),
]

# correct since issue 67: rule 1 of the Function contract accepts computing in a wider dtype
UNUSUAL.append(Unusual("MyLinearFunction", "products in float64, cast back, then the bias in float32",
        edit(_LINEAR, ("y = x @ weight.T",
                           "y = (x.double() @ weight.double().T).to(x.dtype)"))))

# correct since issue 67: rule 1 of the Function contract accepts computing in a wider dtype
UNUSUAL.append(Unusual("FusedLinearReLU", "pre-activation's products in float64, cast back, bias in float32",
        _fused(FUSED_READ + FUSED_RETURN, edit(
                FUSED_FORWARD, ("z = x @ weight.T",
                                "z = (x.double() @ weight.double().T).to(x.dtype)")))))

# correct since issue 67: rule 1 of the Function contract accepts computing in a wider dtype
UNUSUAL.append(Unusual("Bilinear", "einsum in float64, cast back, then the bias in float32",
        edit(_BILINEAR, (_EINSUM, "torch.einsum('...i,oij,...j->...o', x1.double(), "
                             "weight.double(), x2.double()).to(x1.dtype)"))))
