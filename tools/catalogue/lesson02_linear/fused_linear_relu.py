"""Lesson 02: answers with known verdicts for FusedLinearReLU."""

from .. import Mistake, Unusual, edit
from .answers import (_BROADCAST, _LEADING, _ONE_D, _RETURN, FUSED_FORWARD, FUSED_READ,
                      FUSED_RETURN, _fused)

UNUSUAL = [
    Unusual("FusedLinearReLU", "torch.where backward, clamp forward",
            _fused("        x, weight, mask = ctx.saved_tensors\n"
                   "        g = torch.where(mask, grad_output, 0.0)\n"
                   "        g2 = g.reshape(-1, weight.shape[0])\n"
                   "        x2 = x.reshape(-1, weight.shape[1])\n" + FUSED_RETURN,
                   "        z = F.linear(x, weight, bias)\n        mask = z > 0\n"
                   "        ctx.save_for_backward(x, weight, mask)\n"
                   "        ctx.has_bias = bias is not None\n        return z.clamp(min=0)")),
    Unusual("FusedLinearReLU", "flattened x and a (rows, out) mask saved",
            _fused("        rows, weight, mask = ctx.saved_tensors\n"
                   "        g = torch.where(mask, grad_output.reshape(-1, weight.shape[0]), 0.0)\n"
                   "        grad_x = (g @ weight).reshape(ctx.x_shape) if "
                   "ctx.needs_input_grad[0] else None\n"
                   "        grad_weight = g.T @ rows if ctx.needs_input_grad[1] else None\n"
                   "        grad_bias = g.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] "
                   "else None\n        return grad_x, grad_weight, grad_bias",
                   "        rows = x.reshape(-1, weight.shape[1])\n        z = rows @ weight.T\n"
                   "        if bias is not None:\n            z = z + bias\n"
                   "        mask = z > 0\n        ctx.save_for_backward(rows, weight, mask)\n"
                   "        ctx.has_bias, ctx.x_shape = bias is not None, x.shape\n"
                   "        return torch.where(mask, z, 0.0).reshape(*x.shape[:-1], weight.shape[0])")),
    Unusual("FusedLinearReLU", "einsum everywhere, bias gradient by new_ones @ g2",
            _fused(FUSED_READ +
                   "        grad_x = torch.einsum('...o,oi->...i', g, weight) if "
                   "ctx.needs_input_grad[0] else None\n"
                   "        grad_weight = torch.einsum('mo,mi->oi', g2, x2) if "
                   "ctx.needs_input_grad[1] else None\n"
                   "        grad_bias = g2.new_ones(g2.shape[0]) @ g2 if ctx.has_bias and "
                   "ctx.needs_input_grad[2] else None\n"
                   "        return grad_x, grad_weight, grad_bias")),
    Unusual("FusedLinearReLU", "a 'dead' mask z <= 0 and masked_fill",
            _fused(FUSED_READ.replace("mask", "dead").replace("torch.where(dead, grad_output, 0.0)",
                                                              "grad_output.masked_fill(dead, 0)")
                   + FUSED_RETURN,
                   "        z = x @ weight.T\n        if bias is not None:\n            z += bias\n"
                   "        dead = z <= 0\n        ctx.save_for_backward(x, weight, dead)\n"
                   "        ctx.has_bias = bias is not None\n        return z.masked_fill(dead, 0)")),
    Unusual("FusedLinearReLU", "saves x and weight only for the gradients that read them",
            _fused("        x, weight, mask = ctx.saved_tensors\n        n = ctx.needs_input_grad\n"
                   "        g = torch.where(mask, grad_output, 0.0)\n        g2 = g.reshape(-1, g.shape[-1])\n"
                   "        grad_x = g @ weight if n[0] else None\n"
                   "        grad_weight = g2.T @ x.reshape(-1, x.shape[-1]) if n[1] else None\n"
                   "        grad_bias = g2.sum(0) if ctx.has_bias and n[2] else None\n"
                   "        return grad_x, grad_weight, grad_bias",
                   "        z = F.linear(x, weight, bias)\n        mask = z > 0\n"
                   "        ctx.save_for_backward(x if ctx.needs_input_grad[1] else None,\n"
                   "                              weight if ctx.needs_input_grad[0] else None, mask)\n"
                   "        ctx.has_bias = bias is not None\n        return torch.relu(z)")),
    Unusual("FusedLinearReLU", "a contiguous copy of weight.T saved beside the mask",
            _fused(FUSED_READ.replace("x, weight, mask = ctx.saved_tensors",
                                      "x, weight_t, mask = ctx.saved_tensors\n"
                                      "        weight = weight_t.T") + FUSED_RETURN,
                   "        z = F.linear(x, weight, bias)\n        mask = z > 0\n"
                   "        ctx.save_for_backward(x, weight.T.contiguous(), mask)\n"
                   "        ctx.has_bias = bias is not None\n        return torch.relu(z)")),
    Unusual("FusedLinearReLU", "a contiguous weight.T and x saved only when they will be read",
            _fused("        x, weight_t, mask = ctx.saved_tensors\n        n = ctx.needs_input_grad\n"
                   "        g = torch.where(mask, grad_output, 0.0)\n        g2 = g.reshape(-1, g.shape[-1])\n"
                   "        grad_x = g @ weight_t.T if n[0] else None\n"
                   "        grad_weight = g2.T @ x.reshape(-1, x.shape[-1]) if n[1] else None\n"
                   "        grad_bias = g2.sum(0) if ctx.has_bias and n[2] else None\n" + _RETURN,
                   "        z = F.linear(x, weight, bias)\n        mask = z > 0\n"
                   "        ctx.save_for_backward(x if ctx.needs_input_grad[1] else None,\n"
                   "                              weight.T.contiguous() if ctx.needs_input_grad[0]"
                   " else None, mask)\n"
                   "        ctx.has_bias = bias is not None\n        return torch.relu(z)")),
]

