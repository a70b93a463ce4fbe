"""Lesson 02 (linear): MyLinearFunction and FusedLinearReLU, answered unusually and wrongly."""

from tools.catalogue import Mistake, Unusual


def _linear(backward: str, forward: str | None = None, name: str = "MyLinearFunction") -> str:
    forward = forward or ("        ctx.save_for_backward(x, weight)\n"
                          "        ctx.has_bias = bias is not None\n"
                          "        y = x @ weight.T\n"
                          "        return y + bias if bias is not None else y")
    return f"""
class {name}(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
{forward}

    @staticmethod
    def backward(ctx, grad_output):
{backward}
"""


FLAT = ("        x, weight = ctx.saved_tensors\n"
        "        g2 = grad_output.reshape(-1, weight.shape[0])\n"
        "        x2 = x.reshape(-1, weight.shape[1])\n")
GUARDED = ("        grad_x = grad_output @ weight if ctx.needs_input_grad[0] else None\n"
           "        grad_weight = g2.T @ x2 if ctx.needs_input_grad[1] else None\n")


def _linear_with(grad_x: str, grad_weight: str, grad_bias: str) -> str:
    return _linear(FLAT + f"        grad_x = {grad_x}\n        grad_weight = {grad_weight}\n"
                   f"        grad_bias = {grad_bias}\n"
                   "        return grad_x, grad_weight, grad_bias")


BIAS = "g2.sum(0) if ctx.has_bias else None"

FUSED_FORWARD = ("        z = x @ weight.T\n        if bias is not None:\n            z = z + bias\n"
                 "        mask = z > 0\n        ctx.save_for_backward(x, weight, mask)\n"
                 "        ctx.has_bias = bias is not None\n        return z * mask")
FUSED_READ = ("        x, weight, mask = ctx.saved_tensors\n        g = grad_output * mask\n"
              "        g2 = g.reshape(-1, weight.shape[0])\n"
              "        x2 = x.reshape(-1, weight.shape[1])\n")


def _fused(backward: str, forward: str = FUSED_FORWARD) -> str:
    return _linear(backward, forward, name="FusedLinearReLU")


FUSED_RETURN = ("        grad_x = g @ weight if ctx.needs_input_grad[0] else None\n"
                "        grad_weight = g2.T @ x2 if ctx.needs_input_grad[1] else None\n"
                "        grad_bias = g2.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] "
                "else None\n        return grad_x, grad_weight, grad_bias")

