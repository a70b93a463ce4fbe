"""Lesson 02: a backward that counts its inputs by whether a bias was given: apply(x, weight)
has two inputs, but apply(x, weight, None) has three, and backward must return a value (None)
for each (a fresh review's answers, which passed while grading tried only the first call; the
first was catalogued as an unusual correct answer until then)."""

from .. import Mistake

HINT = "backward returned 2 gradients for 3 inputs: bias gets no gradient"

MISTAKES = [
    Mistake("MyLinearFunction", "two gradients returned when there is no bias", HINT, """
class MyLinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        ctx.save_for_backward(x if ctx.needs_input_grad[1] else None,
                              weight if ctx.needs_input_grad[0] else None)
        ctx.has_bias = bias is not None
        y = x @ weight.T
        return y + bias if bias is not None else y

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        g2 = grad_output.reshape(-1, grad_output.shape[-1])
        gx = gw = None
        if ctx.needs_input_grad[0]:
            gx = grad_output @ weight
        if ctx.needs_input_grad[1]:
            gw = g2.T @ x.reshape(-1, x.shape[-1])
        if not ctx.has_bias:
            return gx, gw  # no bias, no third gradient
        return gx, gw, (g2.sum(0) if ctx.needs_input_grad[2] else None)
"""),
    Mistake("FusedLinearReLU", "two gradients returned when there is no bias", HINT, """
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
        out_features = grad_output.shape[-1]
        grad_z = torch.where(positive, grad_output, 0)
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_z @ weight
        if ctx.needs_input_grad[1]:
            grad_weight = grad_z.reshape(-1, out_features).T @ x.reshape(-1, x.shape[-1])
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_bias = grad_z.reshape(-1, out_features).sum(dim=0)
        if not ctx.has_bias:
            return grad_x, grad_weight  # no bias, no third gradient
        return grad_x, grad_weight, grad_bias
"""),
    Mistake("Bilinear", "three gradients returned when there is no bias",
            "backward returned 3 gradients for 4 inputs: bias gets no gradient", """
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
        if not ctx.has_bias:
            return grad_x1, grad_x2, grad_weight  # no bias, no fourth gradient
        return grad_x1, grad_x2, grad_weight, grad_bias
"""),
]
