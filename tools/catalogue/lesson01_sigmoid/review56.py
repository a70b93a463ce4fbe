"""Lesson 01, review 56: an alias of the output saved in place of the output itself
(y.detach(), a flattened y, y where forward returns y.view_as(x); for MySigmoid, Softplus
and MyReLU, on every call or past 65536 entries only), PyTorch's sigmoid reached through
F.glu and F.silu, MyReLU's gradient as a product grad_output * mask (nan where grad_output is
infinite and x <= 0; in every dtype of the contract), and the review's unusual answers."""

from .. import Mistake, Unusual, edit
from .answers import FROM_Y, SAVE_Y, SOFTPLUS_STABLE, STABLE, _relu, _sigmoid, _softplus

SIGMOID = _sigmoid(STABLE + SAVE_Y, FROM_Y)
MASK = _relu("        m = x > 0\n        ctx.save_for_backward(m)\n        return x.clamp(min=0)",
             "        m, = ctx.saved_tensors\n        return torch.where(m, grad_output, 0)")
SAVED_Y = "        ctx.save_for_backward(y)\n"
ALIAS = "saved an alias of its output y, not y itself"
PRODUCT = "a product of grad_output and a 0 gives nan"

UNUSUAL = [
    Unusual("MySigmoid", "per-sign forward, backward marked once_differentiable",
            edit(SIGMOID, ("    def backward(", "    @torch.autograd.function.once_differentiable\n"
                                                "    def backward("))),
    Unusual("MyReLU", "bool mask saved only when ctx.needs_input_grad[0]",
            edit(MASK, ("        ctx.save_for_backward(m)\n",
                        "        if ctx.needs_input_grad[0]:\n"
                        "            ctx.save_for_backward(m)\n"))),
    Unusual("MyReLU", "forward x * m (-0.0 where x < 0), torch.where backward",
            edit(MASK, ("        return x.clamp(min=0)", "        return x * m"))),
]

MISTAKES = [
    Mistake("MySigmoid", "saves y.detach()", ALIAS,
            edit(SIGMOID, (SAVED_Y, "        ctx.save_for_backward(y.detach())\n"))),
    Mistake("MySigmoid", "saves the flat y of x.reshape(-1), returns y reshaped", ALIAS,
            edit(SIGMOID, ("        z = torch.exp(-x.abs())\n",
                           "        shape, x = x.shape, x.reshape(-1)\n"
                           "        z = torch.exp(-x.abs())\n"),
                 ("        return y", "        return y.reshape(shape)"),
                 ("        return grad_output * y * (1 - y)",
                  "        return grad_output * (y * (1 - y)).reshape(grad_output.shape)"))),
    Mistake("MySigmoid", "saves y, returns y.view_as(x)", ALIAS,
            edit(SIGMOID, ("        return y", "        return y.view_as(x)"))),
    Mistake("MySigmoid", "saves y.detach() past 65536 entries, y below", ALIAS,
            edit(SIGMOID, (SAVED_Y, "        ctx.save_for_backward(y.detach() if x.numel() > "
                                    "65536 else y)\n"))),
    Mistake("MySigmoid", "F.glu of [1, x]: PyTorch's sigmoid kernel", "(aten.glu",
            edit(SIGMOID, (STABLE, "        y = torch.nn.functional.glu(torch.stack("
                                   "[torch.ones_like(x), x]), dim=0)[0]\n"))),
    Mistake("MySigmoid", "F.silu(x) / x, 0.5 at x = 0", "(aten.silu",
            edit(SIGMOID, (STABLE, "        y = torch.where(x == 0, 0.5, torch.nn.functional."
                                   "silu(x) / x)\n"))),
    Mistake("Softplus", "saves y.detach()", "Softplus " + ALIAS,
            edit(_softplus(SOFTPLUS_STABLE + SAVE_Y),
                 (SAVED_Y, "        ctx.save_for_backward(y.detach())\n"))),
    Mistake("MyReLU", "saves y.detach(), masks with torch.where(y > 0)", "MyReLU " + ALIAS,
            _relu("        y = x.clamp(min=0)\n        ctx.save_for_backward(y.detach())\n"
                  "        return y",
                  "        y, = ctx.saved_tensors\n        return torch.where(y > 0, grad_output, 0)")),
    Mistake("MyReLU", "bool mask, backward grad_output * mask", PRODUCT,
            edit(MASK, ("torch.where(m, grad_output, 0)", "grad_output * m"))),
    Mistake("MyReLU", "saves the output, masks with grad_output * (y > 0)", PRODUCT,
            _relu("        y = x.clamp(min=0)\n        ctx.save_for_backward(y)\n        return y",
                  "        y, = ctx.saved_tensors\n        return grad_output * (y > 0)")),
    # the clause's other dtypes: a product in float16 alone
    Mistake("MyReLU", "torch.where, but grad_output * mask in float16", "(float16)",
            edit(MASK, ("        return torch.where(m, grad_output, 0)",
                        "        if grad_output.dtype == torch.float16:\n"
                        "            return grad_output * m\n"
                        "        return torch.where(m, grad_output, 0)"))),
]
