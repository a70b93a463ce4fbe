"""Lesson 02: a backward that returns None for every input when grad_output is all zeros ("no
signal: skip the products"): rule 2 gives each input that requires grad a tensor, zeros here
(with None, torch.autograd.grad raises and .grad stays None, so an optimiser's weight decay
skips the weight). A fresh review's answers, which passed in all three exercises."""

from .. import Mistake

HINT = "returned None for x, which requires grad, with a grad_output of zeros"
SHORTCUT = ("        if grad_output.numel() and not grad_output.any():  # nothing flows back\n"
            "            return {nones}\n")

MISTAKES = [
    Mistake("MyLinearFunction", "None for every input when grad_output is all zeros", HINT, """
class MyLinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        needs_x, needs_weight = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        ctx.save_for_backward(x if needs_weight else None, weight if needs_x else None)
        ctx.has_bias = bias is not None
        y = x @ weight.T
        return y + bias if bias is not None else y

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
""" + SHORTCUT.format(nones="None, None, None") + """\
        g2 = grad_output.reshape(-1, grad_output.shape[-1])
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_output @ weight
        if ctx.needs_input_grad[1]:
            grad_weight = g2.T @ x.reshape(-1, x.shape[-1])
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_bias = g2.sum(dim=0)
        return grad_x, grad_weight, grad_bias
"""),
    Mistake("FusedLinearReLU", "None for every input when grad_output is all zeros", HINT, """
class FusedLinearReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        z = x @ weight.T
        if bias is not None:
            z = z + bias
        positive = z > 0
        needs_x, needs_weight = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        ctx.save_for_backward(x if needs_weight else None, weight if needs_x else None, positive)
        ctx.has_bias = bias is not None
        return z.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, positive = ctx.saved_tensors
""" + SHORTCUT.format(nones="None, None, None") + """\
        out_features = grad_output.shape[-1]
        grad_z = torch.where(positive, grad_output, 0)
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_z @ weight
        if ctx.needs_input_grad[1]:
            grad_weight = grad_z.reshape(-1, out_features).T @ x.reshape(-1, x.shape[-1])
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_bias = grad_z.reshape(-1, out_features).sum(dim=0)
        return grad_x, grad_weight, grad_bias
"""),
    Mistake("Bilinear", "None for every input when grad_output is all zeros",
            "returned None for x1, which requires grad, with a grad_output of zeros", """
class Bilinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, weight, bias=None):
        ctx.save_for_backward(x1, x2, weight)
        ctx.has_bias = bias is not None
        y = torch.einsum("...i,oij,...j->...o", x1, weight, x2)
        return y + bias if bias is not None else y

    @staticmethod
    def backward(ctx, grad_output):
        x1, x2, weight = ctx.saved_tensors
""" + SHORTCUT.format(nones="None, None, None, None") + """\
        needs = ctx.needs_input_grad
        grad_x1 = grad_x2 = grad_weight = grad_bias = None
        if needs[0]:
            grad_x1 = torch.einsum("...o,oij,...j->...i", grad_output, weight, x2)
        if needs[1]:
            grad_x2 = torch.einsum("...i,oij,...o->...j", x1, weight, grad_output)
        if needs[2]:
            grad_weight = torch.einsum("...i,...o,...j->oij", x1, grad_output, x2)
        if ctx.has_bias and needs[3]:
            grad_bias = grad_output.reshape(-1, weight.shape[0]).sum(dim=0)
        return grad_x1, grad_x2, grad_weight, grad_bias
"""),
]