MISTAKES = [
    Mistake("FusedLinearReLU", "saves the float pre-activation",
            "FusedLinearReLU saved a float64 intermediate of shape (4,) (32 bytes) for backward: 8 "
            "bytes per output element where the contract allows the ReLU part one. What does the "
            "ReLU part of backward need to know about the pre-activation at each element",
            _fused("        x, weight, z = ctx.saved_tensors\n        g = grad_output * (z > 0)\n"
                   "        g2 = g.reshape(-1, weight.shape[0])\n"
                   "        x2 = x.reshape(-1, weight.shape[1])\n" + FUSED_RETURN,
                   "        z = x @ weight.T\n        if bias is not None:\n            z = z + bias\n"
                   "        ctx.save_for_backward(x, weight, z)\n"
                   "        ctx.has_bias = bias is not None\n        return z.clamp(min=0)"),
            named=True),
    Mistake("FusedLinearReLU", "mask kept as ctx.mask",
            "FusedLinearReLU stores a tensor as ctx.mask: use ctx.save_for_backward",
            _fused(FUSED_READ + FUSED_RETURN,
                   "        z = x @ weight.T\n        if bias is not None:\n            z = z + bias\n"
                   "        ctx.mask = z > 0\n        ctx.save_for_backward(x, weight, ctx.mask)\n"
                   "        ctx.has_bias = bias is not None\n        return z * ctx.mask"),
            named=True),
    Mistake("FusedLinearReLU", "forgets the ReLU in backward",
            "grad_x is the plain linear layer's, grad_output @ weight, as if there were no ReLU",
            _fused("        x, weight, mask = ctx.saved_tensors\n        g = grad_output\n"
                   "        g2 = g.reshape(-1, weight.shape[0])\n"
                   "        x2 = x.reshape(-1, weight.shape[1])\n" + FUSED_RETURN), nbgrader=True),
    Mistake("FusedLinearReLU", "grad_x = grad_z @ weight.T", "a transpose too many",
            _fused(FUSED_READ.replace("g @ weight", "g @ weight.T")
                   + FUSED_RETURN.replace("g @ weight", "g @ weight.T"))),
    Mistake("FusedLinearReLU", "ignores needs_input_grad",
            "ctx.needs_input_grad[1] is False for weight. Which of your products is for grad_weight",
            _fused(FUSED_READ + "        grad_bias = g2.sum(0) if ctx.has_bias else None\n"
                   "        return g @ weight, g2.T @ x2, grad_bias"), named=True),
    Mistake("FusedLinearReLU", "masks grad_output in place", "backward modified grad_output in "
            "place",
            _fused("        x, weight, mask = ctx.saved_tensors\n        grad_output[~mask] = 0\n"
                   "        g = grad_output\n"
                   "        g2 = g.reshape(-1, weight.shape[0])\n"
                   "        x2 = x.reshape(-1, weight.shape[1])\n" + FUSED_RETURN), named=True),
    Mistake("FusedLinearReLU", "mask z >= 0", "passes grad_output on, and torch.relu passes 0",
            _fused(FUSED_READ + FUSED_RETURN, FUSED_FORWARD.replace("z > 0", "z >= 0")),
            named=True),
    # a mutant (issue 45): the bias gradient computed whether or not bias needs one
    Mistake("FusedLinearReLU", "grad_bias computed whatever needs_input_grad says",
            "FusedLinearReLU.backward returned a gradient for bias",
            _fused(FUSED_READ + FUSED_RETURN.replace("ctx.has_bias and ctx.needs_input_grad[2]",
                                                     "ctx.has_bias"))),
    # a mutant (issue 45): a mask with a threshold loses tiny positive pre-activations
    Mistake("FusedLinearReLU", "mask z > 1e-6",
            "your backward passes no gradient, as a mask with a threshold above 0 does",
            _fused(FUSED_READ + FUSED_RETURN,  # the output masked too
                   edit(FUSED_FORWARD, ("z > 0", "z > 1e-6"),
                        ("return z.clamp(min=0)", "return z * mask")))),
    Mistake("FusedLinearReLU", "grad_x gated on needs_input_grad[1]",
            "it decides whether to compute grad_x from another input's entry of "
            "ctx.needs_input_grad: which entry is x's?",
            _fused(FUSED_READ + FUSED_RETURN.replace("ctx.needs_input_grad[0]",
                                                     "ctx.needs_input_grad[1]")), named=True),
    Mistake("FusedLinearReLU", "every gradient by broadcasting, needs_input_grad ignored",
            "FusedLinearReLU.backward used the values of x (in aten.mul) when only x requires "
            "grad",
            _fused("        x, weight, mask = ctx.saved_tensors\n"
                   "        grad_output = grad_output * mask\n" + _BROADCAST +
                   "        gb = grad_output.reshape(-1, weight.shape[0]).sum(0) if ctx.has_bias "
                   "else None\n        return gx, gw, gb"), named=True),
    Mistake("FusedLinearReLU", "a float mask",
            "FusedLinearReLU saved a float64 intermediate of shape (4,) (32 bytes) for backward: 8 "
            "bytes per output element where the contract allows the ReLU part one",
            _fused(FUSED_READ.replace("torch.where(mask, grad_output, 0.0)", "grad_output * mask")
                   + FUSED_RETURN,
                   FUSED_FORWARD.replace("mask = z > 0", "mask = (z > 0).to(z.dtype)"))),
    Mistake("FusedLinearReLU", "an int64 mask", "FusedLinearReLU saved an int64 tensor of shape",
            _fused(FUSED_READ.replace("torch.where(mask,", "torch.where(mask > 0,") + FUSED_RETURN,
                   FUSED_FORWARD.replace("mask = z > 0", "mask = (z > 0).long()"))),
    Mistake("FusedLinearReLU", "mask taken before the bias is added", "your gradient for x",
            _fused(FUSED_READ + FUSED_RETURN,
                   "        z = x @ weight.T\n        mask = z > 0\n"
                   "        if bias is not None:\n            z = z + bias\n"
                   "        ctx.save_for_backward(x, weight, mask)\n"
                   "        ctx.has_bias = bias is not None\n        return z.clamp(min=0)")),
    Mistake("FusedLinearReLU", "no mask saved: the pre-activation recomputed in backward",
            "FusedLinearReLU saved nothing for the ReLU part of backward besides its inputs",
            _fused("        x, weight, bias = ctx.saved_tensors\n"
                   "        z = x @ weight.T\n"
                   "        if bias is not None:\n            z = z + bias\n"
                   "        g = grad_output * (z > 0)\n"
                   "        g2 = g.reshape(-1, weight.shape[0])\n"
                   "        x2 = x.reshape(-1, weight.shape[1])\n" + FUSED_RETURN,
                   "        ctx.save_for_backward(x, weight, bias)\n"
                   "        ctx.has_bias = bias is not None\n"
                   "        return torch.relu(F.linear(x, weight, bias))")),
    Mistake("FusedLinearReLU", "grad_bias summed over dims range(ndim - 1): dim=() for 1-D x",
            _ONE_D,
            _fused(FUSED_READ + FUSED_RETURN.replace(
                "g2.sum(0)", f"g.sum({_LEADING.replace('grad_output', 'g')})"))),
    Mistake("FusedLinearReLU", "saves weight only when weight needs a gradient",
            "with only x requiring grad, your forward did not save weight, and grad_x reads it",
            _fused(FUSED_READ.replace("x.reshape(-1, weight.shape[1])", "x.reshape(-1, x.shape[-1])")
                   .replace("g.reshape(-1, weight.shape[0])", "g.reshape(-1, g.shape[-1])")
                   + FUSED_RETURN,
                   FUSED_FORWARD.replace("ctx.save_for_backward(x, weight, mask)",
                                         "ctx.save_for_backward(x, weight if "
                                         "ctx.needs_input_grad[1] else None, mask)"))),
    # the mask applied to grad_weight and grad_bias, grad_x from the raw grad_output (review
    # of lesson 02, F8)
    Mistake("FusedLinearReLU", "the mask missing from grad_x only",
            "grad_x is the plain linear layer's, grad_output @ weight, as if there were no ReLU",
            _fused(FUSED_READ + FUSED_RETURN.replace("grad_x = g @ weight",
                                                     "grad_x = grad_output @ weight"))),
    # as MyLinearFunction's: (G.mT @ x).sum(0) leaves (1, out, in) for x of leading shape
    # (2, 1, 3), which the engine sums (review of lesson 02, F9)
    Mistake("FusedLinearReLU", "x flattened as x.reshape(rows, -1)",
            "FusedLinearReLU fails for an empty batch, x of shape (0, 3)",
            _fused(FUSED_READ.replace("x.reshape(-1, weight.shape[1])",
                                      "x.reshape(g2.shape[0], -1)") + FUSED_RETURN), named=True),
]

# correct since issue 67: rule 2 of the Function contract accepts a gradient the engine sums
UNUSUAL.append(Unusual("FusedLinearReLU", "grad_weight as (G.mT @ x).sum(0) past 2-D: a leading dim left for 4-D x",
        _fused("        x, weight, mask = ctx.saved_tensors\n"
                   "        g = grad_output * mask\n"
                   "        grad_x = grad_weight = grad_bias = None\n"
                   "        if ctx.needs_input_grad[0]:\n"
                   "            grad_x = g @ weight\n"
                   "        if ctx.needs_input_grad[1]:\n"
                   "            if x.dim() == 1:\n"
                   "                grad_weight = torch.outer(g, x)\n"
                   "            elif x.dim() == 2:\n"
                   "                grad_weight = g.T @ x\n"
                   "            else:\n"
                   "                grad_weight = (g.mT @ x).sum(0)\n"
                   "        if ctx.has_bias and ctx.needs_input_grad[2]:\n"
                   "            grad_bias = g.reshape(-1, g.shape[-1]).sum(0)\n" + _RETURN)))
