"""Lesson 02 answers that only the checks generated from the contract's domain separate: a view
that assumes the input's memory is contiguous, which every contiguous test tensor allows; a bias
flag in a module global, which one call at a time never shows; a bias gradient summed into a
float32 tensor, which float64's tolerance hides."""

from .. import Mistake, edit

# x of any layout: a transposed batch (x.mT of a contiguous tensor) has no flat view
VIEW_OF_X = """
class MyLinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        y = x.view(-1, x.shape[-1]) @ weight.T
        if bias is not None:
            y = y + bias
        return y.view(*x.shape[:-1], weight.shape[0])

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        g2 = grad_output.reshape(-1, weight.shape[0])
        grad_x = (g2 @ weight).reshape(x.shape) if ctx.needs_input_grad[0] else None
        grad_w = g2.T @ x.reshape(-1, x.shape[-1]) if ctx.needs_input_grad[1] else None
        grad_b = g2.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] else None
        return grad_x, grad_w, grad_b
"""

MISTAKES = [
    Mistake("MyLinearFunction", "x flattened with .view, which a transposed x refuses",
            "MyLinearFunction.forward raised RuntimeError with x of shape (2, 3, 4), weight of "
            "shape (5, 4), bias of shape (5,): view size is not compatible", VIEW_OF_X),
    Mistake("MyLinearFunction", "the bias flag in a module global",
            "two calls in one graph",
            edit(VIEW_OF_X, ("class MyLinearFunction", "HAS_BIAS = False\n\n\nclass MyLinearFunction"),
                 ("        ctx.has_bias = bias is not None\n",
                  "        global HAS_BIAS\n        HAS_BIAS = bias is not None\n"),
                 ("x.view(-1, x.shape[-1])", "x.reshape(-1, x.shape[-1])"),
                 ("y.view(", "y.reshape("), ("ctx.has_bias and", "HAS_BIAS and"))),
    Mistake("MyLinearFunction", "the bias gradient summed into torch.zeros (float32)",
            "every value of grad_bias is exactly a float32 number",
            edit(VIEW_OF_X, ("x.view(-1, x.shape[-1])", "x.reshape(-1, x.shape[-1])"),
                 ("y.view(", "y.reshape("),
                 ("        grad_b = g2.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] else None\n",
                  "        grad_b = None\n        if ctx.has_bias and ctx.needs_input_grad[2]:\n"
                  "            grad_b = torch.zeros(weight.shape[0], device=weight.device)\n"
                  "            for row in g2:\n                grad_b += row\n"))),
    # from the third review of lesson 02: .view on what forward saved, in backward
    Mistake("MyLinearFunction", "the saved x flattened with .view in backward",
            "MyLinearFunction.backward raised RuntimeError with x of shape (2, 3, 4)", """
class MyLinearFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        n = ctx.needs_input_grad
        ctx.save_for_backward(x if n[1] else None, weight if n[0] else None)
        ctx.has_bias = bias is not None
        y = x @ weight.T
        return y + bias if bias is not None else y

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        g2 = grad_output.reshape(-1, grad_output.shape[-1])
        gx = gw = gb = None
        if ctx.needs_input_grad[0]:
            gx = grad_output @ weight
        if ctx.needs_input_grad[1]:
            gw = g2.T @ x.view(-1, x.shape[-1])  # view: x is "my own input, contiguous"
        if ctx.has_bias and ctx.needs_input_grad[2]:
            gb = g2.sum(0)
        return gx, gw, gb
"""),
    Mistake("Bilinear", "the saved x1 and x2 flattened with .view",
            "Bilinear.backward raised RuntimeError with x1 of shape (2, 4, 3)", """
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
        n = ctx.needs_input_grad
        out, n1, n2 = weight.shape
        g = grad_output.reshape(-1, out)
        g1 = g2 = gW = gb = None
        if n[0]:
            g1 = torch.einsum("...o,oij,...j->...i", grad_output, weight, x2)
        if n[1]:
            g2 = torch.einsum("...o,oij,...i->...j", grad_output, weight, x1)
        if n[2]:
            a, b = x1.view(-1, n1), x2.view(-1, n2)
            outer = (a[:, :, None] * b[:, None, :]).reshape(-1, n1 * n2)   # (P, n1*n2)
            gW = (g.T @ outer).reshape(out, n1, n2)
        if ctx.has_bias and n[3]:
            gb = g.sum(0)
        return g1, g2, gW, gb
"""),
]