UNUSUAL = [
    Unusual("MyLinearFunction", "einsum forward and backward",
            _linear(FLAT + "        grad_x = torch.einsum('...o,oi->...i', grad_output, weight) "
                    "if ctx.needs_input_grad[0] else None\n"
                    "        grad_weight = torch.einsum('mo,mi->oi', g2, x2) "
                    "if ctx.needs_input_grad[1] else None\n"
                    "        grad_bias = torch.einsum('mo->o', g2) if ctx.has_bias and "
                    "ctx.needs_input_grad[2] else None\n"
                    "        return grad_x, grad_weight, grad_bias",
                    "        ctx.save_for_backward(x, weight)\n"
                    "        ctx.has_bias = bias is not None\n"
                    "        y = torch.einsum('...i,oi->...o', x, weight)\n"
                    "        return y if bias is None else y + bias")),
    Unusual("MyLinearFunction", "addmm forward on the flattened input, tensordot grad_weight",
            _linear(FLAT + "        grad_x = (g2 @ weight).reshape(x.shape) if "
                    "ctx.needs_input_grad[0] else None\n"
                    "        grad_weight = torch.tensordot(g2, x2, dims=([0], [0])) if "
                    "ctx.needs_input_grad[1] else None\n"
                    "        grad_bias = g2.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] "
                    "else None\n        return grad_x, grad_weight, grad_bias",
                    "        ctx.save_for_backward(x, weight)\n"
                    "        ctx.has_bias = bias is not None\n"
                    "        x2 = x.reshape(-1, weight.shape[1])\n"
                    "        if bias is None:\n            y = x2 @ weight.T\n"
                    "        else:\n            y = torch.addmm(bias, x2, weight.T)\n"
                    "        return y.reshape(*x.shape[:-1], weight.shape[0])")),
    Unusual("MyLinearFunction", "grad_bias as new_ones(rows) @ g2",
            _linear(FLAT + GUARDED +
                    "        grad_bias = g2.new_ones(g2.shape[0]) @ g2 if ctx.has_bias and "
                    "ctx.needs_input_grad[2] else None\n"
                    "        return grad_x, grad_weight, grad_bias")),
    Unusual("MyLinearFunction", "grad_bias left unreduced for the engine to sum",
            _linear(FLAT + GUARDED + "        grad_bias = grad_output.clone() if ctx.has_bias "
                    "and ctx.needs_input_grad[2] else None\n"
                    "        return grad_x, grad_weight, grad_bias")),
    Unusual("MyLinearFunction", "returns only two values without a bias",
            _linear(FLAT + GUARDED + "        if not ctx.has_bias:\n"
                    "            return grad_x, grad_weight\n"
                    "        return grad_x, grad_weight, g2.sum(0) if ctx.needs_input_grad[2] "
                    "else None")),
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
                   "        g = grad_output.reshape(-1, weight.shape[0]) * mask\n"
                   "        grad_x = (g @ weight).reshape(ctx.x_shape) if "
                   "ctx.needs_input_grad[0] else None\n"
                   "        grad_weight = g.T @ rows if ctx.needs_input_grad[1] else None\n"
                   "        grad_bias = g.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] "
                   "else None\n        return grad_x, grad_weight, grad_bias",
                   "        rows = x.reshape(-1, weight.shape[1])\n        z = rows @ weight.T\n"
                   "        if bias is not None:\n            z = z + bias\n"
                   "        mask = z > 0\n        ctx.save_for_backward(rows, weight, mask)\n"
                   "        ctx.has_bias, ctx.x_shape = bias is not None, x.shape\n"
                   "        return (z * mask).reshape(*x.shape[:-1], weight.shape[0])")),
    Unusual("FusedLinearReLU", "einsum everywhere, bias gradient by new_ones @ g2",
            _fused(FUSED_READ +
                   "        grad_x = torch.einsum('...o,oi->...i', g, weight) if "
                   "ctx.needs_input_grad[0] else None\n"
                   "        grad_weight = torch.einsum('mo,mi->oi', g2, x2) if "
                   "ctx.needs_input_grad[1] else None\n"
                   "        grad_bias = g2.new_ones(g2.shape[0]) @ g2 if ctx.has_bias and "
                   "ctx.needs_input_grad[2] else None\n"
                   "        return grad_x, grad_weight, grad_bias")),
]

_NO_GUARD = (FLAT + "        grad_bias = g2.sum(0) if ctx.has_bias else None\n"
             "        return grad_output @ weight, g2.T @ x2, grad_bias")

