"""Lesson 02 (linear), round 4: 1-D x, where a sum over no leading dimension sums the features
(``sum(dim=())`` sums every dimension on torch 2.13), and forwards that save only what the
wanted gradients read."""

from tools.catalogue import Mistake, Unusual
from tools.catalogue.lesson02 import (FLAT, FUSED_FORWARD, FUSED_READ, FUSED_RETURN, GUARDED,
                                      _fused, _linear)

_LEADING = "dim=tuple(range(grad_output.dim() - 1))"
_RETURN = "        return grad_x, grad_weight, grad_bias"
_ONE_D = ("with no leading dimension, your sum over the leading dimensions summed the output "
          "features")

# a backward that reads every shape from grad_output and the tensors it is about to use
_SHAPES_FROM_G = ("        x, weight = ctx.saved_tensors\n        n = ctx.needs_input_grad\n"
                  "        g2 = grad_output.reshape(-1, grad_output.shape[-1])\n"
                  "        grad_x = grad_output @ weight if n[0] else None\n"
                  "        grad_weight = g2.T @ x.reshape(-1, x.shape[-1]) if n[1] else None\n"
                  "        grad_bias = g2.sum(0) if ctx.has_bias and n[2] else None\n" + _RETURN)

MISTAKES = [
    Mistake("MyLinearFunction", "grad_bias summed over dims range(ndim - 1): dim=() for 1-D x",
            _ONE_D,
            _linear(FLAT + GUARDED + f"        grad_bias = grad_output.sum({_LEADING}) if "
                    "ctx.has_bias and ctx.needs_input_grad[2] else None\n" + _RETURN),
            named=True),
    Mistake("FusedLinearReLU", "grad_bias summed over dims range(ndim - 1): dim=() for 1-D x",
            _ONE_D,
            _fused(FUSED_READ + FUSED_RETURN.replace(
                "g2.sum(0)", f"g.sum({_LEADING.replace('grad_output', 'g')})"))),
    Mistake("MyLinearFunction", "saves x only when x needs a gradient (the reads swapped)",
            "with only x requiring grad, your forward did not save weight, and grad_x reads it",
            _linear(_SHAPES_FROM_G, "        ctx.save_for_backward(x if ctx.needs_input_grad[0] else None,\n"
                    "                              weight if ctx.needs_input_grad[1] else None)\n"
                    "        ctx.has_bias = bias is not None\n"
                    "        return F.linear(x, weight, bias)")),
]

UNUSUAL = [
    Unusual("MyLinearFunction", "grad_bias summed over the leading dims, 1-D x handled apart",
            _linear(FLAT + GUARDED + f"        grad_bias = None\n"
                    "        if ctx.has_bias and ctx.needs_input_grad[2]:\n"
                    f"            grad_bias = (grad_output.sum({_LEADING}) if grad_output.dim() > 1"
                    "\n                         else grad_output)\n" + _RETURN)),
    Unusual("MyLinearFunction", "saves conditionally, shapes read from grad_output",
            _linear(_SHAPES_FROM_G,
                    "        ctx.save_for_backward(x if ctx.needs_input_grad[1] else None,\n"
                    "                              weight if ctx.needs_input_grad[0] else None)\n"
                    "        ctx.has_bias = bias is not None\n"
                    "        y = x @ weight.T\n"
                    "        return y + bias if bias is not None else y")),
]

MISTAKES += [
    Mistake("FusedLinearReLU", "saves weight only when weight needs a gradient",
            "with only x requiring grad, your forward did not save weight, and grad_x reads it",
            _fused(FUSED_READ.replace("x.reshape(-1, weight.shape[1])", "x.reshape(-1, x.shape[-1])")
                   .replace("g.reshape(-1, weight.shape[0])", "g.reshape(-1, g.shape[-1])")
                   + FUSED_RETURN,
                   FUSED_FORWARD.replace("ctx.save_for_backward(x, weight, mask)",
                                         "ctx.save_for_backward(x, weight if "
                                         "ctx.needs_input_grad[1] else None, mask)"))),
]

UNUSUAL += [
    Unusual("FusedLinearReLU", "a contiguous weight.T and x saved only when they will be read",
            _fused("        x, weight_t, mask = ctx.saved_tensors\n        n = ctx.needs_input_grad\n"
                   "        g = grad_output * mask\n        g2 = g.reshape(-1, g.shape[-1])\n"
                   "        grad_x = g @ weight_t.T if n[0] else None\n"
                   "        grad_weight = g2.T @ x.reshape(-1, x.shape[-1]) if n[1] else None\n"
                   "        grad_bias = g2.sum(0) if ctx.has_bias and n[2] else None\n" + _RETURN,
                   "        z = F.linear(x, weight, bias)\n        mask = z > 0\n"
                   "        ctx.save_for_backward(x if ctx.needs_input_grad[1] else None,\n"
                   "                              weight.T.contiguous() if ctx.needs_input_grad[0]"
                   " else None, mask)\n"
                   "        ctx.has_bias = bias is not None\n        return torch.relu(z)")),
]

MISTAKES += [
    Mistake("MyLinearFunction", "saves conditionally, backward still reshapes x and reads weight.shape",
            "with only x requiring grad, your forward saved None in place of x, as it may",
            _linear(FLAT + GUARDED + "        grad_bias = g2.sum(0) if ctx.has_bias and "
                    "ctx.needs_input_grad[2] else None\n" + _RETURN,
                    "        ctx.save_for_backward(x if ctx.needs_input_grad[1] else None,\n"
                    "                              weight if ctx.needs_input_grad[0] else None)\n"
                    "        ctx.has_bias = bias is not None\n"
                    "        return F.linear(x, weight, bias)"), named=True),
]
MISTAKES += [
    Mistake("MyLinearFunction", "saves conditionally, backward reads weight.shape for g2",
            "with only weight requiring grad, your forward saved None in place of weight",
            _linear("        x, weight = ctx.saved_tensors\n"
                    "        g2 = grad_output.reshape(-1, weight.shape[0])\n"
                    + GUARDED.replace("g2.T @ x2", "g2.T @ x.reshape(-1, x.shape[-1])")
                    + "        grad_bias = g2.sum(0) if ctx.has_bias and "
                    "ctx.needs_input_grad[2] else None\n" + _RETURN,
                    "        ctx.save_for_backward(x if ctx.needs_input_grad[1] else None,\n"
                    "                              weight if ctx.needs_input_grad[0] else None)\n"
                    "        ctx.has_bias = bias is not None\n"
                    "        return F.linear(x, weight, bias)")),
]