MISTAKES = [
    Mistake("MyLinearFunction", "grad_x = grad_output @ weight.T",
            "grad_x = grad_output @ weight.T is wrong, a transpose too many",
            _linear(FLAT + "        grad_bias = g2.sum(0) if ctx.has_bias else None\n"
                    "        return grad_output @ weight.T, g2.T @ x2, grad_bias"), named=True),
    Mistake("MyLinearFunction", "grad_x as (grad_output @ weight).mT", "a transpose",
            # as tools.submissions has handed it to the end-to-end nbgrader test since lesson 02
            _linear(FLAT + "        grad_x = (grad_output @ weight).mT\n"
                    "        grad_weight = g2.T @ x2\n"
                    "        grad_bias = g2.sum(0) if ctx.has_bias else None\n"
                    "        return grad_x, grad_weight, grad_bias"), nbgrader=True),
    Mistake("MyLinearFunction", "grad_weight = x.T @ grad_output",
            "grad_weight has shape (3, 4) but weight has shape (4, 3): a transpose?",
            _linear(FLAT + "        grad_bias = g2.sum(0) if ctx.has_bias else None\n"
                    "        return grad_output @ weight, x2.T @ g2, grad_bias")),
    Mistake("MyLinearFunction", "ignores needs_input_grad",
            "ctx.needs_input_grad[1] is False for weight, so skip grad_weight", _linear(_NO_GUARD),
            named=True),
    Mistake("MyLinearFunction", "2-D only, as in PyTorch's docs",
            "but works for 2-D x: flatten the leading dimensions first",
            _linear("        x, weight = ctx.saved_tensors\n"
                    "        grad_x = grad_output.mm(weight) if ctx.needs_input_grad[0] else None\n"
                    "        grad_weight = grad_output.t().mm(x) if ctx.needs_input_grad[1] "
                    "else None\n"
                    "        grad_bias = grad_output.sum(0) if ctx.has_bias and "
                    "ctx.needs_input_grad[2] else None\n"
                    "        return grad_x, grad_weight, grad_bias"), named=True),
    Mistake("MyLinearFunction", "unflattened grad_output.T @ x",
            "MyLinearFunction.backward fails for x of shape (3,) but works for 2-D x: flatten "
            "the leading dimensions first",
            _linear("        x, weight = ctx.saved_tensors\n" + GUARDED.replace("g2.T @ x2",
                    "grad_output.T @ x") + "        grad_bias = grad_output.reshape(-1, "
                    "weight.shape[0]).sum(0) if ctx.has_bias and ctx.needs_input_grad[2] "
                    "else None\n        return grad_x, grad_weight, grad_bias"), named=True),
    Mistake("MyLinearFunction", "bias gradient summed over dim 0 only",
            "grad_bias has shape () but bias has shape (4,)",
            _linear(FLAT + GUARDED + "        grad_bias = grad_output.sum(0) if ctx.has_bias "
                    "and ctx.needs_input_grad[2] else None\n"
                    "        return grad_x, grad_weight, grad_bias"), named=True),
    Mistake("MyLinearFunction", "needs_input_grad[2] read without a bias",
            "ctx.needs_input_grad has one entry per argument actually passed",
            _linear(FLAT + GUARDED + "        grad_bias = g2.sum(0) if ctx.needs_input_grad[2] "
                    "else None\n        return grad_x, grad_weight, grad_bias"), named=True),
    Mistake("MyLinearFunction", "+ bias with no bias=None path",
            "MyLinearFunction.forward fails for bias=None",
            _linear(FLAT + GUARDED + "        grad_bias = g2.sum(0) if ctx.needs_input_grad[2] "
                    "else None\n        return grad_x, grad_weight, grad_bias",
                    "        ctx.save_for_backward(x, weight)\n"
                    "        return x @ weight.T + bias")),
    Mistake("MyLinearFunction", "tensors kept on ctx", "MyLinearFunction stores a tensor as ctx.x",
            _linear("        grad_x = grad_output @ ctx.weight if ctx.needs_input_grad[0] else "
                    "None\n        g2 = grad_output.reshape(-1, ctx.weight.shape[0])\n"
                    "        grad_weight = g2.T @ ctx.x.reshape(-1, ctx.weight.shape[1]) if "
                    "ctx.needs_input_grad[1] else None\n"
                    "        grad_bias = g2.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] "
                    "else None\n        return grad_x, grad_weight, grad_bias",
                    "        ctx.x, ctx.weight = x, weight\n"
                    "        ctx.has_bias = bias is not None\n"
                    "        y = x @ weight.T\n"
                    "        return y + bias if bias is not None else y")),
    Mistake("FusedLinearReLU", "saves the float pre-activation",
            "FusedLinearReLU saved a float64 intermediate of shape",
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
    Mistake("FusedLinearReLU", "forgets the ReLU in backward", "your gradient for x is wrong",
            _fused("        x, weight, mask = ctx.saved_tensors\n        g = grad_output\n"
                   "        g2 = g.reshape(-1, weight.shape[0])\n"
                   "        x2 = x.reshape(-1, weight.shape[1])\n" + FUSED_RETURN), nbgrader=True),
    Mistake("FusedLinearReLU", "grad_x = grad_z @ weight.T", "a transpose too many",
            _fused(FUSED_READ.replace("g @ weight", "g @ weight.T")
                   + FUSED_RETURN.replace("g @ weight", "g @ weight.T"))),
    Mistake("FusedLinearReLU", "ignores needs_input_grad",
            "ctx.needs_input_grad[1] is False for weight, so skip grad_weight",
            _fused(FUSED_READ + "        grad_bias = g2.sum(0) if ctx.has_bias else None\n"
                   "        return g @ weight, g2.T @ x2, grad_bias"), named=True),
    Mistake("FusedLinearReLU", "masks grad_output in place", "backward modified grad_output in "
            "place",
            _fused("        x, weight, mask = ctx.saved_tensors\n        grad_output[~mask] = 0\n"
                   "        g = grad_output\n"
                   "        g2 = g.reshape(-1, weight.shape[0])\n"
                   "        x2 = x.reshape(-1, weight.shape[1])\n" + FUSED_RETURN), named=True),
    Mistake("MyLinearFunction", "grad_x gated on needs_input_grad[1]",
            "it decides whether to compute grad_x from another input's entry of "
            "ctx.needs_input_grad (entry 0 belongs to x)",
            _linear(FLAT + GUARDED.replace("ctx.needs_input_grad[0]", "ctx.needs_input_grad[1]")
                    + "        grad_bias = g2.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] "
                    "else None\n        return grad_x, grad_weight, grad_bias"), named=True),
    Mistake("MyLinearFunction", "grad_output.view on a non-contiguous grad_output",
            "MyLinearFunction.backward raised RuntimeError",
            _linear(FLAT.replace("grad_output.reshape", "grad_output.view") + GUARDED
                    + "        grad_bias = g2.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] "
                    "else None\n        return grad_x, grad_weight, grad_bias")),
    Mistake("FusedLinearReLU", "mask z >= 0", "the mask is z > 0, not z >= 0",
            _fused(FUSED_READ + FUSED_RETURN, FUSED_FORWARD.replace("z > 0", "z >= 0")),
            named=True),
    Mistake("FusedLinearReLU", "grad_x gated on needs_input_grad[1]",
            "it decides whether to compute grad_x from another input's entry of "
            "ctx.needs_input_grad (entry 0 belongs to x)",
            _fused(FUSED_READ + FUSED_RETURN.replace("ctx.needs_input_grad[0]",
                                                     "ctx.needs_input_grad[1]")), named=True),
]

# Answers from the 2026-11 review: products written without a matmul (which no FLOP count
# sees), tensors saved only for the gradients that will be wanted, and a float copy that is not
# the pre-activation.
_F_LINEAR = ("        ctx.save_for_backward(x, weight)\n"
             "        ctx.has_bias = bias is not None\n"
             "        return F.linear(x, weight, bias)")
_BROADCAST = ("        gx = (grad_output.unsqueeze(-1) * weight).sum(-2)\n"
              "        gw = (grad_output.unsqueeze(-1) * x.unsqueeze(-2)).reshape(-1, *weight.shape)"
              ".sum(0)\n")

UNUSUAL += [
    Unusual("MyLinearFunction", "saves only what the wanted gradients read, unflattened einsum",
            _linear("        x, weight = ctx.saved_tensors\n        n = ctx.needs_input_grad\n"
                    "        gx = grad_output @ weight if n[0] else None\n"
                    "        gw = torch.einsum('...o,...i->oi', grad_output, x) if n[1] else None\n"
                    "        gb = torch.einsum('...o->o', grad_output) if ctx.has_bias and n[2] "
                    "else None\n        return gx, gw, gb",
                    "        ctx.save_for_backward(x if ctx.needs_input_grad[1] else None,\n"
                    "                              weight if ctx.needs_input_grad[0] else None)\n"
                    "        ctx.has_bias = bias is not None\n"
                    "        return F.linear(x, weight, bias)")),
    Unusual("MyLinearFunction", "one product [x, 1] for weight and bias together",
            _linear(FLAT + "        n = ctx.needs_input_grad\n"
                    "        grad_x = grad_output @ weight if n[0] else None\n"
                    "        grad_weight = grad_bias = None\n"
                    "        if ctx.has_bias and n[1] and n[2]:\n"
                    "            both = g2.T @ torch.cat([x2, x2.new_ones(x2.shape[0], 1)], 1)\n"
                    "            grad_weight, grad_bias = both[:, :-1], both[:, -1]\n"
                    "        elif n[1]:\n            grad_weight = g2.T @ x2\n"
                    "        elif ctx.has_bias and n[2]:\n            grad_bias = g2.sum(0)\n"
                    "        return grad_x, grad_weight, grad_bias", _F_LINEAR)),
    Unusual("FusedLinearReLU", "a 'dead' mask z <= 0 and masked_fill",
            _fused(FUSED_READ.replace("mask", "dead").replace("grad_output * dead",
                                                              "grad_output.masked_fill(dead, 0)")
                   + FUSED_RETURN,
                   "        z = x @ weight.T\n        if bias is not None:\n            z += bias\n"
                   "        dead = z <= 0\n        ctx.save_for_backward(x, weight, dead)\n"
                   "        ctx.has_bias = bias is not None\n        return z.masked_fill(dead, 0)")),
    Unusual("FusedLinearReLU", "saves x and weight only for the gradients that read them",
            _fused("        x, weight, mask = ctx.saved_tensors\n        n = ctx.needs_input_grad\n"
                   "        g = grad_output * mask\n        g2 = g.reshape(-1, g.shape[-1])\n"
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
]

MISTAKES += [
    Mistake("MyLinearFunction", "every gradient without a matmul, then None where not needed",
            "MyLinearFunction.backward used the values of x (in aten.mul) when only x requires "
            "grad",
            _linear("        x, weight = ctx.saved_tensors\n" + _BROADCAST +
                    "        gb = grad_output.reshape(-1, weight.shape[0]).sum(0)\n"
                    "        return tuple(g if need else None for g, need in "
                    "zip((gx, gw, gb), ctx.needs_input_grad))", _F_LINEAR), named=True),
    Mistake("FusedLinearReLU", "every gradient by broadcasting, needs_input_grad ignored",
            "FusedLinearReLU.backward used the values of x (in aten.mul) when only x requires "
            "grad",
            _fused("        x, weight, mask = ctx.saved_tensors\n"
                   "        grad_output = grad_output * mask\n" + _BROADCAST +
                   "        gb = grad_output.reshape(-1, weight.shape[0]).sum(0) if ctx.has_bias "
                   "else None\n        return gx, gw, gb"), named=True),
    Mistake("FusedLinearReLU", "a float mask", "FusedLinearReLU saved a float64 intermediate",
            _fused(FUSED_READ + FUSED_RETURN,
                   FUSED_FORWARD.replace("mask = z > 0", "mask = (z > 0).to(z.dtype)"))),
    Mistake("FusedLinearReLU", "a uint8 mask", "FusedLinearReLU saved a uint8 mask",
            _fused(FUSED_READ + FUSED_RETURN,
                   FUSED_FORWARD.replace("mask = z > 0", "mask = (z > 0).to(torch.uint8)"))),
    Mistake("FusedLinearReLU", "mask taken before the bias is added", "your gradient for x",
            _fused(FUSED_READ + FUSED_RETURN,
                   "        z = x @ weight.T\n        mask = z > 0\n"
                   "        if bias is not None:\n            z = z + bias\n"
                   "        ctx.save_for_backward(x, weight, mask)\n"
                   "        ctx.has_bias = bias is not None\n        return z.clamp(min=0)")),
]

MISTAKES += [
    Mistake("MyLinearFunction", "grad_x always computed, returned only when needed",
            "ctx.needs_input_grad[0] is False for x, so skip grad_x",
            _linear(FLAT + "        grad_x = grad_output @ weight\n"
                    "        grad_weight = g2.T @ x2 if ctx.needs_input_grad[1] else None\n"
                    "        grad_bias = g2.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] "
                    "else None\n"
                    "        return grad_x if ctx.needs_input_grad[0] else None, grad_weight, "
                    "grad_bias", _F_LINEAR), named=True),
]
